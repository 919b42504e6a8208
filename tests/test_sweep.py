"""The version sweep: worker measurements, rounds in rotating order, cells and XLA flags, its result files, the
report's version section, the detector's trials, and `jaxmlp sweep` on the command line."""

import itertools
import json
import re
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from conftest import EARLIER_TRIALS, TWO_ENVS

from jaxmlp import registry, units
from jaxmlp.cli import build_parser, main
from jaxmlp.cli.sweep import SUBCOMMANDS, normalized
from jaxmlp.errors import EXIT_SLOWER, JaxmlpError, gate
from jaxmlp.measure import workers
from jaxmlp.measure.records import Leaf, Output, ProcessResult, WorkloadTimes
from jaxmlp.measure.sweep import matrix, trials, unmeasured, worker
from jaxmlp.measure.sweep.settings import TOLERANCE, Matrix, Measuring
from jaxmlp.registry import version_key
from jaxmlp.report.corpus_sections import trials_run
from jaxmlp.report.sections import build_sections
from jaxmlp.results.findings.model import ANCHOR
from jaxmlp.results.schema import parse
from jaxmlp.results.schema.sweep import CellsDocument, SweepDocument
from jaxmlp.results.schema.trials import TrialsDocument
from jaxmlp.results.store.frames import load
from jaxmlp.results.store.reading import read_benchmarks
from jaxmlp.results.store.writing import ResultsStore, write_json_new
from jaxmlp.results.sweep import files
from jaxmlp.results.sweep.folders import folder_verdicts

ROOT = Path(__file__).parent.parent
EXAMPLE = str(ROOT / "bench" / "workloads" / "scan_heavy.py") + ":make"
QUICK = {"dataset": "synthetic", "limit": 256, "epochs": 2, "calls": 2}


@pytest.fixture(scope="module")
def process():
    return worker.measure_process(Measuring(dataset="synthetic", limit=512, epochs=3, calls=3))


def test_a_process_measures_each_builtin_workload_compile_first_and_steady(process):
    assert list(process.workloads) == list(registry.SWEEP_WORKLOADS)
    for run in process.workloads.values():
        assert run.compile_seconds > 0 and run.first_seconds > 0
        assert len(run.call_seconds) == 2 and run.steady_seconds == float(np.median(run.call_seconds))
        assert run.output is not None and run.output.leaves[0].shape  # what the last call returned
    meta = process.metadata
    assert meta["injected_slowdown"] == 0.0 and meta["samples"] == 512 and meta["jax"] and meta["jaxlib"]
    assert (meta["epochs"], meta["calls"]) == (3, 3) and meta["workload_source"] == "batched,scan,step"
    assert ProcessResult.from_json(json.loads(json.dumps(process.to_json()))) == process  # what a worker prints


def test_the_builtin_epochs_compute_what_training_computes(process):
    """The built-in workloads are the pipelines' own epochs: the same data and params give the same values."""
    batched, scan = (process.workloads[name].output for name in ("batched", "scan"))
    assert batched.differs(scan, 1e-4) is None


def test_the_test_hook_stretches_the_timed_region_by_its_fraction():
    now, spent = [0.0], [0.0]

    def clock():  # a fake clock: each reading takes a millisecond
        now[0] += 0.001
        return now[0]

    def cpu():  # a fake CPU clock: half the wall clock's time (a neighbour), each reading a millisecond of it
        now[0] += 0.001
        spent[0] = now[0] / 2
        return spent[0]

    def work():
        now[0] += 2.0
        return "result"

    result, seconds, used = worker.timed_with_hook(work, 0.1, clock=clock, cpu=cpu)
    assert result == "result" and seconds == pytest.approx(2.2, abs=0.01) and used == pytest.approx(1.1, abs=0.01)
    assert worker.timed_with_hook(work, 0.0, clock=clock, cpu=cpu)[1] == pytest.approx(2.002)


def test_the_test_hook_burns_cpu_for_its_share_of_both_clocks():
    """A call that waits (a sleep, no CPU): the spin stretches its wall time; a call that computes: its CPU time too.
    No upper bound: a busy machine may add any delay."""
    reads = [0]

    def clock():  # the real clock, its readings counted
        reads[0] += 1
        return time.perf_counter()

    _, seconds, _ = worker.timed_with_hook(lambda: time.sleep(0.1), 0.5, clock=clock)
    assert seconds >= 0.15  # its share on top of the work
    assert reads[0] > 10  # it spun on the clock (a sleep would read it three times)

    def compute():
        end = time.process_time() + 0.05
        while time.process_time() < end:
            pass

    _, _, used = worker.timed_with_hook(compute, 0.5)
    assert used >= 0.075  # the CPU time stretched as well


def test_the_test_hook_is_recorded_with_the_results():
    slow = worker.measure_process(Measuring(("batched",), "synthetic", limit=256, epochs=2, inject_slowdown=0.1))
    assert slow.metadata["injected_slowdown"] == 0.1 and list(slow.workloads) == ["batched"]


def leaf(value: float) -> Output:
    return Output((Leaf((2,), "float32", (value, value), 2 * value, 2 * abs(value)),))


def fake_process(jax_version: str, steady: float, seed: int, flags: str = "", value: float = 1.0) -> ProcessResult:
    rng = np.random.default_rng(seed)
    meta = dict(
        jax=jax_version,
        jaxlib=jax_version,
        backend="cpu",
        device_kind="cpu",
        host="fixture-host",
        dataset="synthetic",
        injected_slowdown=0.0,
        commit="abc",
        python="3.11.7",
        cpu_model="CPU",
        cpu_affinity=1,
        samples=2000,
        epochs=4,
        xla_flags=flags,
        peak_rss_bytes=2**30 + seed * 2**20,  # its own (`own_peaks`): the sweep_peak_rss row
    )
    calls = [2 * steady, *(steady * np.exp(rng.normal(0, 0.01, 3)))]
    return ProcessResult(
        meta,
        {
            "batched": WorkloadTimes.of(0.3, calls, leaf(value)),
            "step": WorkloadTimes.of(0.2, [0.005, 0.004, 0.004], leaf(value)),
        },
    )


