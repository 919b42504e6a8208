"""Regression forensics: what a cell compiled, explain A B, XLA flags per release, the roofline, memory in compare."""

import json
import sys
from pathlib import Path

import pytest

from jaxmlp import registry
from jaxmlp.cli import main
from jaxmlp.measure import memory
from jaxmlp.measure.environments import envs
from jaxmlp.measure.records import ProcessResult, WorkloadTimes
from jaxmlp.measure.sweep.settings import Matrix, Measuring
from jaxmlp.report.explain import explain_text
from jaxmlp.results.schema import parse
from jaxmlp.results.schema.explain import SAME_HLO, ExplainDocument
from jaxmlp.results.schema.sweep import Cell, CellsDocument
from jaxmlp.results.sweep.cells import cells_table, flags_table, ignored_cells
from jaxmlp.results.sweep.explain import explanation, op_times, operation_changes
from jaxmlp.results.sweep.explain_files import explain
from jaxmlp.results.tables import RUN_PEAK, compare_memory, roofline

TINY = Measuring(dataset="synthetic", limit=256, epochs=2, calls=3)


# --- what a cell compiled ---------------------------------------------------------------------------------


def test_a_probe_records_the_program_and_the_process(tmp_path):
    from jaxmlp.measure.sweep.worker import measure_process

    result = measure_process(Measuring(("step", "scan"), "synthetic", limit=300, epochs=2, calls=3, program_facts=True))
    step, scan = result.workloads["step"].program, result.workloads["scan"].program
    assert step["hlo_fingerprint"] and step["hlo_text"].startswith("HloModule")
    assert step["operations"]["dot"] >= 3  # forward and backward matmuls of the 3 layers
    assert step["flops"] > 2 * 128 * (784 * 512 + 512 * 512 + 512 * 10)  # at least the forward pass
    assert step["trace_lower_seconds"] > 0 and step["xla_compile_seconds"] > 0
    assert {"argument_bytes", "output_bytes", "temp_bytes"} <= set(step)
    # 300 images: 2 full batches of 128 in the scan (its body counted once a batch), the 44 left in their own step
    assert [p["runs"] for p in scan["programs"]] == [2, 1]
    assert scan["flops_per_call"] == pytest.approx(sum(p["flops"] * p["runs"] for p in scan["programs"]))
    assert result.metadata["peak_rss_bytes"] > 50 * 2**20
    assert "not available" in result.metadata["device_peak_why"]  # the CPU keeps no memory_stats()


# --- explain ----------------------------------------------------------------------------------------------


def test_explain_two_cells_of_the_same_program_says_same_hlo_and_times_each_operation(tmp_path):
    matrix = Matrix(processes=1, hand_made={"A": sys.executable, "B": sys.executable})
    doc, folder = explain(TINY, "A", "B", "step", tmp_path, matrix, say=lambda line: None)
    assert doc.same_hlo is True and doc.diff_file is None
    assert doc.op_times and all(o.name_a and o.name_b for o in doc.op_times)
    assert any(o.name_a.startswith("dot") or "dot" in o.name_a for o in doc.op_times)
    assert (folder / "explain.json").is_file() and list((folder / "hlo").glob("*.hlo.txt.gz"))
    assert isinstance(parse(json.loads((folder / "explain.json").read_text())), ExplainDocument)
    text = explain_text(doc, folder)
    assert SAME_HLO in text and "time in A" in text


def _process(label: str, text: str, ops: dict, seconds: float) -> ProcessResult:
    from jaxmlp import hlo

    program = {"hlo_fingerprint": hlo.fingerprint(text), "operations": ops, "flops": 100.0, "temp_bytes": 64}
    return ProcessResult({"jax": label}, {"w": WorkloadTimes(0.1, seconds, (seconds, seconds), seconds, None, program)})


def test_explain_of_different_programs_lists_operations_and_the_diff(tmp_path):
    a = (
        "HloModule m\n\nENTRY %main (p: f32[4]) -> f32[4] {\n  %p = f32[4]{0} parameter(0)\n"
        "  ROOT %n = f32[4]{0} negate(%p)\n}\n"
    )
    b = a.replace("negate", "abs")
    pa, pb = _process("A", a, {"parameter": 1, "negate": 1}, 1.0), _process("B", b, {"parameter": 1, "abs": 1}, 2.0)
    doc = explanation("w", "A", "B", {"A": [pa], "B": [pb]}, {"A": a, "B": b}, {"A": None, "B": None}, 1, {}, {})
    assert doc.same_hlo is False
    assert set(doc.operations) == {("abs", 0, 1), ("negate", 1, 0)}
    assert not doc.op_times and any("no trace" in n for n in doc.notes)
    assert "the optimized HLO changed" in explain_text(doc)


