"""The version sweep: worker measurements, alternation, its benchmark files, the report's version section."""

import json
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from jaxmlp import sweep
from jaxmlp.report import build_sections, version_key
from jaxmlp.results import benchmark_samples, load_results
from jaxmlp.store import write_json_new

ROOT = Path(__file__).parent.parent


@pytest.fixture(scope="module")
def process():
    return sweep.measure_process("synthetic", limit=512, epochs=3, step_rounds=3)


def test_a_process_measures_compile_first_and_steady_epochs(process):
    for pipeline in sweep.SWEEP_PIPELINES:
        run = process["pipelines"][pipeline]
        assert run["compile_seconds"] > 0 and run["first_epoch_seconds"] > 0
        assert len(run["epoch_seconds"]) == 2 and run["steady_seconds"] == float(np.median(run["epoch_seconds"]))
    assert process["step"]["step_seconds"] > 0
    meta = process["metadata"]
    assert meta["injected_slowdown"] == 0.0 and meta["samples"] == 512 and meta["jax"] and meta["jaxlib"]


def test_the_test_hook_stretches_the_timed_region_by_its_fraction():
    now = [0.0]
    slept = []

    def work():
        now[0] += 2.0
        return "result"

    def sleep(seconds):
        slept.append(seconds)
        now[0] += seconds

    assert sweep.timed_with_hook(work, 0.1, clock=lambda: now[0], sleep=sleep) == ("result", pytest.approx(2.2))
    assert slept == [pytest.approx(0.2)]
    assert sweep.timed_with_hook(work, 0.0, clock=lambda: now[0], sleep=sleep) == ("result", 2.0)
    assert len(slept) == 1


def test_the_test_hook_is_recorded_with_the_results():
    slow = sweep.measure_process("synthetic", limit=256, epochs=2, step_rounds=0, inject_slowdown=0.1)
    assert slow["metadata"]["injected_slowdown"] == 0.1 and "step" not in slow


def fake_process(jax_version: str, steady: float, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    meta = dict(jax=jax_version, jaxlib=jax_version, backend="cpu", device_kind="cpu", host="fixture-host",
                dataset="synthetic", injected_slowdown=0.0, commit="abc", python="3.11.7", cpu_model="CPU")  # fmt: skip
    epochs = list(steady * np.exp(rng.normal(0, 0.01, 3)))
    return {
        "metadata": meta,
        "pipelines": {
            "batched": {
                "compile_seconds": 0.3,
                "first_epoch_seconds": 2 * steady,
                "epoch_seconds": epochs,
                "steady_seconds": float(np.median(epochs)),
            }
        },  # fmt: skip
        "step": {"compile_seconds": 0.2, "step_seconds": 0.004},
    }


def test_benchmark_documents_keep_one_sample_per_process(tmp_path):
    processes = [fake_process("0.6.2", 1.0, i) for i in range(6)]
    doc = sweep.to_benchmark_doc("0.6.2", processes)
    epoch = next(b for b in doc["benchmarks"] if b["name"] == "sweep_epoch[batched]")
    assert epoch["stats"]["data"] == [p["pipelines"]["batched"]["steady_seconds"] for p in processes]
    assert epoch["stats"]["rounds"] == 6 and epoch["extra_info"]["jax"] == "0.6.2"
    assert doc["machine_info"]["jaxmlp"]["sweep"] is True
    path = write_json_new(tmp_path / "jax-0.6.2.json", doc)
    assert benchmark_samples(path)["sweep_first_epoch[batched]"] == [2.0] * 6


def test_report_orders_versions_and_flags_the_slow_step(tmp_path, capsys):
    folder = tmp_path / "jaxlib-20261201T000000"
    folder.mkdir()
    for version, steady in (("0.10.2", 1.2), ("0.4.30", 1.0), ("0.6.2", 1.0)):
        doc = sweep.to_benchmark_doc(version, [fake_process(version, steady, i) for i in range(8)])
        write_json_new(folder / f"jax-{version}.json", doc)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = load_results(tmp_path)
    (section,) = [s for s in build_sections(results) if s["title"] == "jax/jaxlib versions"]
    table, steps = (t for _, t in section["tables"])
    assert list(table["jax"]) == ["0.4.30", "0.6.2", "0.10.2"]
    verdicts = steps[steps["benchmark"] == "sweep_epoch[batched]"].set_index("to")["verdict"]
    assert verdicts.to_dict() == {"0.6.2": "no change", "0.10.2": "regression"}
    assert section["plots"] and version_key("0.10.2") > version_key("0.9.2")


def test_alternation_runs_real_worker_processes_in_turn():
    order = []
    results = sweep.alternate(
        {"a": (sys.executable, ["--dataset", "synthetic", "--limit", "256", "--epochs", "2", "--step-rounds", "0"]),
         "b": (sys.executable, ["--dataset", "synthetic", "--limit", "256", "--epochs", "2", "--step-rounds", "0"])},
        processes=2,
        progress=lambda round_, label: order.append((round_, label)),
    )  # fmt: skip
    assert order == [(0, "a"), (0, "b"), (1, "a"), (1, "b")]
    assert [len(v) for v in results.values()] == [2, 2]


def test_a_failing_worker_is_named():
    with pytest.raises(RuntimeError, match="worker .* failed"):
        sweep.run_worker(sys.executable, ["--dataset", "nonsense"])


def test_nox_lists_the_version_matrix():
    listed = subprocess.run([sys.executable, "-m", "nox", "-l"], cwd=ROOT, capture_output=True, text=True).stdout
    versions = re.findall(r"jaxlib-env\(jax='([0-9.]+)'\)", listed)
    assert len(versions) >= 5 and versions[0].startswith("0.4.") and versions == sorted(versions, key=version_key)
    assert "bench-jaxlib" in listed


def test_trials_documents_are_not_taken_for_timings(tmp_path):
    (tmp_path / "trials.json").write_text(json.dumps({"jaxmlp": "detector-trials", "trials": []}))
    results = load_results(tmp_path)
    assert results.runs.empty and not results.skipped
