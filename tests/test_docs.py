"""The docs' own machinery: figures read from their files (`docs/hooks/figures.py`), the command reference from the
parsers (`docs/hooks/commands.py`), and no internal words in what users and contributors read. The docs build itself
(`nox -s docs`, strict) resolves every figure against the cited runs in reports/; these tests use fixtures only."""

import importlib.util
import re
import shutil
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures"


def _hook(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"docs_hook_{name}", ROOT / "docs" / "hooks" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


figures = _hook("figures")


@pytest.fixture
def tpu(tmp_path):
    """A runs table naming the fixture TPU run ``tpu``, beside a copy of it."""
    shutil.copy(FIXTURES / "bench-tpu.json", tmp_path / "bench-tpu.json")
    table = tmp_path / "README.md"
    table.write_text("| name | file | what |\n| --- | --- | --- |\n| `tpu` | `bench-tpu.json` | a TPU run |\n")
    return figures.Figures(table)


def test_a_figure_is_the_value_in_its_file_in_the_projects_units(tpu):
    epoch = '"tpu", "test_epoch[tpu-scan-0-f32]"'
    text = f'scan {{{{ s(median({epoch})) }}}}, {{{{ x(2 / 4) }}}}, {{{{ i(info({epoch}, "flops") / 1e9) }}}}'
    assert tpu.render(text) == "scan 11.0 ms, ×0.500, 194"
    assert tpu.render('{{ rate(floor_rate("tpu", "f32")) }}') == "29.9 TFLOP/s"
    assert tpu.render('{{ s(floor("tpu", "bf16")) }}') == "1.36 ms"  # bf16's FLOPs at bf16's best 2048³ rate


def test_paths_select_slice_and_map(tpu):
    assert tpu.render('{{ get("tpu", "benchmarks/name=test_update[tpu-128-jit]/params/batch_size") }}') == "128"
    assert tpu.render('{{ get("tpu", "benchmarks/?name=test_update[tpu-128-jit]/0/params/variant") }}') == "jit"
    assert tpu.render('{{ i(len(get("tpu", "benchmarks/1:/*/name"))) }}') == str(len(tpu.load("tpu")["benchmarks"]) - 1)


@pytest.mark.parametrize(
    ("expression", "says"),
    [
        ('median("gpu", "x")', "no run named 'gpu'"),
        ('median("tpu", "test_epoch[tpu-seed-0-f32]")', "0 benchmarks named"),
        ('info("tpu", "test_epoch[tpu-scan-0-f32]", "nothing")', "no 'nothing' among"),
        ('__import__("os")', "not a figure expression"),
        ("1 if 2 else 3", "not a figure expression"),
    ],
)
def test_a_figure_its_file_does_not_hold_fails_naming_it(tpu, expression, says):
    with pytest.raises(figures.FigureError, match=re.escape(says)):
        tpu.render("{{ " + expression + " }}", "page.md")


def test_the_runs_table_says_which_pages_cite_each_run(tmp_path):
    shutil.copy(FIXTURES / "bench-tpu.json", tmp_path / "bench-tpu.json")
    table = tmp_path / "README.md"
    table.write_text(
        "| name | file | what | cited by |\n| --- | --- | --- | --- |\n"
        "| `tpu` | `bench-tpu.json` | a TPU run | `docs/results/a.md` |\n"
    )
    pages = figures.Figures(table)
    figure = '{{ s(median("tpu", "test_epoch[tpu-scan-0-f32]")) }}'
    pages.render(figure, "results/a.md", page="results/a.md")
    assert figures.citation_problems(table, pages.used) == []
    pages.render(figure, "results/b.md", page="results/b.md")
    (problem,) = figures.citation_problems(table, pages.used)
    assert "run 'tpu' is cited by ['results/a.md', 'results/b.md'], its row says ['results/a.md']" in problem


def test_the_command_reference_has_every_command_and_subcommand():
    from jaxmlp.cli import COMMANDS

    text = _hook("commands").reference()
    for name in COMMANDS:
        assert f"## `jaxmlp {name}`\n" in text
    assert "#### `jaxmlp sweep bisect`" in text and "usage: jaxmlp sweep bisect" in text


ISSUE_NUMBER = re.compile(r"\bissues? #?\d", re.IGNORECASE)
"""An issue by its number: the text says what it means itself (the history is the git log)."""
DOCUMENT_NAME = re.compile(r"\b[A-Z][A-Z_]+\.md\b")
"""A document named like README.md: one that a page names must be in the repository, not beside it."""


def _machine_path() -> str | None:
    """The folder this checkout lies in on this machine, as a path prefix: no file may name it."""
    return None if ROOT.parent == ROOT.parent.parent else f"{ROOT.parent}/"


def _outside(line: str, shipped: set[str], machine: str | None) -> bool:
    """Whether ``line`` speaks of the place the project was made in rather than of the project."""
    missing = [name for name in DOCUMENT_NAME.findall(line) if name not in shipped]
    return bool(ISSUE_NUMBER.search(line) or missing or (machine and machine in line))


def _read_by_people() -> list[Path]:
    return [
        ROOT / "README.md",
        ROOT / "ARCHITECTURE.md",
        ROOT / "noxfile.py",
        ROOT / "mkdocs.yml",
        ROOT / "reports" / "README.md",
        ROOT / "bench" / "README.md",
        *sorted((ROOT / "docs").rglob("*.md")),
        *(  # the code, its tests and fixtures, and the results they ship (their recorded metadata included)
            path
            for folder in ("jaxmlp", "bench", "tests", "reports")
            for path in sorted((ROOT / folder).rglob("*"))
            if path.suffix in (".py", ".md", ".json", ".jsonl", ".sh", ".txt", ".csv", ".yml")
            and ".nox" not in path.parts
        ),
    ]


def test_no_internal_words_in_what_users_and_contributors_read():
    shipped = {
        p.name for p in ROOT.rglob("*.md") if not any(part.startswith(".") for part in p.relative_to(ROOT).parts)
    }
    machine = _machine_path()
    found = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in _read_by_people()
        if path.is_file()
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if _outside(line, shipped, machine)
    ]
    assert not found, "\n".join(found)