def test_sweep_documents_keep_one_sample_per_process(tmp_path):
    processes = [fake_process("0.6.2", 1.0, i) for i in range(6)]
    doc = files.to_document("0.6.2", processes).to_benchmarks()
    steady = next(b for b in doc.benchmarks if b.name == "sweep_steady[batched]")
    assert steady.stats.data == tuple(p.workloads["batched"].steady_seconds for p in processes)
    assert steady.stats.rounds == 6 and steady.stats.median == float(np.median(steady.stats.data))
    assert steady.stats.q3 == float(np.quantile(steady.stats.data, 0.75)) and steady.extra_info["jax"] == "0.6.2"
    assert steady.params == {"workload": "batched"} and steady.extra_info["calls"] == 4
    assert doc.is_sweep and {b.id for b in doc.benchmarks} == {b.id for b in registry.SWEEP}
    path = write_json_new(tmp_path / "jax-0.6.2.json", doc.to_json())
    read = read_benchmarks(path)
    assert read.samples()["sweep_first[batched]"] == [2.0] * 6
    assert SweepDocument.from_benchmarks(read).processes == tuple(processes)  # the raw processes, typed again


def test_sweep_files_from_before_the_workload_contract_read_as_workloads():
    """Files the earlier sweep wrote (sweep_epoch[...], sweep_step) are read under today's names, same values."""
    legacy = json.loads((ROOT / "tests/fixtures/runs/jaxlib-20261202T175027/jax-0.8.3.json").read_text())
    old = {b["name"]: b["stats"]["median"] for b in legacy["benchmarks"]}
    doc = parse(legacy)
    new = {b.name: b.stats.median for b in doc.benchmarks}
    assert new["sweep_steady[batched]"] == old["sweep_epoch[batched]"] == pytest.approx(0.0905, abs=5e-5)
    assert new["sweep_first[scan]"] == old["sweep_first_epoch[scan]"]
    assert new["sweep_steady[step]"] == old["sweep_step"] and new["sweep_compile[step]"] == old["sweep_step_compile"]
    assert "sweep_first[step]" not in new  # the old step kept no first call: no made-up row
    assert {b.id for b in doc.benchmarks} <= set(registry.BY_ID)


def write_sweep(folder: Path, cells: dict[tuple[str, str], float], processes: int = 8, values=None) -> None:
    """A sweep folder of fake cells {(version, flags): steady seconds}, through the sweep's own writer."""
    runners, processed, reference = {}, {}, {}
    flags_index = {f: i for i, f in enumerate(sorted({f for _, f in cells}))}
    for (version, flags), steady in cells.items():
        runner = matrix.Runner(version, sys.executable, Measuring(), flags, flags_index[flags])
        value = (values or {}).get((version, flags), 1.0)
        processed[runner.name] = [fake_process(version, steady, i, flags, value) for i in range(processes)]
        reference[runner.name] = processed[runner.name][0]
        runners[runner.name] = runner
    outcomes = {name: matrix.Outcome("ok") for name in runners}
    measured = matrix.Measured(
        matrix.Probed(runners, outcomes, {}, reference), processed, matrix.differences(reference, TOLERANCE)
    )
    files.write(ResultsStore(folder.parent), list(runners.values()), measured, final=folder)


def test_report_orders_versions_and_flags_the_slow_step(tmp_path):
    folder = tmp_path / "jaxlib-20261201T000000"
    write_sweep(folder, {("0.10.2", ""): 1.2, ("0.4.30", ""): 1.0, ("0.6.2", ""): 1.0})
    results = load(ResultsStore(tmp_path))
    (section,) = [s for s in build_sections(results, folder=tmp_path) if s.anchor == ANCHOR.matrix]
    table, steps = (t.frame for t in section.tables)
    assert list(table["release"]) == ["0.4.30", "0.6.2", "0.10.2"] and "xla_flags" not in table
    verdicts = steps[steps["benchmark"] == "sweep_steady[batched]"].set_index("to")["verdict"]
    assert verdicts.to_dict() == {"0.6.2": "the same", "0.10.2": "slower"}
    assert section.plots and version_key("0.10.2") > version_key("0.9.2")
    assert section.shown[0].note.startswith("jaxlib-20261201T000000: ")  # relative to the results folder
    assert (
        "each sample is one process (8 a cell, in rotating order; 4 epochs of 2000 images; step 3 calls; 1 CPU(s) each)"
        in (section.shown[0].note)
    )
    assert {c for c in table.columns if c.startswith("sweep")} == {
        f"{b.id}[{w}]" for b in registry.SWEEP for w in ("batched", "step")
    }


FLAG = "--xla_cpu_use_thunk_runtime=false"


def test_each_xla_flags_value_is_its_own_column_and_is_compared_with_none(tmp_path):
    folder = tmp_path / "jaxlib-20261201T000000"
    write_sweep(folder, {("0.4.30", ""): 1.0, ("0.4.31", ""): 3.0, ("0.4.30", FLAG): 1.0, ("0.4.31", FLAG): 1.02})
    files = ["cells.json", "jax-0.4.30-flags1.json", "jax-0.4.30.json", "jax-0.4.31-flags1.json", "jax-0.4.31.json"]
    assert sorted(p.name for p in folder.iterdir()) == files
    results = load(ResultsStore(tmp_path))
    (section,) = [s for s in build_sections(results, folder=tmp_path) if s.anchor == ANCHOR.matrix]
    table, steps, effects, flags = (t.frame for t in section.tables)
    assert flags.values.tolist() == [[FLAG, "accepted", "accepted"]]  # each release took the flag
    assert list(zip(table["release"], table["xla_flags"])) == [
        ("0.4.30", ""),
        ("0.4.31", ""),
        ("0.4.30", FLAG),
        ("0.4.31", FLAG),
    ]
    steady = steps[steps["benchmark"] == "sweep_steady[batched]"].set_index("xla_flags")["verdict"]
    assert steady.to_dict() == {"": "slower", FLAG: "the same"}  # the flag undoes the slowdown
    undone = effects[(effects["benchmark"] == "sweep_steady[batched]")].set_index("from")
    assert undone.loc["0.4.31", "verdict"] == "faster" and undone.loc["0.4.30", "verdict"] == "the same"
    assert undone.loc["0.4.31", "ratio"] == pytest.approx(1.02 / 3.0, rel=0.03)
    assert all(row.get("xla_flags") in ("", FLAG) for row in results.runs.to_dict("records"))  # in the metadata


