"""The results layer: names, atomic writes, the one walk of a folder, typed records, and every command that takes
a results path given one that is relative with "..", under a dot-folder, or a symbolic link."""

import json
import os
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import EARLIER_TRIALS

from jaxmlp.cli import main
from jaxmlp.errors import JaxmlpError
from jaxmlp.measure.records import ProcessResult, WorkloadTimes
from jaxmlp.measure.sweep import matrix
from jaxmlp.results.schema import parse
from jaxmlp.results.schema.bench import BenchmarkDocument, Stats
from jaxmlp.results.schema.common import CURRENT
from jaxmlp.results.schema.machines import MACHINE
from jaxmlp.results.schema.train import TrainDocument
from jaxmlp.results.schema.trials import TrialsDocument
from jaxmlp.results.store import layout
from jaxmlp.results.store.reading import read_document
from jaxmlp.results.store.writing import ResultsStore, new_dir, numbered, unique_path, write_json_new

FIXTURES = Path(__file__).parent / "fixtures"


# --- names ----------------------------------------------------------------------------------------------------


def test_one_naming_rule():
    assert layout.stamp("2026-12-01T10:00:00.5+00:00") == "20261201T100000"
    assert layout.stamp("2026-12-01T11:00:00+01:00") == "20261201T100000"  # in UTC
    assert layout.stamp("yesterday") == "undated" and len(layout.stamp()) == 15
    assert layout.name(layout.BENCH, "2026-12-01T10:00:00", "cpu", suffix=".json") == "bench-20261201T100000-cpu.json"
    assert layout.name(layout.TRAIN, "2026-12-01T10:00:00", "mnist", None, "") == "train-20261201T100000-mnist"
    assert layout.sweep_file("0.10.2") == "jax-0.10.2.json" and layout.trace_run("scan", "2026-12-01T10:00:00") == (
        "scan-20261201T100000"
    )
    assert [numbered("jax-0.10.2.json", n) for n in (1, 2)] == ["jax-0.10.2.json", "jax-0.10.2-2.json"]
    assert numbered("report-20261201T100000", 3) == "report-20261201T100000-3"


def test_new_names_never_reuse_an_earlier_one(tmp_path):
    (tmp_path / "a.json").write_text("{}")
    assert unique_path(tmp_path, "a.json") == tmp_path / "a-2.json"
    assert [new_dir(tmp_path / "runs", "scan").name for _ in range(3)] == ["scan", "scan-2", "scan-3"]
    with pytest.raises(JaxmlpError, match="does not exist"):
        unique_path(tmp_path / "missing", "a.json")


def test_documents_are_saved_under_their_own_name(tmp_path):
    store = ResultsStore(tmp_path)
    bench = read_document(FIXTURES / "bench-cpu.json")
    train = read_document(FIXTURES / "train-cpu.json")
    assert store.save(bench).name == "bench-20261201T100000-cpu.json"
    assert store.save(bench).name == "bench-20261201T100000-cpu-2.json"
    assert store.save(train).name == "train-20261201T090000-mnist-seed.json"
    copy = json.loads((tmp_path / "bench-20261201T100000-cpu.json").read_text())
    original = json.loads((FIXTURES / "bench-cpu.json").read_text())
    assert (copy.pop("kind"), copy.pop("schema_version")) == ("bench", CURRENT)
    meta = copy["machine_info"]["jaxmlp"]
    machine = {key: meta.pop(key) for key in MACHINE}  # a file before version 5: its machine told from its metadata
    assert set(copy) == set(original) and copy["machine_info"] == original["machine_info"]  # everything it wrote
    assert machine == {
        "machine_cpu": "Fixture CPU",
        "machine_cores": 2,
        "machine_backend": "cpu",
        "machine_device": None,
        "machine_name": None,
    }


