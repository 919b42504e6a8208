"""The version sweep: worker measurements, rounds in rotating order, its result files, the report's version section."""

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from jaxmlp import registry
from jaxmlp.measure import sweep
from jaxmlp.registry import version_key
from jaxmlp.report import build_sections, detector_sections
from jaxmlp.results.records import PipelineTimes, ProcessResult, StepTimes, SweepDocument, TrialsDocument
from jaxmlp.results.store import ResultsStore, read_benchmarks, write_json_new

ROOT = Path(__file__).parent.parent


@pytest.fixture(scope="module")
def process():
    return sweep.measure_process("synthetic", limit=512, epochs=3, timed_steps=3)


def test_a_process_measures_compile_first_and_steady_epochs(process):
    for pipeline in registry.SWEEP_PIPELINES:
        run = process.pipelines[pipeline]
        assert run.compile_seconds > 0 and run.first_epoch_seconds > 0
        assert len(run.epoch_seconds) == 2 and run.steady_seconds == float(np.median(run.epoch_seconds))
    assert process.step is not None and process.step.step_seconds > 0
    meta = process.metadata
    assert meta["injected_slowdown"] == 0.0 and meta["samples"] == 512 and meta["jax"] and meta["jaxlib"]
    assert ProcessResult.from_json(json.loads(json.dumps(process.to_json()))) == process  # what a worker prints


def test_the_test_hook_stretches_the_timed_region_by_its_fraction():
    now = [0.0]

    def clock():  # a fake clock: each reading takes a millisecond
        now[0] += 0.001
        return now[0]

    def work():
        now[0] += 2.0
        return "result"

    result, seconds = sweep.timed_with_hook(work, 0.1, clock=clock)
    assert result == "result" and seconds == pytest.approx(2.2, abs=0.003)
    assert sweep.timed_with_hook(work, 0.0, clock=clock)[1] == pytest.approx(2.001)


def test_the_test_hook_keeps_the_core_busy_for_its_share_of_real_time():
    start = time.process_time()
    _, seconds = sweep.timed_with_hook(lambda: time.sleep(0.1), 0.5)
    assert 0.15 <= seconds < 0.2 and time.process_time() - start >= 0.025  # spun on the CPU, did not sleep


def test_the_test_hook_is_recorded_with_the_results():
    slow = sweep.measure_process("synthetic", limit=256, epochs=2, timed_steps=0, inject_slowdown=0.1)
    assert slow.metadata["injected_slowdown"] == 0.1 and slow.step is None


def fake_process(jax_version: str, steady: float, seed: int) -> ProcessResult:
    rng = np.random.default_rng(seed)
    meta = dict(jax=jax_version, jaxlib=jax_version, backend="cpu", device_kind="cpu", host="fixture-host",
                dataset="synthetic", injected_slowdown=0.0, commit="abc", python="3.11.7", cpu_model="CPU",
                cpu_affinity=1, samples=2000, epochs=4)  # fmt: skip
    epochs = [2 * steady, *(steady * np.exp(rng.normal(0, 0.01, 3)))]
    return ProcessResult(meta, {"batched": PipelineTimes.of(0.3, epochs)}, StepTimes(0.2, 0.004))


def test_sweep_documents_keep_one_sample_per_process(tmp_path):
    processes = [fake_process("0.6.2", 1.0, i) for i in range(6)]
    doc = sweep.to_document("0.6.2", processes).to_benchmarks()
    epoch = next(b for b in doc.benchmarks if b.name == "sweep_epoch[batched]")
    assert epoch.stats.data == tuple(p.pipelines["batched"].steady_seconds for p in processes)
    assert epoch.stats.rounds == 6 and epoch.stats.median == float(np.median(epoch.stats.data))
    assert epoch.stats.q3 == float(np.quantile(epoch.stats.data, 0.75)) and epoch.extra_info["jax"] == "0.6.2"
    assert doc.is_sweep and {b.id for b in doc.benchmarks} == {b.id for b in registry.SWEEP}
    path = write_json_new(tmp_path / "jax-0.6.2.json", doc.to_json())
    read = read_benchmarks(path)
    assert read.samples()["sweep_first_epoch[batched]"] == [2.0] * 6
    assert SweepDocument.from_benchmarks(read).processes == tuple(processes)  # the raw processes, typed again


def test_report_orders_versions_and_flags_the_slow_step(tmp_path, capsys):
    folder = tmp_path / "jaxlib-20261201T000000"
    folder.mkdir()
    for version, steady in (("0.10.2", 1.2), ("0.4.30", 1.0), ("0.6.2", 1.0)):
        doc = sweep.to_document(version, [fake_process(version, steady, i) for i in range(8)])
        write_json_new(folder / f"jax-{version}.json", doc.to_json())
    results = ResultsStore(tmp_path).load()
    (section,) = [s for s in build_sections(results, folder=tmp_path) if s.title == "jax/jaxlib versions"]
    table, steps = (t for _, t in section.tables)
    assert list(table["jax"]) == ["0.4.30", "0.6.2", "0.10.2"]
    verdicts = steps[steps["benchmark"] == "sweep_epoch[batched]"].set_index("to")["verdict"]
    assert verdicts.to_dict() == {"0.6.2": "no change", "0.10.2": "regression"}
    assert section.plots and version_key("0.10.2") > version_key("0.9.2")
    assert section.note.startswith("jaxlib-20261201T000000: ")  # relative to the results folder
    assert "each sample is one process (8 a version, in rotating order; 4 epochs of 2000 images; 1 CPU(s) each)" in (
        section.note
    )
    assert {c for c in table.columns if "[" in c or c.startswith("sweep")} == {
        "sweep_compile[batched]", "sweep_epoch[batched]", "sweep_first_epoch[batched]", "sweep_step",
        "sweep_step_compile"}  # fmt: skip