def test_a_workload_whose_values_differ_between_releases_is_marked_not_compared(tmp_path):
    folder = tmp_path / "jaxlib-20261201T000000"
    write_sweep(folder, {("0.6.2", ""): 1.0, ("0.8.3", ""): 1.5}, values={("0.8.3", ""): 1.1})
    doc = read_benchmarks(folder / "jax-0.8.3.json")
    assert doc.metadata["results_differ"]["batched"].startswith("results differ from 0.6.2: values differ by 0.1")
    results = load(ResultsStore(tmp_path))
    (section,) = [s for s in build_sections(results, folder=tmp_path) if s.anchor == ANCHOR.matrix]
    table, steps = (t.frame for t in section.tables)
    assert table.set_index("release").loc["0.8.3", "results_differ"] == "batched, step"
    assert set(steps["verdict"]) == {"results differ"}  # never a silent ratio
    assert gate(folder_verdicts(folder)) == 1  # and the gate fails it: no time verdict, not a pass


def _steady_steps(tmp_path, name, values):
    """A sweep (or, ``name`` timeline-..., a timeline) of 0.6.2, 0.7.0 and 0.8.0, 0.8.0 50% slower, each release's
    values ``values``: its steady-state steps, its summary's lines, and the gate's exit code."""
    from jaxmlp.flows.measured import verdicts_of
    from jaxmlp.results.sweep.views import sweep_steps, sweeps

    folder = tmp_path / name
    releases = ("0.6.2", "0.7.0", "0.8.0")
    write_sweep(
        folder,
        {(r, ""): t for r, t in zip(releases, (1.0, 1.0, 1.5))},
        values=dict(zip(((r, "") for r in releases), values)),
    )
    results = load(ResultsStore(folder))
    (rows,) = sweeps(results.runs).values()
    steps = sweep_steps(rows, results.samples)
    return (
        steps[steps["benchmark"] == "sweep_steady[batched]"].set_index("to"),
        verdicts_of(folder),
        gate(folder_verdicts(folder)),
    )


def test_a_sweep_marks_each_comparison_by_whether_its_own_two_sides_differ(tmp_path):
    """Values 1.0, 1.1, 1.1: 0.7.0 against 0.6.2 "results differ"; 0.8.0 against 0.7.0, whose values agree, compared
    on time and slower (each cell's record against the first cell marked both). Values each 0.08% off 0.6.2 but 0.16%
    off each other (tolerance 0.001): only 0.8.0 against 0.7.0 is marked. In a timeline as in a sweep."""
    steps, said, code = _steady_steps(tmp_path, "jaxlib-20261201T000000", (1.0, 1.1, 1.1))
    assert steps.loc["0.7.0", "verdict"] == "results differ"
    assert steps.loc["0.8.0", "verdict"] == "slower" and steps.loc["0.8.0", "ratio"] > 1.4 and code == EXIT_SLOWER
    steps, said, code = _steady_steps(tmp_path, "jaxlib-20261202T000000", (1.0, 1.0008, 0.9992))
    assert steps.loc["0.7.0", "verdict"] == "the same" and steps.loc["0.8.0", "verdict"] == "results differ"
    _, said, code = _steady_steps(tmp_path, "timeline-20261203T000000", (1.0, 1.0008, 0.9992))
    assert "0.8.0 against 0.7.0: results differ, not compared on time" in said and "0.7.0 against 0.6.2" not in said
    _, said, code = _steady_steps(tmp_path, "timeline-20261204T000000", (1.0, 1.1, 1.1))
    assert "0.7.0 against 0.6.2: results differ, not compared on time" in said and "0.8.0 against 0.7.0" not in said


def test_a_comparison_whose_results_differ_has_no_verdict_on_time_anywhere(tmp_path):
    """A comparison marked "results differ" has no ratio, p or verdict on time in the table, the summary or the gate,
    and a timeline's change across it is not said (0.8.0's 50% slowdown against 0.7.0, whose values differ)."""
    steps, said, code = _steady_steps(tmp_path, "jaxlib-20261201T000000", (1.0, 1.1, 1.1))
    assert steps.loc["0.7.0", ["ratio", "ci_low", "ci_high", "p_slower", "p_faster"]].isna().all()
    assert "results differ: sweep_steady[batched] 0.6.2 → 0.7.0 (not compared on time)" in said
    assert "slower: sweep_steady[batched] 0.7.0 → 0.8.0 ×1.50" in said and code == EXIT_SLOWER
    steps, said, code = _steady_steps(tmp_path, "jaxlib-20261202T000000", (1.0, 1.0008, 0.9992))
    assert steps.loc["0.8.0", ["ratio", "p_slower"]].isna().all()
    assert "0.7.0 → 0.8.0 (not compared on time)" in said and "slower: " not in said and code == 1
    _, said, code = _steady_steps(tmp_path, "timeline-20261203T000000", (1.0, 1.0008, 0.9992))
    assert " slower " not in said.split("Verdict: ")[1].splitlines()[0] and code == 1
    assert "step  0.8.0    0.7.0   -      -             -  results differ" in said
    _, said, code = _steady_steps(tmp_path, "timeline-20261204T000000", (1.0, 1.1, 1.1))
    assert "0.8.0 slower than 0.7.0" in said.split("Verdict: ")[1].splitlines()[0] and code == EXIT_SLOWER


def test_an_older_sweep_s_record_against_the_first_cell_marks_every_comparison_of_its_cell(tmp_path):
    """A file written before each cell recorded the cells it is compared with names the first cell only: 0.8.0's
    record against 0.6.2 still marks 0.8.0 against 0.7.0 (whether those two differ, such a file cannot say)."""
    from jaxmlp.results.sweep.views import sweep_steps, sweeps

    folder = tmp_path / "jaxlib-20261201T000000"
    releases = ("0.6.2", "0.7.0", "0.8.0")
    write_sweep(
        folder, {(r, ""): 1.0 for r in releases}, values={(r, ""): v for r, v in zip(releases, (1.0, 1.1, 1.1))}
    )
    why = "results differ from 0.6.2: values differ by 0.1 relative (tolerance 0.001)"
    for path in folder.glob("jax-*.json"):
        cell = SweepDocument.from_benchmarks(read_benchmarks(path))
        older = {} if cell.label == "0.6.2" else {"batched": why, "step": why}
        path.unlink()
        write_json_new(path, replace(cell, differs=older, pairwise=False).to_json())
    results = load(ResultsStore(folder))
    (rows,) = sweeps(results.runs).values()
    steps = sweep_steps(rows, results.samples)
    assert set(steps["verdict"]) == {"results differ"} and "results_differ_pairs" not in rows