def test_a_folder_result_appears_whole_or_not_at_all(tmp_path):
    store = ResultsStore(tmp_path)
    with store.new_folder(layout.SWEEP) as folder:
        write_json_new(folder.path / "a.json", {})
        assert folder.path.name.startswith(".") and not store.scan().documents  # hidden while it is written
    assert folder.path.parent == tmp_path and folder.path.name.startswith("sweep-")
    assert sorted(p.name for p in folder.path.iterdir()) == ["a.json"]
    with pytest.raises(RuntimeError), store.new_folder(layout.SWEEP) as broken:
        write_json_new(broken.path / "a.json", {})
        raise RuntimeError("the sweep failed")
    assert [p.name for p in tmp_path.iterdir()] == [folder.path.name]
    with pytest.raises(JaxmlpError, match="already exists"), store.new_folder(layout.REPORT, folder.path):
        pass


# --- the one walk ---------------------------------------------------------------------------------------------


def test_one_walk_finds_documents_and_captures_and_skips_hidden_and_corrupt_files(tmp_path):
    root = tmp_path / ".cache" / "results"  # the folder itself under a dot-folder: not hidden
    (root / "sub").mkdir(parents=True)
    (root / ".hidden").mkdir()
    shutil.copy(FIXTURES / "bench-cpu.json", root / "sub")
    shutil.copy(FIXTURES / "bench-cpu.json", root / ".hidden")
    shutil.copy(FIXTURES / "train-cpu.json", root / ".bench.json.x1y2.tmp")  # an atomic write's temporary file
    (root / "corrupt.json").write_text("{oops")
    (root / "run" / "plugins" / "profile" / "t").mkdir(parents=True)
    (root / "run" / "plugins" / "profile" / "t" / "host.xplane.pb").write_bytes(b"")
    os.symlink(root / "sub", root / "again")  # a second way to the same folder: walked once
    os.symlink(root, root / "sub" / "loop")  # a loop: walked once
    scan = ResultsStore(root).scan()
    assert [f.path.relative_to(root).as_posix() for f in scan.documents] == ["again/bench-cpu.json"]
    assert [s.path.name for s in scan.skipped] == ["corrupt.json"] and scan.skipped[0].why.startswith("not readable")
    assert [c.name for c in scan.captures] == ["host.xplane.pb"]
    assert (root / "corrupt.json").read_text() == "{oops"  # never modified


def test_files_that_are_not_results_say_why():
    with pytest.raises(JaxmlpError, match="neither a pytest-benchmark file nor"):
        parse({"hello": "world"})
    with pytest.raises(JaxmlpError, match="missing or malformed field"):
        parse({"jaxmlp": "detector-trials", "settings": {}})


# --- typed records --------------------------------------------------------------------------------------------


def test_stats_are_numpy_s_and_round_trip():
    data = [0.3, 0.1, 0.4, 0.15, 0.9]
    stats = Stats.of(data)
    assert (stats.median, stats.q1, stats.q3) == tuple(float(np.quantile(data, q)) for q in (0.5, 0.25, 0.75))
    assert stats.stddev == pytest.approx(np.std(data, ddof=1)) and stats.rounds == 5 and stats.data == tuple(data)
    assert Stats.from_json(json.loads(json.dumps(stats.to_json()))) == stats


def test_benchmark_and_train_documents_are_typed():
    bench = read_document(FIXTURES / "bench-cpu.json")
    assert isinstance(bench, BenchmarkDocument) and not bench.is_sweep and bench.backends == ("cpu",)
    row = next(b for b in bench.benchmarks if b.name == "test_update[cpu-128-jit]")
    assert (row.id, row.params["batch_size"], row.stats.median, row.extra_info["compile_seconds"]) == (
        "test_update",
        128,
        0.004,
        0.5,
    )
    assert bench.commit == "0123456789abcdef" and bench.metadata["size"] == "quick"
    train = read_document(FIXTURES / "train-cpu.json")
    assert isinstance(train, TrainDocument) and [r["epoch"] for r in train.records] == [0, 1, 2]
    assert TrainDocument.from_json(train.to_json()) == train