def test_operation_changes_and_op_times_order_by_size_of_change():
    assert operation_changes({"dot": 3, "add": 2}, {"dot": 8, "add": 2, "fusion:kCustom": 7}) == (
        ("fusion:kCustom", 0, 7),
        ("dot", 3, 8),
    )
    rows = op_times({"v1": ("dot.1", 0.010), "v2": ("add.3", 0.001)}, {"v1": ("dot.7", 0.004), "v2": ("add.9", 0.003)})
    assert [(r.name_a, r.name_b) for r in rows] == [("dot.1", "dot.7"), ("add.3", "add.9")]
    assert rows[0].ratio == pytest.approx(0.4)


@pytest.mark.skipif(not envs.is_made("0.4.33"), reason="needs jax 0.4.33's environment (jaxmlp sweep env 0.4.33)")
def test_explain_of_two_real_releases_whose_programs_differ(tmp_path):
    matrix = Matrix(processes=1, hand_made={"now": sys.executable})
    doc, folder = explain(TINY, "0.4.33", "now", "step", tmp_path, matrix, say=lambda line: None)
    assert doc.same_hlo is False and doc.diff_file == "hlo.diff" and (folder / "hlo.diff").stat().st_size > 0
    assert doc.operations


# --- XLA flags per release ---------------------------------------------------------------------------------


def test_the_flags_table_says_which_release_takes_which_flag():
    cells = CellsDocument(
        (
            Cell("0.4.31", "", "ok", "jax-0.4.31.json"),
            Cell("0.4.31", "--xla_a=1", "ok", "jax-0.4.31-flags1.json"),
            Cell("0.4.31", "--xla_new=1", "flag unknown in 0.4.31 (Unknown flags in XLA_FLAGS: --xla_new=1)", None),
            Cell("0.10.2", "--xla_a=1", "ok", "f", '"xla_a" is no longer supported and will be removed'),
            Cell("0.10.2", "--xla_new=1", "ok", "f"),
        )
    )
    table = flags_table(cells)
    assert list(table.columns) == ["xla_flags", "0.4.31", "0.10.2"]
    assert table.iloc[0].tolist()[:2] == ["--xla_a=1", "accepted"] and table.iloc[0, 2].startswith("ignored")
    assert table.iloc[1].tolist() == ["--xla_new=1", "flag unknown in 0.4.31", "accepted"]
    assert flags_table(CellsDocument((Cell("0.4.31", "", "ok", "f"),))).empty
    assert ignored_cells(cells) == {("0.10.2", "--xla_a=1")}  # measured, as if without it
    assert cells_table(cells)["status"].tolist() == [
        "flag unknown in 0.4.31 (Unknown flags in XLA_FLAGS: --xla_new=1)",
        "measured, its XLA flags ignored",
    ]


def test_the_programs_quantities_read_in_words():
    from jaxmlp.report.explain import changes_table
    from jaxmlp.results.schema.explain import Change
    from jaxmlp.results.sweep.explain import QUANTITIES

    facts = {q: 1.0 for q in QUANTITIES}
    doc = ExplainDocument({}, "w", "A", "B", {}, {}, tuple(Change(q, v, 2 * v) for q, v in facts.items()))
    shown = changes_table(doc)["quantity"].tolist()
    assert shown == list(QUANTITIES.values()) and not set(shown) & set(QUANTITIES)  # no field name shown
    assert "XLA compile time (every program)" in shown and "FLOPs a call (every program, times its runs)" in shown


# --- the roofline -----------------------------------------------------------------------------------------


def test_roofline_arithmetic():
    # 1e9 FLOP and 1e8 bytes on a 1e11 FLOP/s, 1e10 B/s machine: 10 ms of compute, 10 ms of memory: the ridge
    at_ridge = roofline.point(1e9, 1e8, 0.02, 1e11, 1e10)
    assert at_ridge["intensity"] == 10 and at_ridge["ridge_intensity"] == 10
    assert at_ridge["attainable_seconds"] == pytest.approx(0.01) and at_ridge["x_attainable"] == pytest.approx(2)
    memory_bound = roofline.point(1e9, 1e9, 0.2, 1e11, 1e10)
    assert memory_bound["binds"] == roofline.MEMORY and memory_bound["attainable_seconds"] == pytest.approx(0.1)
    compute_bound = roofline.point(1e10, 1e8, 0.2, 1e11, 1e10)  # the FLOP-only floor is this case
    assert compute_bound["binds"] == roofline.FLOPS and compute_bound["attainable_seconds"] == pytest.approx(0.1)
    assert compute_bound["achieved_flops_per_second"] == pytest.approx(5e10)
    assert "no roofline" in roofline.point(None, 1e8, 0.1, 1e11, 1e10)["why"]


