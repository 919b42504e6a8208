"""The docs' own machinery: figures read from their files (the hook `docs/hooks/figures.py` and the modules beside
it), the command reference from the parsers (`docs/hooks/commands.py`), and no internal words in what users and
contributors read. The docs build itself (`nox -s docs`, strict) resolves every figure against the cited runs in
reports/; these tests use fixtures only."""

import importlib.util
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures"


def _hook(name: str) -> ModuleType:
    """A module of docs/hooks, loaded as MkDocs loads a hook: its folder on the path while it runs (the modules beside
    it are imported by name)."""
    hooks = ROOT / "docs" / "hooks"
    spec = importlib.util.spec_from_file_location(f"docs_hook_{name}", hooks / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    path = sys.path.copy()
    sys.path.insert(0, str(hooks))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = path
    return module


functions = _hook("figure_functions")
runs_table = _hook("runs_table")
readme_blocks = _hook("readme_blocks")


@pytest.fixture
def tpu(tmp_path):
    """A runs table naming the fixture TPU run ``tpu``, beside a copy of it."""
    shutil.copy(FIXTURES / "bench-tpu.json", tmp_path / "bench-tpu.json")
    table = tmp_path / "README.md"
    table.write_text("| name | file | what |\n| --- | --- | --- |\n| `tpu` | `bench-tpu.json` | a TPU run |\n")
    return functions.Figures(table)


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
    with pytest.raises(functions.FigureError, match=re.escape(says)):
        tpu.render("{{ " + expression + " }}", "page.md")


def test_a_results_folder_run_s_table_says_each_goal_as_the_summary_does(tmp_path, tpu):
    import json

    here = tmp_path / "scale"
    here.mkdir()
    doc = json.loads((FIXTURES / "bench-tpu.json").read_text())
    template = doc["benchmarks"][0]
    folder = {"folder_runs": 10_000, "folder_sweeps": 200, "folder_timelines": 50}
    doc["benchmarks"] = [
        {
            **template,
            "group": None,
            "name": f"test_results_folder[{variant}]",
            "fullname": f"bench/bench_scale.py::test_results_folder[{variant}]",
            "params": {"variant": variant},
            "param": variant,
            "extra_info": {
                "command_peak_rss_bytes": 2**29,
                "cold_seconds": 100.0,
                "cold_peak_rss_bytes": 2**29,
                **folder,
            },
            "stats": {**template["stats"], "median": median},
        }
        for variant, median in (("summary", 25.0), ("report", 50.0))
    ]
    (here / "bench-scale.json").write_text(json.dumps(doc))
    table = here / "README.md"
    table.write_text("| name | file | what |\n| --- | --- | --- |\n| `store` | `bench-scale.json` | a scale run |\n")
    rows = functions.Figures(table).render('{{ store_table("store") }}').splitlines()
    assert rows[0].startswith("| command | runs in the folder | median |") and len(rows) == 4
    assert "| jaxmlp summary | 10000 | 25.0 s" in rows[2] and "MISSED: at most 20 s and 1 GiB" in rows[2]
    assert rows[3].count("met: at most") == 2  # the report: 60 s read again, 300 s read first
    with pytest.raises(functions.FigureError, match="no results folder benchmark"):
        tpu.store_table("tpu")


def test_the_runs_table_says_which_pages_cite_each_run(tmp_path):
    shutil.copy(FIXTURES / "bench-tpu.json", tmp_path / "bench-tpu.json")
    table = tmp_path / "README.md"
    table.write_text(
        "| name | file | what | cited by |\n| --- | --- | --- | --- |\n"
        "| `tpu` | `bench-tpu.json` | a TPU run | `docs/results/a.md` |\n"
    )
    pages = functions.Figures(table)
    figure = '{{ s(median("tpu", "test_epoch[tpu-scan-0-f32]")) }}'
    pages.render(figure, "results/a.md", page="results/a.md")
    assert runs_table.citation_problems(table, pages.used) == []
    pages.render(figure, "results/b.md", page="results/b.md")
    (problem,) = runs_table.citation_problems(table, pages.used)
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


def _machine_path(root: Path) -> str | None:
    """The folder this checkout lies in on this machine, as a path prefix: no file may name it (none where that is
    the root or the system's temporary folder, which examples name)."""
    if root.parent == root.parent.parent or root.parent == Path(tempfile.gettempdir()):
        return None
    return f"{root.parent}/"


def _outside(line: str, shipped: set[str], machine: str | None) -> bool:
    """Whether ``line`` speaks of the place the project was made in rather than of the project."""
    missing = [name for name in DOCUMENT_NAME.findall(line) if name not in shipped]
    return bool(ISSUE_NUMBER.search(line) or missing or (machine and machine in line))


GUARDED = (".py", ".md", ".json", ".jsonl", ".sh", ".txt", ".csv", ".yml")
"""The kinds of file people read: code, docs, and the results the repository ships with their metadata."""


def _tracked(root: Path) -> list[Path] | None:
    """The files git tracks in ``root``, or None outside a git checkout: a user's own runs and reports are not the
    project's text."""
    git = shutil.which("git")
    listed = git and subprocess.run([git, "ls-files", "-z"], cwd=root, capture_output=True, timeout=60)
    if not listed or listed.returncode != 0:
        return None
    return [root / name for name in sorted(listed.stdout.decode().split("\0")) if name]


def _read_by_people(root: Path) -> list[Path]:
    """What the repository ships for people to read; outside git, its code and docs and only the runs table of
    reports/ (nothing there tells a shipped run from a user's)."""
    tracked = _tracked(root)
    if tracked is None:
        folders = ("jaxmlp", "bench", "tests", "docs")
        tracked = [root / "reports" / "README.md", *(p for f in folders for p in sorted((root / f).rglob("*")))]
        tracked += sorted(root.glob("*"))
    return [p for p in tracked if p.suffix in GUARDED and p.is_file() and ".nox" not in p.parts]


def _internal_words(root: Path) -> list[str]:
    """Each line of what people read that speaks of the place the project was made in, as ``path:line: text``."""
    files = _read_by_people(root)
    shipped = {p.name for p in files if p.suffix == ".md"}
    machine = _machine_path(root)
    return [
        f"{path.relative_to(root)}:{n}: {line.strip()}"
        for path in files
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if _outside(line, shipped, machine)
    ]


def test_no_internal_words_in_what_users_and_contributors_read():
    found = _internal_words(ROOT)
    assert not found, "\n".join(found)


def test_a_bench_run_and_its_report_in_reports_leave_the_guard_passing(tmp_path, monkeypatch):
    """`nox -s bench` then `nox -s tests`: the run's file and its rendered report (whose results.csv names files by
    their absolute paths) sit untracked in reports/; the guard reads what git tracks, so it still passes."""
    if not shutil.which("git"):
        pytest.skip("git is not installed: the guard then reads no runs but the runs table")
    checkout = tmp_path / "work" / "checkout"
    (checkout / "reports").mkdir(parents=True)
    (checkout / "README.md").write_text("# A project\n")
    (checkout / "reports" / "README.md").write_text("| name | file |\n| --- | --- |\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], cwd=checkout, check=True, timeout=60)
    subprocess.run([*git, "add", "."], cwd=checkout, check=True, timeout=60)
    subprocess.run([*git, "commit", "-qm", "start"], cwd=checkout, check=True, timeout=60)
    run = checkout / "reports" / "bench-20261206T080010-cpu.json"
    shutil.copy(FIXTURES / "bench-cpu.json", run)
    from jaxmlp.cli import main

    monkeypatch.chdir(checkout)
    assert main(["report", "--results", str(checkout / "reports")]) == 0  # in this process: the files are the test
    (report,) = (checkout / "reports").glob("report-*")
    everything = [p for p in (checkout / "reports").rglob("*") if p.is_file()]
    machine = _machine_path(checkout)
    assert any(machine in p.read_text(errors="replace") for p in everything if p.suffix == ".csv"), (
        "the rendered report no longer names its files by absolute path: this test no longer proves the order"
    )
    assert report.is_dir() and _internal_words(checkout) == []


def test_a_readme_block_is_its_pages_block_rendered_and_is_rewritten_from_it(tmp_path):
    """bench/corpus/README.md's table of cases is the corpus page's block rendered from the scored run, as README.md's
    headline table is the home page's: a block that differs is named, and `--readme` rewrites it."""
    shutil.copy(FIXTURES / "corpus" / "scorecard.json", tmp_path / "scorecard.json")
    table = tmp_path / "runs.md"
    table.write_text("| name | file | what |\n| --- | --- | --- |\n| `corpus` | `scorecard.json` | a corpus run |\n")
    page, readme = tmp_path / "page.md", tmp_path / "README.md"
    page.write_text('Cases:\n\n<!-- figures:cases -->\n{{ corpus_cases("corpus") }}\n<!-- /figures -->\n')
    readme.write_text("# Cases\n\n<!-- figures:cases -->\nwritten by hand\n<!-- /figures -->\n\nThe rest.\n")
    pages = functions.Figures(table)
    (problem,) = readme_blocks.readme_problems(pages, ((readme, page),))
    assert "README.md's block 'cases' differs from" in problem and "--readme" in problem
    readme_blocks.write_readme(pages, ((readme, page),))
    assert readme_blocks.readme_problems(pages, ((readme, page),)) == []
    text = readme.read_text()
    assert "| case | kind | report | releases |" in text and "written by hand" not in text
    assert text.endswith("<!-- /figures -->\n\nThe rest.\n")
