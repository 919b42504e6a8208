"""The one registry of names: every benchmark in bench/ is registered, shown by a table, and rendered."""

import ast
from pathlib import Path

from jaxmlp import registry
from jaxmlp.results import tables
from jaxmlp.results.sweep.views import sweep_table

ROOT = Path(__file__).parent.parent
TABLE_MODULES = ("jaxmlp.results.tables", "jaxmlp.results.sweep.views")


def benchmark_functions() -> dict[str, tuple[str, set[str]]]:
    """Every benchmark function in bench/ (a test_* taking the `benchmark` fixture): its module and parameters."""
    found = {}
    for module in sorted((ROOT / "bench").glob("bench_*.py")):
        for node in ast.parse(module.read_text()).body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                args = {a.arg for a in node.args.args}
                if "benchmark" in args:
                    found[node.name] = (module.name, args & set(registry.PARAMETERS))
    return found


def test_every_benchmark_in_bench_is_registered_with_its_parameters():
    registered = {b.id: (b.source, set(b.params)) for b in registry.BENCH}
    assert benchmark_functions() == registered


def test_every_benchmark_written_by_jaxmlp_names_the_module_that_writes_it():
    for bench in registry.ALL:
        if bench not in registry.BENCH:
            source = (ROOT / bench.source).read_text()
            assert f"registry.{bench.id.upper()}" in source or bench.id.upper() in source, bench


def test_every_registered_benchmark_is_shown_by_a_table_and_no_table_looks_for_another():
    shown = [b for benchmarks in tables.SHOWN.values() for b in benchmarks]
    assert all(b in registry.ALL for b in shown)  # a table can only look for what the registry holds
    assert {b.id for b in shown} == {b.id for b in registry.ALL}


def _made_by_run_tables() -> set[str]:
    """The tables `tables.RunTables` makes: each member named as the table whose function it calls."""
    tree = ast.parse((ROOT / "jaxmlp" / "results" / "tables" / "derived.py").read_text())
    made = set()
    for member in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name in tables.SHOWN):
        calls = {c.func.id for c in ast.walk(member) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)}
        assert member.name in calls, f"RunTables.{member.name} makes another table than its name says"
        made.add(member.name)
    return made


def test_every_table_is_rendered():
    """The findings or the report (and so the terminal summary) call each table that declares what it shows, or
    read it from a run's `tables.RunTables`, which calls it."""
    called = set()
    through = _made_by_run_tables()
    for module in [
        *(ROOT / "jaxmlp" / "report").glob("*.py"),
        *(ROOT / "jaxmlp" / "results" / "findings").glob("*.py"),
    ]:
        nodes = list(ast.walk(ast.parse(module.read_text())))
        imported = {
            a.name
            for n in nodes
            if isinstance(n, ast.ImportFrom) and (n.module or "").startswith(TABLE_MODULES)
            for a in n.names
        }
        called |= {n.attr for n in nodes if isinstance(n, ast.Attribute) and getattr(n.value, "id", "") == "tables"}
        called |= {n.id for n in nodes if isinstance(n, ast.Name) and n.id in imported}
        called |= {n.attr for n in nodes if isinstance(n, ast.Attribute) and n.attr in through}
    assert sweep_table.__name__ in tables.SHOWN and set(tables.SHOWN) <= called


def test_names_and_ids():
    assert registry.EPOCH.name("cpu", "scan", 0) == "test_epoch[cpu-scan-0]" and registry.SWEEP_STEADY.name("step") == (
        "sweep_steady[step]"
    )
    assert registry.benchmark_id("test_epoch[cpu-scan-0]") == "test_epoch" == registry.EPOCH.id
    assert registry.BY_ID["test_update"] is registry.UPDATE
    assert len(registry.BY_ID) == len(registry.ALL)  # ids are unique
    assert registry.dataset_label("synthetic") == "synthetic (SYNTHETIC data, not MNIST)"
    assert registry.dataset_label("mnist") == "mnist"
    assert sorted(["0.10.2", "0.4.30", "0.6.2"], key=registry.version_key) == ["0.4.30", "0.6.2", "0.10.2"]
    assert set(registry.SWEEP_PIPELINES) < set(registry.PIPELINES)
    assert set(registry.WORKER_PIPELINES) < set(registry.LOADER_PIPELINES) < set(registry.PIPELINES)
    for old, (bench, fixed) in registry.RENAMED.items():  # a renamed benchmark is gone, its parameters are known
        assert old not in registry.BY_ID and set(fixed) <= set(bench.params)
    assert all(set(b.defaults) <= set(b.params) for b in registry.ALL)


def test_the_cli_offers_the_registered_choices():
    from jaxmlp.cli import build_parser

    train = build_parser()._subparsers._group_actions[0].choices["train"]
    choices = {a.dest: tuple(a.choices) for a in train._actions if a.choices}
    assert choices == {
        "pipeline": registry.PIPELINES,
        "dataset": registry.DATASETS,
        "backend": registry.BACKENDS,
        "precision": registry.PRECISIONS,
    }