def test_a_version_3_bench_file_reads_under_todays_names_and_per_product():
    doc = json.loads((FIXTURES / "bench-cpu.json").read_text())
    doc["machine_info"]["jaxmlp"].update(kind="bench", schema_version=3)  # written before the epochs had precision
    doc["benchmarks"].append(
        {
            **doc["benchmarks"][0],
            "name": "test_gemm[cpu-xla-f32-128x512x10]",
            "params": {"backend": "cpu", "library": "xla", "precision": "f32", "shape": "128x512x10"},
            "extra_info": {"calls": 8, "flops": 8 * 2 * 128 * 512 * 10},
            "stats": {**doc["benchmarks"][0]["stats"], "median": 0.8, "data": [0.8, 1.6]},
        }
    )  # a round of 8 products
    read = parse(doc)
    names = [b.name for b in read.benchmarks]
    assert "test_epoch[cpu-seed-f32]" not in names and "test_epoch[cpu-seed-0-f32]" in names  # workers, precision
    (gemm,) = (b for b in read.benchmarks if b.name.startswith("test_gemm"))
    assert gemm.stats.median == pytest.approx(0.1) and gemm.stats.data == pytest.approx([0.1, 0.2])
    assert gemm.extra_info["round_calls"] == 8 and "calls" not in gemm.extra_info
    assert gemm.extra_info["flops"] == 2 * 128 * 512 * 10
    assert read.to_json()["schema_version"] == CURRENT


def test_trials_documents_read_their_earlier_form():
    comparison = {
        "n_baseline": 3,
        "n_new": 3,
        "baseline_median": 1.0,
        "new_median": 1.1,
        "ratio": 1.1,
        "ci_low": None,
        "ci_high": None,
        "p_slower": None,
        "p_faster": None,
        "verdict": "insufficient data",
    }
    earlier = {
        "jaxmlp": "detector-trials",
        "metadata": {"jax": "0.10.2"},
        "injected_flagged": 0,
        "aa_flagged": 0,
        "settings": {**EARLIER_TRIALS, "rounds": 1},
        "trials": [{"trial": 0, "values": {"A": [1.0] * 3}, "injected": comparison, "aa": comparison}],
    }
    doc = parse(earlier)
    assert isinstance(doc, TrialsDocument) and doc.settings.trials == 1 and np.isnan(doc.trials[0].injected.p_slower)
    again = doc.to_json()
    assert again["settings"]["trials"] == 1 and "rounds" not in again["settings"]
    assert again["trials"][0]["injected"]["ci_low"] is None  # NaN stored as null, as JSON allows
    assert parse(json.loads(json.dumps(again))) == doc


# --- every command that takes a results path ------------------------------------------------------------------


@pytest.fixture(params=["relative-with-dotdot", "under-a-dot-folder", "symlinked"])
def place(request, tmp_path, monkeypatch):
    """``place(name)``: a results folder ``name``, made, and the path a user would type for it from the cwd."""
    kind = request.param
    root = {
        "relative-with-dotdot": tmp_path / "results",
        "under-a-dot-folder": tmp_path / ".cache" / "results",
        "symlinked": tmp_path / "real",
    }[kind]
    work = root / "work" if kind == "relative-with-dotdot" else tmp_path
    work.mkdir(parents=True, exist_ok=True)
    root.mkdir(parents=True, exist_ok=True)
    monkeypatch.chdir(work)

    def make(name: str) -> str:
        (root / name).mkdir(exist_ok=True)
        if kind == "relative-with-dotdot":
            return f"../{name}"
        if kind == "under-a-dot-folder":
            return f".cache/results/{name}"
        link = tmp_path / f"{name}-link"
        if not link.exists():
            os.symlink(root / name, link)
        return link.name

    make.root = root
    return make