def test_outputs_compare_within_a_tolerance():
    assert leaf(1.0).differs(leaf(1.0 + 1e-6), 1e-3) is None
    assert "values differ by 0.01" in leaf(1.0).differs(leaf(1.01), 1e-3)
    other = Output((Leaf((3,), "float32", (1.0,), 3.0, 3.0),))
    assert leaf(1.0).differs(other, 1e-3) == "array 0 is float32[3] instead of float32[2]"
    assert "NaN" in leaf(1.0).differs(leaf(float("nan")), 1e-3)


def _three(values: dict[str, float], tolerance: float = TOLERANCE) -> matrix.Measured:
    """Three measured cells (0.6.2, 0.7.0, 0.8.0, in that order), each process's values ``values[cell]``."""
    runs = {r: [fake_process(r, 1.0, i, value=values[r]) for i in range(6)] for r in values}
    outcomes = {r: matrix.Outcome("ok") for r in runs}
    probed = matrix.Probed({}, outcomes, {}, {r: p[0] for r, p in runs.items()})
    return matrix.Measured(probed, runs, matrix.differences(probed.reference, tolerance), tolerance=tolerance)


def test_a_comparison_is_marked_by_whether_its_own_two_sides_differ():
    """0.6.2 computed other values than 0.7.0 and 0.8.0, which agree: 0.8.0 against 0.7.0 is compared on time, only
    the comparisons with 0.6.2 are "results differ"; two releases each within the tolerance of the first but not of
    each other are marked (the first cell's record misses them)."""
    from jaxmlp.results.sweep.settling import comparisons_of

    measured = _three({"0.6.2": 1.0, "0.7.0": 1.1, "0.8.0": 1.1})
    assert set(measured.differs) == {"0.7.0", "0.8.0"}  # the record: each against the first cell
    assert measured.apart("0.7.0", "0.8.0") == {}
    assert measured.apart("0.6.2", "0.8.0")["batched"].startswith("results differ from 0.6.2: values differ by 0.1")
    pairs = [("0.8.0", "0.7.0", "previous"), ("0.8.0", "0.6.2", "pinned")]
    previous, pinned = comparisons_of(measured, pairs, ["batched"])
    assert previous.verdict == "the same" and not previous.differs
    assert pinned.verdict == "results differ" and pinned.differs.startswith("results differ from 0.6.2")
    apart = _three({"0.6.2": 1.0, "0.7.0": 1.0008, "0.8.0": 0.9992})  # each 0.08% off 0.6.2, 0.16% off each other
    assert apart.differs == {} and "values differ by 0.0016" in apart.apart("0.7.0", "0.8.0")["batched"]
    (t,) = comparisons_of(apart, [("0.8.0", "0.7.0", "previous")], ["batched"])
    assert t.verdict == "results differ"


def test_rounds_run_real_worker_processes_in_turn():
    order = []
    runners = {name: matrix.Runner(name, sys.executable, Measuring(("batched",), **QUICK)) for name in "ab"}
    results, failed = matrix.run_rounds(runners, processes=2, tick=lambda round_, label: order.append((round_, label)))
    assert order == [(0, "a"), (0, "b"), (1, "b"), (1, "a")]
    assert [len(v) for v in results.values()] == [2, 2] and failed == []
    assert all(isinstance(p, ProcessResult) for v in results.values() for p in v)


def test_the_order_rotates_each_round():
    assert [matrix.round_order(["A", "B", "C"], r) for r in range(4)] == [
        ["A", "B", "C"],
        ["B", "C", "A"],
        ["C", "A", "B"],
        ["A", "B", "C"],
    ]


def test_a_failing_worker_is_named_in_one_line(tmp_path):
    nowhere = Measuring(("batched",), data_dir=str(tmp_path / "nonsense"))
    with pytest.raises(JaxmlpError, match=r"^x \(batched\): the worker failed: .*nonsense"):
        matrix.run_worker(matrix.Runner("x", sys.executable, nowhere))


def test_a_flag_a_release_does_not_know_is_reported_for_that_cell_not_a_crash():
    runners = [
        matrix.Runner("here", sys.executable, Measuring(("step",), **QUICK), flags, i)
        for i, flags in enumerate(("", "--xla_no_such_flag_in_any_release=1"))
    ]
    said = []
    probed = matrix.probe(runners, say=said.append)
    assert list(probed.runners) == ["here"] and probed.seconds["here"] > 0
    cell = probed.outcomes["here [--xla_no_such_flag_in_any_release=1]"]
    assert cell.status.startswith("flag unknown in here (Unknown flag in XLA_FLAGS: --xla_no_such_flag")
    assert said == [f"  here [--xla_no_such_flag_in_any_release=1]: not measured: {cell.status}"]
    _, unknown = files.cells(runners, matrix.Measured(probed, {"here": []}, {})).cells
    assert (unknown.status, unknown.file) == (cell.status, None)  # in cells.json: not measured, no file


def test_the_matrix_is_every_release_without_flags_then_with_each_value():
    args = sweep_args(["run", "--xla-flags", "--a=1", "--xla-flags", "--b=2"])
    assert args.xla_flags == ["--a=1", "--b=2"]
    runners = matrix.runners_for({"0.6.2": "p6", "0.8.3": "p8"}, Matrix(xla_flags=tuple(args.xla_flags)), Measuring())
    assert [(r.name, r.flags_index) for r in runners] == [
        ("0.6.2", 0),
        ("0.8.3", 0),
        ("0.6.2 [--a=1]", 1),
        ("0.8.3 [--a=1]", 1),
        ("0.6.2 [--b=2]", 2),
        ("0.8.3 [--b=2]", 2),
    ]


def sweep_args(argv):
    return build_parser(["sweep"]).parse_args(normalized(["sweep", *argv]))