def test_a_program_that_loops_once_a_call_gets_no_roofline_but_the_reason():
    ceilings = {"flops_per_second": 1e11, "bytes_per_second": 1e10}
    looped = {
        "flops_per_call": 1e6,
        "bytes_accessed_per_call": 1e5,
        "steady_seconds": 0.5,
        "operations": {"while": 1, "dot": 2},
        "programs": [{"name": "main", "runs": 1}],
    }
    counted = {**looped, "programs": [{"name": "scan", "runs": 468}]}  # a built-in scan: its costs a full batch
    found = roofline.points({"user": looped, "scan": counted}, ceilings)
    assert "counts a loop's body once" in found["user"]["why"] and "x_attainable" not in found["user"]
    assert found["user"]["measured_seconds"] == 0.5 and "x_attainable" in found["scan"]


# --- memory -----------------------------------------------------------------------------------------------


def test_the_peak_resets_and_is_read_back():
    status = "Name:\tpython\nVmPeak:\t 999 kB\nVmHWM:\t    2048 kB\n"
    assert memory.current_peak(status) == 2048 * 1024
    was_reset = memory.reset_peak()
    facts = memory.peak_facts(was_reset)
    assert facts["peak_rss_bytes"] > 0  # the scope says which peak: this benchmark's where the reset took
    assert facts["peak_rss_scope"] == (registry.PEAK_SCOPE_BENCHMARK if was_reset else registry.PEAK_SCOPE_PROCESS)


def test_compare_memory_flags_beyond_its_own_threshold():
    table = compare_memory({"a": 100.0, "b": 100.0, "c": 100.0}, {"a": 105.0, "b": 130.0, "c": 80.0}, 0.10)
    assert table.set_index("benchmark")["verdict"].to_dict() == {
        "a": "no change",
        "b": "memory regression",
        "c": "memory improvement",
    }


def _bench(path: Path, peak: float, scope: str = registry.PEAK_SCOPE_BENCHMARK, peaks: tuple[float, ...] = ()) -> Path:
    data = [1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.0, 1.01]
    stats = {"median": 1.0, "min": 0.98, "rounds": len(data), "data": data}
    benches = [
        {"name": name, "group": "g", "params": {}, "extra_info": {"peak_rss_bytes": p, "peak_rss_scope": scope}}
        for name, p in zip(("epoch", "step", "gemm"), (peak, *peaks), strict=False)
    ]
    benches = [{**bench, "stats": stats} for bench in benches]
    path.write_text(json.dumps({"machine_info": {}, "benchmarks": benches, "datetime": "2026-12-01T00:00:00"}))
    return path


def test_jaxmlp_compare_flags_a_memory_regression_like_a_time_regression(tmp_path, capsys):
    base, same, bigger = (
        _bench(tmp_path / "a.json", 1e9),
        _bench(tmp_path / "b.json", 1e9),
        _bench(tmp_path / "c.json", 1.5e9),
    )
    assert main(["compare", str(base), str(same), "--fail-on-regression"]) == 0
    assert main(["compare", str(base), str(bigger), "--fail-on-regression"]) == 3  # the gate: as a slower time
    assert "1 memory regression(s)" in capsys.readouterr().out
    assert main(["compare", str(base), str(bigger), "--fail-on-regression", "--memory-threshold", "0.6"]) == 0


def test_peaks_that_are_the_process_s_so_far_are_compared_as_one_a_run(tmp_path, capsys):
    """A run whose peaks could not be reset (each its process's since it started) has no peak of its own per
    benchmark: only each run's largest is compared, never benchmark by benchmark."""
    process = registry.PEAK_SCOPE_PROCESS
    base = _bench(tmp_path / "a.json", 1e9, process, peaks=(2e9, 3e9))  # grows as the benchmarks run
    new = _bench(tmp_path / "b.json", 1e9, process, peaks=(3e9, 3.1e9))  # its step's peak +50%: not its own
    assert main(["compare", str(base), str(new), "--fail-on-regression"]) == 0
    out = capsys.readouterr().out
    assert RUN_PEAK in out and "0 memory regression(s), 0 memory improvement(s) of the runs' largest peaks" in out
    bigger = _bench(tmp_path / "c.json", 1e9, registry.PEAK_SCOPE_BENCHMARK, peaks=(2e9, 4.5e9))
    assert main(["compare", str(base), str(bigger), "--fail-on-regression"]) == 3  # one side not its own: as one
    assert "1 memory regression(s), 0 memory improvement(s) of the runs' largest peaks" in capsys.readouterr().out