def bench_file(folder: Path, name: str, median: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    data = list(median * np.exp(rng.normal(0, 0.01, 8)))
    doc = {
        "machine_info": {},
        "datetime": "2026-12-01T00:00:00",
        "benchmarks": [
            {
                "name": "test_epoch[cpu-scan]",
                "group": "g",
                "params": {"backend": "cpu", "pipeline": "scan"},
                "extra_info": {},
                "stats": {"median": float(np.median(data)), "rounds": 8, "data": data},
            }
        ],
    }
    (folder / name).write_text(json.dumps(doc))


def test_compare_takes_any_folder_path(place, capsys):
    old, new = place("old"), place("new")
    bench_file(place.root / "old", "base.json", 1.0, 0)
    bench_file(place.root / "new", "new.json", 1.3, 1)
    (place.root / "new" / "broken.json").write_text("{")
    if new == "../new":  # the reported case: `cd new_results && jaxmlp compare ../old .`
        os.chdir("../new")
        old, new = "../old", "."
    assert main(["compare", old, new, "--fail-on-regression"]) == 3
    captured = capsys.readouterr()
    assert "1 slower, 0 faster" in captured.out and "8/8" in captured.out
    assert captured.err.count("\n") == 1 and "jaxmlp compare: warning: skipped" in captured.err


def test_report_and_summary_take_any_folder_path(place, capsys):
    results = place("res")
    shutil.copy(FIXTURES / "bench-cpu.json", place.root / "res")
    shutil.copy(FIXTURES / "train-cpu.json", place.root / "res")
    assert main(["report", "--results", results]) == 0
    assert "Report of 25 rows from 2 files" in capsys.readouterr().out
    (report,) = [p for p in (place.root / "res").iterdir() if p.name.startswith("report-")]
    assert "bench-cpu.json" in (report / "summary.md").read_text()
    assert main(["summary", f"{results}/bench-cpu.json", "--save", place("saved")]) == 0
    assert [p.name for p in (place.root / "saved").iterdir()] == ["bench-20261201T100000-cpu.json"]


def test_the_sweep_writes_into_any_folder_path(place, monkeypatch, capsys):
    def run_worker(runner, pythonpath=None, timeout=None):  # a worker's result, without starting one
        meta = {"jax": "0.10.2", "jaxlib": "0.10.2", "injected_slowdown": 0.0, "host": "here", "dataset": "synthetic"}
        return ProcessResult(meta, {"batched": WorkloadTimes.of(0.1, [2.0, 1.0])})

    monkeypatch.setattr(matrix, "run_worker", run_worker)
    out = place("out")
    assert main(["sweep", "run", "--env", f"0.10.2={sys.executable}", "--processes", "3", "--out", out]) == 0
    (folder,) = (place.root / "out").iterdir()
    assert folder.name.startswith("sweep-") and sorted(p.name for p in folder.iterdir()) == [
        "cells.json",
        "jax-0.10.2.json",
        "samples.jsonl",
    ]
    assert main(["report", "--results", out]) == 0
    assert "## Version matrix" in next((place.root / "out").glob("report-*/summary.md")).read_text()


def test_a_track_folder_s_call_record_is_no_result_file_to_skip(tmp_path):
    """``call.json`` beside a track call's results (its arguments, for ``sweep resume``) is not read as a result, so
    no reading of the folder warns about it; a ``call.json`` elsewhere is read as any file is."""
    from jaxmlp.results.store import layout, reading

    track = tmp_path / "track-20261207T160813-m-1"
    track.mkdir()
    (track / layout.TRACK_CALL).write_text('{"argv": ["track"], "cwd": "."}')
    (tmp_path / layout.TRACK_CALL).write_text("{}")
    assert list(reading.files(tmp_path)) == [tmp_path / layout.TRACK_CALL]
    assert [s.path for s in reading.scan(tmp_path).skipped] == [tmp_path / layout.TRACK_CALL]