def test_jaxmlp_sweep_runs_the_matrix_by_default():
    args = sweep_args(["0.6.2", "0.8.3", "--processes", "3"])
    assert args.sweep_command == "run" and args.versions == ["0.6.2", "0.8.3"] and args.processes == 3
    assert sweep_args(["--processes", "2"]).versions == [] and sweep_args(["bisect", "0.6.2", "0.8.3"]).good == "0.6.2"


def test_the_example_workload_end_to_end_on_two_environments(tmp_path, capsys, monkeypatch):
    """`jaxmlp sweep` with the example workload through real worker processes (the test environment under two
    labels; the test below takes two real releases where their environments are made)."""
    monkeypatch.chdir(ROOT)  # the workload, given by its absolute path, is recorded relative to the current folder
    out = tmp_path / "out"
    argv = ["sweep", *TWO_ENVS, "--workload", EXAMPLE, "--calls", "3", "--processes", "2", "--out", str(out)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "Probing 2 cell(s), one process each" in printed and "about" in printed and "results differ" not in printed
    (folder,) = out.iterdir()
    assert sorted(p.name for p in folder.iterdir()) == [
        "cells.json",
        "hlo",
        "jax-A.json",
        "jax-B.json",
        "samples.jsonl",
    ]
    assert sorted(p.name for p in (folder / "hlo").iterdir()) == [
        "jax-A.scan_heavy.hlo.txt.gz",
        "jax-B.scan_heavy.hlo.txt.gz",
    ]
    doc = SweepDocument.from_benchmarks(read_benchmarks(folder / "jax-A.json"))
    (times,) = [p.workloads["scan_heavy"] for p in doc.processes[:1]]
    assert len(doc.processes) == 2 and times.compile_seconds > 0 and len(times.call_seconds) == 2
    assert times.output.leaves[0].shape == (128,)
    assert doc.processes[0].metadata["workload_source"] == "bench/workloads/scan_heavy.py:make"
    cells = parse(json.loads((folder / "cells.json").read_text()))
    assert isinstance(cells, CellsDocument) and [c.status for c in cells.cells] == ["ok", "ok"]
    assert main(["report", "--results", str(out)]) == 0  # two cells of one jax version stay two cells
    summary = next(out.glob("report-*/summary.md")).read_text()
    assert "| A | 2 |" in summary and "| B | 2 |" in summary
    # it ends with its answer: a row per release, then where the files are
    table = printed[printed.index("scan_heavy, steady state\n") :].splitlines()
    assert table[1].split() == ["release", "median", "vs", "previous", "95%", "interval", "p", "verdict"]
    medians = {
        label: read_benchmarks(folder / f"jax-{label}.json").samples()["sweep_steady[scan_heavy]"] for label in "AB"
    }
    assert table[2].split() == ["A", *units.duration(np.median(medians["A"])).split(), "-", "-", "-", "-"]
    ratio = units.ratio(np.median(medians["B"]) / np.median(medians["A"]))
    assert table[3].split()[:4] == ["B", *units.duration(np.median(medians["B"])).split(), ratio]
    assert table[3].split()[-3:] == ["-", "-", "inconclusive"]  # 2 processes each: no p can be < 0.01
    assert table[-1].startswith(f"Wrote 2 cell files into {folder} in ")


def fake_workers(monkeypatch, steady: dict[str, float], fails_after: dict[str, int] | None = None) -> None:
    """Worker processes replaced by their results: each label's steady state, a little apart process by process;
    a label in ``fails_after`` fails from that call on (its probe is call 0)."""
    calls = {label: 0 for label in steady}

    def run_worker(runner, pythonpath=None, timeout=None):
        n = calls[runner.label] = calls[runner.label] + 1
        if n > (fails_after or {}).get(runner.label, 10**6):
            raise workers.ChildFailed(f"{runner.label} (batched): the worker failed: boom", None, 1, "boom")
        meta = {"jax": "0.10.2", "jaxlib": "0.10.2", "injected_slowdown": 0.0, "host": "here", "dataset": "synthetic"}
        value = steady[runner.label] * (1 + 0.001 * (n % 5))
        return ProcessResult(meta, {"batched": WorkloadTimes.of(0.1, [2 * value, value], leaf(1.0))})

    monkeypatch.setattr(matrix, "run_worker", run_worker)


def test_the_sweep_ends_with_its_verdicts_and_its_failed_cells_then_its_files(tmp_path, monkeypatch, capsys, explained):
    fake_workers(monkeypatch, {"0.6.2": 1.0, "0.8.3": 1.3, "C": 1.3}, fails_after={"C": 5})
    envs = [arg for label in ("0.6.2", "0.8.3", "C") for arg in ("--env", f"{label}={sys.executable}")]
    out = tmp_path / "out"
    assert main(["sweep", "run", *envs, "--processes", "8", "--out", str(out)]) == EXIT_SLOWER  # before the failure
    printed = capsys.readouterr().out
    (folder,) = out.iterdir()
    lines = printed[printed.index(f"Releases compared: {folder.name}") :].splitlines()
    assert lines[1].startswith("Verdict: slower: sweep_steady[batched] 0.6.2 → 0.8.3 ×1.30")  # its answer first
    assert "8 to 4 processes a release" not in printed and "4 to 8 processes a release" in lines[2]
    table = lines[lines.index("batched, steady state") + 1 :][:4]
    assert [row.split()[0] for row in table] == ["release", "0.6.2", "0.8.3", "C"]  # oldest first, then labels
    assert table[1].split() == ["0.6.2", "1.00", "s", "-", "-", "-", "-"]
    slower = table[2].split()
    assert slower[:4] == ["0.8.3", "1.30", "s", "×1.30"] and slower[-2:] == ["<0.001", "slower"]
    assert table[3].split()[-2:] == ["the", "same"]  # C's 4 processes against 0.8.3's 8
    failed = [line for line in lines if line.startswith("FAILED:")]
    assert failed == ["FAILED: C: 4 of 8 processes (C (batched): the worker failed: boom)"]
    wrote = [i for i, line in enumerate(lines) if line.startswith(f"Wrote 3 cell files into {folder}")]
    assert wrote and lines.index(failed[0]) < wrote[0]  # then each flagged change explained
    assert "Explaining batched: 0.6.2 -> 0.8.3 (flagged)" in lines[wrote[0] + 1 :]
    assert explained == [("0.6.2", "0.8.3", "batched")]


def made_releases(count: int) -> list[str]:
    from jaxmlp.measure.environments import envs

    made = sorted(
        (
            p.name.split("-")[1]
            for p in envs.envs_root().glob(f"jax-*-py{sys.version_info[0]}*")
            if (p / envs.COMPLETE).exists() and p == envs.env_path(p.name.split("-")[1])  # the index's
        ),
        key=version_key,
    )
    if len(made) < count:
        pytest.skip(
            f"needs {count} release environments made (jaxmlp sweep env 0.6.2 0.8.3; they download "
            f"~550 MB each), found {len(made)} under {envs.envs_root()}"
        )
    return made[:count]


def test_the_example_workload_on_two_real_releases(tmp_path, capsys):
    old, new = made_releases(2)
    out = tmp_path / "out"
    argv = ["sweep", old, new, "--workload", EXAMPLE, "--calls", "3", "--processes", "2", "--out", str(out)]
    assert main(argv) == 0
    (folder,) = out.iterdir()
    docs = {v: read_benchmarks(folder / f"jax-{v}.json") for v in (old, new)}
    assert {v: d.metadata["jax"] for v, d in docs.items()} == {old: old, new: new}
    assert all(not d.metadata["results_differ"] for d in docs.values())  # the same values from both releases


def test_nox_lists_the_version_matrix():
    listed = subprocess.run([sys.executable, "-m", "nox", "-l"], cwd=ROOT, capture_output=True, text=True).stdout
    versions = re.findall(r"jaxlib-env\(jax='([0-9.]+)'\)", listed)
    assert versions == list(registry.SWEEP_VERSIONS) and versions == sorted(versions, key=version_key)
    assert "bench-jaxlib" in listed


def test_a_trials_p_is_the_side_its_verdict_is_about():
    from jaxmlp.results.sweep.views import trials_table
    from jaxmlp.stats import compare

    base = np.linspace(1.0, 1.1, 14)
    faster, slower = compare(base, base * 0.9), compare(base, base * 1.1)  # an A/A improvement, an injected slowdown
    doc = TrialsDocument({}, None, (trials.Trial(0, {}, slower, faster),))
    row = trials_table(doc).iloc[0]
    assert (row.aa_verdict, row.aa_p) == ("faster", faster.p_faster) and faster.p_slower > 0.99
    assert (row.injected_verdict, row.injected_p) == ("slower", slower.p_slower)


def test_trials_documents_are_not_taken_for_timings(tmp_path):
    doc = {"jaxmlp": "detector-trials", "metadata": {}, "settings": EARLIER_TRIALS, "trials": []}  # as written before
    (tmp_path / "trials.json").write_text(json.dumps(doc))
    results = load(ResultsStore(tmp_path))
    assert results.runs.empty and not results.skipped and len(results.trials) == 1
    ((_, read),) = results.trials
    assert (read.settings.workload, read.settings.trials) == ("batched", 0)


def test_a_trial_whose_line_was_printed_is_kept_whenever_the_stop_comes(tmp_path, monkeypatch, capsys):
    """A stop that arrives as a trial's line is printed (the signal's handler raises there) keeps that trial: it was
    handed over before its line."""
    import tqdm

    from jaxmlp.errors import Interrupted

    def run_rounds(runners, processes, tick=None, pythonpath=None, timeout=None, say=None):  # values, no workers
        meta = {"jax": "0.10.2", "injected_slowdown": 0.0, "host": "here"}
        return {
            label: [ProcessResult(meta, {"batched": WorkloadTimes.of(0.1, [2.0, 1.0])})] * processes
            for label in runners
        }, []

    def write(line, *args, **kwargs):
        print(line)
        if line.startswith("trial 2:"):
            raise Interrupted()

    monkeypatch.setattr(trials, "run_rounds", run_rounds)
    monkeypatch.setattr(tqdm.tqdm, "write", staticmethod(write))
    assert main(["sweep", "trials", "--trials", "5", "--processes", "3", "--out", str(tmp_path)]) == 130
    said = capsys.readouterr()
    (kept,) = tmp_path.glob("detector-*/trials.json")
    assert "trial 2:" in said.out and f"kept 2 of 5 trials in {kept}" in said.err
    assert [t["trial"] for t in json.loads(kept.read_text())["trials"]] == [0, 1]


class _Clock:
    """A clock for `trials.time` that the fake rounds move: each process takes the next of ``seconds``."""

    def __init__(self, seconds):
        self.now, self.seconds = 0.0, iter(seconds)

    def monotonic(self):
        return self.now


def _trial_rounds(seed, asked=None, clock=None):
    """`run_rounds` without workers: each group's processes drawn around its level (A and A2 1.0, H 1.1), 1% noise;
    each call's groups and rounds appended to ``asked``; each process told (``tick``) as it ends, on ``clock``."""
    rng = np.random.default_rng(seed)

    def run_rounds(runners, processes, tick=None, pythonpath=None, timeout=None, say=None):
        assert runners.get("H") is None or runners["H"].measuring.inject_slowdown == 0.1
        assert runners.get("A") is None or runners["A"].measuring.inject_slowdown == 0
        if asked is not None:
            asked.append((sorted(runners), processes))
        base = {"A": 1.0, "A2": 1.0, "H": 1.1}
        meta = {"jax": "0.10.2", "injected_slowdown": 0.0, "host": "here"}
        done = {
            label: [
                ProcessResult(meta, {"batched": WorkloadTimes.of(0.1, [2.0, base[label] * x])})
                for x in np.exp(rng.normal(0, 0.01, processes))
            ]
            for label in runners
        }
        for round_ in range(processes):
            for label in matrix.round_order(list(runners), round_):
                if clock is not None:
                    clock.now += next(clock.seconds)
                if tick is not None:
                    tick(round_, label)
        return done, []

    return run_rounds


def test_trials_count_caught_slowdowns_and_false_alarms(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(trials, "run_rounds", _trial_rounds(0))
    assert main(["sweep", "trials", "--trials", "3", "--processes", "10", "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    raw = json.loads(next(tmp_path.glob("detector-*/trials.json")).read_text())
    assert (raw["injected_flagged"], raw["aa_flagged"], len(raw["trials"])) == (3, 0, 3)
    expected = {
        "processes_per_side": 10,
        "trials": 3,
        "epochs": 16,
        "limit": 2000,
        "workload": "batched",
        "dataset": "synthetic",
    }
    assert {key: raw["settings"][key] for key in expected} == expected
    results = load(ResultsStore(tmp_path))
    ((path, doc),) = results.trials
    section = trials_run(path, doc)
    assert TrialsDocument.from_json(raw) == doc and doc.injected_flagged == 3
    injected, aa = (np.median([getattr(t, side).ratio for t in doc.trials]) for side in ("injected", "aa"))
    assert 1.09 < injected < 1.11 and 0.99 < aa < 1.01
    assert "injected x1.1 slower 3 of 3 (95% interval 44% to 100%)" in section.note
    assert "A/A the same 3 of 3 (95% interval 44% to 100%); A/A slower 0 of 3" in section.note
    assert "\nFound (noise none): injected x1.1 slower 3 of 3 (95% interval 44% to 100%)" in printed
    assert f"Median ratios: injected {injected:.3f}, A/A {aa:.3f}" in printed
    assert "10 processes a side at first" in printed
    assert "Time to a verdict: A/A median" in printed and raw["settings"]["budget_minutes"] == 5.0


def test_a_trial_adds_processes_to_a_comparison_until_it_settles(tmp_path, monkeypatch, capsys):
    """Started at 2 processes a side (too few to judge), each comparison gets processes as `jaxmlp track` adds
    them until the A/A is the same and the injected slowdown slower, within the trial's budget."""
    asked = []
    monkeypatch.setattr(trials, "run_rounds", _trial_rounds(1, asked))
    assert main(["sweep", "trials", "--trials", "1", "--processes", "2", "--out", str(tmp_path)]) == 0
    (trial,) = json.loads(next(tmp_path.glob("detector-*/trials.json")).read_text())["trials"]
    assert (trial["aa"]["word"], trial["injected"]["word"]) == ("the same", "slower")
    assert asked[0] == (["A", "A2", "H"], 2) and len(asked) > 1  # more rounds after the first two
    assert min(map(len, trial["values"].values())) >= 5 and set(trial["seconds"]) == {"aa", "injected"}
    assert "processes" in capsys.readouterr().out


def test_a_trial_plans_its_rounds_at_its_slowest_process_and_stays_within_its_budget(tmp_path, monkeypatch):
    """Processes of 4 s but the sixth 10 s, then one in two 10 s (a neighbour's bursts): the rounds added to a trial
    fit what is left of its minute and a half with each process as slow as the slowest so far, so no comparison's
    seconds pass the budget (planned at the mean process so far, 5 s, its rounds ran to 96 s)."""
    clock = _Clock(itertools.chain([4.0] * 5 + [10.0], itertools.cycle([10.0, 4.0])))
    asked = []
    monkeypatch.setattr(trials, "run_rounds", _trial_rounds(1, asked, clock))
    monkeypatch.setattr(trials, "time", clock)
    argv = ["sweep", "trials", "--trials", "1", "--processes", "2", "--budget", "1.5", "--out", str(tmp_path)]
    assert main(argv) == 0
    (trial,) = json.loads(next(tmp_path.glob("detector-*/trials.json")).read_text())["trials"]
    assert len(asked) > 1 and max(trial["seconds"].values()) <= 90 and clock.now <= 90


def test_rounds_that_run_past_a_trial_s_budget_settle_nothing(tmp_path, monkeypatch):
    """Processes of 5 s, then of 60 s: the rounds planned at 5 s end past the minute, so the comparisons they would
    have settled end as they were before them (inconclusive at 2 processes a side), with their true seconds."""
    clock = _Clock(itertools.chain([5.0] * 6, itertools.repeat(60.0)))
    monkeypatch.setattr(trials, "run_rounds", _trial_rounds(1, None, clock))
    monkeypatch.setattr(trials, "time", clock)
    argv = ["sweep", "trials", "--trials", "1", "--processes", "2", "--budget", "1", "--out", str(tmp_path)]
    assert main(argv) == 0
    (trial,) = json.loads(next(tmp_path.glob("detector-*/trials.json")).read_text())["trials"]
    assert (trial["aa"]["word"], trial["injected"]["word"]) == ("inconclusive", "inconclusive")
    assert trial["aa"]["n_new"] == trial["injected"]["n_new"] == 2 and len(trial["values"]["A"]) > 2
    assert set(trial["seconds"].values()) == {clock.now} and clock.now > 60


IMPOSSIBLE = [
    ["trials", "--trials", "0"],
    ["trials", "--processes", "0"],
    ["run", "--env", "a=python", "--processes", "-1"],
    ["run", "--env", "a=python", "--epochs", "1"],
    ["run", "--calls", "1"],
    ["run", "--tolerance", "-1"],
    ["trials", "--inject-slowdown", "-0.1"],
    ["bisect", "0.6.2", "0.8.3", "--alpha", "2"],
    ["run", "--workload", "nonsense"],
]


@pytest.mark.parametrize("argv", IMPOSSIBLE)
def test_impossible_settings_are_one_line_errors(argv, capsys):
    assert main(["sweep", *argv]) == 2
    err = capsys.readouterr().err
    command = argv[0] if argv[0] in SUBCOMMANDS else "run"
    assert err.startswith(f"jaxmlp sweep {command}: error: --") and len(err.splitlines()) == 1
    assert "must be" in err or "neither a built-in" in err


BAD_INPUT = [
    (["0.4.29"], "jax 0.4.29 is older than 0.4.30, the oldest release jaxmlp supports"),
    (["latest"], "'latest' is not a jax release number (like 0.6.2)"),
    (["--env", "nolabel"], "--env 'nolabel': give it as LABEL=PYTHON"),
    (["bisect", "0.6.2", "0.6.2"], "GOOD and BAD are the same release: name two"),
    (["bisect", "0.6.2", "0.8.3", "--versions", "0.7.0", "next"], "'next' is not a jax release number"),
]


@pytest.mark.parametrize(("argv", "message"), BAD_INPUT)
def test_bad_releases_are_one_line_errors(argv, message, capsys, tmp_path):
    assert main(["sweep", *argv, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    command = argv[0] if argv[0] in SUBCOMMANDS else "run"
    assert err.startswith(f"jaxmlp sweep {command}: error: {message}") and len(err.splitlines()) == 1
    assert not list(tmp_path.iterdir())  # nothing written


def test_the_cost_of_new_environments_is_said_from_the_ones_made_here(tmp_path, monkeypatch):
    from jaxmlp.measure.environments import environments, envs, pythons

    made = tmp_path / f"jax-0.6.2-py{sys.version_info[0]}{sys.version_info[1]}"
    made.mkdir()
    (made / "lib.bin").write_bytes(b"x" * 2_000_000)
    (made / envs.COMPLETE).write_text("30.0\n")
    monkeypatch.setattr(envs, "make_env", lambda version, root, log, source, python: Path(f"python-{version}"))
    here = pythons.running()  # what the package index would say: every release here on the running Python
    monkeypatch.setattr(pythons, "for_releases", lambda versions, *args: dict.fromkeys(versions, here))
    said = []
    made_here = environments(Matrix(envs=tmp_path), ["0.6.2", "0.7.0", "0.8.3"], said.append)
    assert made_here == {v: f"python-{v}" for v in ("0.6.2", "0.7.0", "0.8.3")}
    assert said == [
        "Environments: 1 made, 2 to make (0.7.0, 0.8.3; about 2 MB each and 1.0 min in all, as the ones made here took)"
    ]
    (made / envs.COMPLETE).unlink()
    said.clear()
    environments(Matrix(envs=sweep_args(["run", "--envs", str(tmp_path)]).envs), ["0.7.0"], said.append)
    assert said == ["Environments: 0 made, 1 to make (0.7.0; size and time unknown: none made here yet)"]


def test_the_flags_table_says_for_each_value_whether_each_release_accepts_it():
    from jaxmlp.results.schema.sweep import Cell
    from jaxmlp.results.sweep.cells import flags_table

    doc = CellsDocument(
        (
            Cell("0.10.2", "", "ok", "a.json"),
            Cell("0.4.30", "", "ok", "b.json"),
            Cell("0.10.2", "--xla_new=1", "ok", "c.json"),
            Cell("0.4.30", "--xla_new=1", "flag unknown in 0.4.30 (Unknown flag in XLA_FLAGS: --xla_new=1)", None),
            Cell("0.4.30", "--xla_old=1", "ok", "d.json"),
            Cell("0.10.2", "--xla_old=1", "ok", "e.json", note="--xla_old is no longer supported"),
        )
    )
    table = flags_table(doc)
    assert list(table.columns) == ["xla_flags", "0.4.30", "0.10.2"]  # oldest release first
    assert table.values.tolist() == [
        ["--xla_new=1", "flag unknown in 0.4.30", "accepted"],
        ["--xla_old=1", "accepted", "ignored: --xla_old is no longer supported"],
    ]
    assert flags_table(CellsDocument((Cell("0.10.2", "", "ok", "a.json"),))).empty  # no flags, no table


def test_the_releases_not_measured_are_those_whose_probe_failed_or_every_process_failed():
    outcomes = {
        "0.5.3": matrix.Outcome("ok"),
        "0.6.2": matrix.Outcome("ok"),
        "0.7.2": matrix.Outcome(f"{matrix.PROBE_FAILED}: stopped after its time limit of 60 s"),
        "0.8.3 [--xla_foo=1]": matrix.Outcome("flag unknown in 0.8.3 (--xla_foo)"),
    }
    runners = {v: matrix.Runner(v, "python", Measuring(("batched",))) for v in ("0.5.3", "0.6.2")}
    probed = matrix.Probed(runners, outcomes, {}, {})
    failed = (matrix.Failure("0.6.2", 0, "0.6.2 (batched): the worker failed: killed by signal 9"),)
    measured = matrix.Measured(probed, {"0.5.3": [fake_process("0.5.3", 1.0, 0)], "0.6.2": []}, {}, failed)
    assert unmeasured.unmeasured(measured) == {
        "0.7.2": "failed at its probe: stopped after its time limit of 60 s",
        "0.6.2": "every process failed (the last: 0.6.2 (batched): the worker failed: killed by signal 9)",
    }  # a flag the release does not know is its answer, not a release left unmeasured
    assert unmeasured.unmeasured_line(unmeasured.unmeasured(measured)).startswith(
        "not measured: 0.7.2 (failed at its probe"
    )
    assert unmeasured.unmeasured_line({}) == ""


def test_a_workload_that_failed_in_a_cell_is_named_once_with_its_cells_the_others_measured():
    """A process that measured the MLP epoch but whose second workload's make() raised (`ProcessResult.failed`):
    the cell is measured, the workload named once, with why and in which cells."""
    from jaxmlp.measure.records import FAILED

    measuring = Measuring(("batched", "broken.py:make"))
    runners = {v: matrix.Runner(v, "python", measuring) for v in ("0.5.3", "0.6.2")}
    why = "workload 'broken.py:make': make() raised RuntimeError: broken"

    def process(version: str, seed: int) -> ProcessResult:
        done = fake_process(version, 1.0, seed)
        return replace(done, metadata={**done.metadata, FAILED: {"broken": why}})

    done = {v: [process(v, 0), process(v, 1)] for v in runners}
    probed = matrix.Probed(runners, {v: matrix.Outcome("ok") for v in runners}, {}, {})
    found = unmeasured.unmeasured(matrix.Measured(probed, done, {}))
    assert found == {"workload broken": f"{why}; in 0.5.3, 0.6.2"}
    assert unmeasured.unmeasured_line(found) == f"not measured: workload broken ({why}; in 0.5.3, 0.6.2)"


def test_a_process_whose_every_workload_failed_is_a_failed_process(monkeypatch):
    """Not a sample without the workload (what a search over one workload, the corpus's trials and an explanation
    read would meet as a KeyError): a `Failure` of its cell, with the workload's own line, as the probe says it."""
    monkeypatch.setenv("REMOVED_API", "tree_map")
    spec = f"{Path(__file__).parent / 'workloads' / 'removed_api.py'}:make"
    runners = {"x": matrix.Runner("x", sys.executable, Measuring((spec,), **QUICK))}
    said: list[str] = []
    results, failed = matrix.run_rounds(runners, processes=1, say=said.append)
    assert results == {"x": []}
    (failure,) = failed
    assert failure.cell == "x" and "has no attribute 'tree_map'" in failure.reason, failure
