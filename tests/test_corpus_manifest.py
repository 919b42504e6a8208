"""The corpus of known regressions (`bench/corpus/`): its manifest names each case once, each workload file exists and
says in its docstring which report it reproduces, and the README's table lists every case."""

import ast
import tomllib
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1] / "bench" / "corpus"


def cases() -> list[dict[str, object]]:
    return list(tomllib.loads((CORPUS / "corpus.toml").read_text())["case"])


def test_every_case_is_named_once_and_its_workload_cites_its_report() -> None:
    names = [str(c["name"]) for c in cases()]
    assert len(names) == len(set(names)) >= 10
    for case in cases():
        file, _, function = str(case["workload"]).partition(":")
        tree = ast.parse((CORPUS / file).read_text())
        assert function in {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}, case["name"]
        assert str(case["source"]).split("#")[0] in (ast.get_docstring(tree) or ""), case["name"]


def test_the_readme_lists_every_case_and_the_manifest_covers_every_kind() -> None:
    readme = (CORPUS / "README.md").read_text()
    assert all(f"| `{c['name']}` |" in readme for c in cases())
    kinds = [c["kind"] for c in cases()]
    assert {"step", "transient", "flag", "failure", "compile"} <= set(kinds) and kinds.count("control") >= 2