def test_rounds_run_real_worker_processes_in_turn():
    order = []
    results = sweep.run_rounds(
        {"a": (sys.executable, ["--dataset", "synthetic", "--limit", "256", "--epochs", "2", "--timed-steps", "0"]),
         "b": (sys.executable, ["--dataset", "synthetic", "--limit", "256", "--epochs", "2", "--timed-steps", "0"])},
        processes=2,
        progress=lambda round_, label: order.append((round_, label)),
    )  # fmt: skip
    assert order == [(0, "a"), (0, "b"), (1, "b"), (1, "a")]
    assert [len(v) for v in results.values()] == [2, 2]
    assert all(isinstance(p, ProcessResult) for v in results.values() for p in v)


def test_the_order_rotates_each_round():
    assert [sweep.round_order(["A", "B", "C"], r) for r in range(4)] == [
        ["A", "B", "C"], ["B", "C", "A"], ["C", "A", "B"], ["A", "B", "C"]]  # fmt: skip


def test_a_failing_worker_is_named():
    with pytest.raises(RuntimeError, match="worker .* failed"):
        sweep.run_worker(sys.executable, ["--dataset", "nonsense"])


def test_nox_lists_the_version_matrix():
    listed = subprocess.run([sys.executable, "-m", "nox", "-l"], cwd=ROOT, capture_output=True, text=True).stdout
    versions = re.findall(r"jaxlib-env\(jax='([0-9.]+)'\)", listed)
    assert len(versions) >= 5 and versions[0].startswith("0.4.") and versions == sorted(versions, key=version_key)
    assert "bench-jaxlib" in listed


def test_trials_documents_are_not_taken_for_timings(tmp_path):
    settings = {"pipeline": "batched", "processes_per_side": 3, "trials": 0, "inject_slowdown": 0.1,
                "threshold": 0.05, "alpha": 0.01, "limit": None, "epochs": 4, "dataset": "synthetic"}  # fmt: skip
    doc = {"jaxmlp": "detector-trials", "metadata": {}, "settings": settings, "trials": []}
    (tmp_path / "trials.json").write_text(json.dumps(doc))
    results = ResultsStore(tmp_path).load()
    assert results.runs.empty and not results.skipped and len(results.trials) == 1


def test_trials_count_caught_slowdowns_and_false_alarms(tmp_path, monkeypatch, capsys):
    rng = np.random.default_rng(0)

    def run_rounds(runners, processes, progress=None):  # the workers' steady epochs, without starting them
        assert "--inject-slowdown" in runners["H"][1] and "--inject-slowdown" not in runners["A"][1]
        base = {"A": 1.0, "A2": 1.0, "H": 1.1}
        meta = {"jax": "0.10.2", "injected_slowdown": 0.0, "host": "here"}
        return {label: [ProcessResult(meta, {"batched": PipelineTimes.of(0.1, [2.0, base[label] * x])})
                        for x in np.exp(rng.normal(0, 0.01, processes))] for label in runners}  # fmt: skip

    monkeypatch.setattr(sweep, "run_rounds", run_rounds)
    assert sweep.main(["trials", "--trials", "3", "--processes", "10", "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    raw = json.loads(next(tmp_path.glob("detector-*/trials.json")).read_text())
    assert (raw["injected_flagged"], raw["aa_flagged"], len(raw["trials"])) == (3, 0, 3)
    expected = {"processes_per_side": 10, "trials": 3, "epochs": 16, "limit": 2000, "pipeline": "batched",
                "dataset": "synthetic"}  # fmt: skip
    assert {key: raw["settings"][key] for key in expected} == expected
    results = ResultsStore(tmp_path).load()
    (section,) = detector_sections(results.trials)
    ((_, doc),) = results.trials
    assert TrialsDocument.from_json(raw) == doc and doc.injected_flagged == 3
    injected, aa = (np.median([getattr(t, side).ratio for t in doc.trials]) for side in ("injected", "aa"))
    assert 1.09 < injected < 1.11 and 0.99 < aa < 1.01
    assert f"flagged in 3/3 trials (median ratio {injected:.3f})" in section.note
    assert f"A/A flagged in 0/3 (median ratio {aa:.3f})" in section.note
    assert f"slowdown flagged in 3/3 trials (median ratio {injected:.3f}); A/A flagged in 0/3 " in printed
    assert "10 processes a side" in printed


IMPOSSIBLE = [
    ["trials", "--trials", "0"],
    ["trials", "--processes", "0"],
    ["run", "--env", "a=python", "--processes", "-1"],
    ["run", "--env", "a", "--epochs", "1"],
    ["trials", "--inject-slowdown", "-0.1"],
]


@pytest.mark.parametrize("argv", IMPOSSIBLE)
def test_impossible_settings_are_one_line_errors(argv, capsys):
    assert sweep.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("jaxmlp sweep: error: --") and "must be" in err and len(err.splitlines()) == 1
