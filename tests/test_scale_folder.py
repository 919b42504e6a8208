"""bench/make_scale_folder.py: a large results folder made from real ones, which every command reads, skipping each
corrupt file in one line."""

import json
import subprocess
import sys
from pathlib import Path

from jaxmlp.results.schema.bench import BenchmarkDocument
from jaxmlp.results.store import layout
from jaxmlp.results.store.frames import load
from jaxmlp.results.store.reading import read_document
from jaxmlp.results.store.writing import ResultsStore

ROOT = Path(__file__).parent.parent
SCRIPT = ROOT / "bench" / "make_scale_folder.py"
SOURCE = Path(__file__).parent / "fixtures" / "scale"


def make(out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), str(SOURCE), str(out), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )


def test_the_folder_holds_the_runs_sweeps_timelines_and_corrupt_files_asked_for(tmp_path):
    out = tmp_path / "scale"
    done = make(out, "--runs", "9", "--sweeps", "2", "--timelines", "2", "--every", "1")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"{out}: 9 runs, 2 sweeps, 2 timelines, 6 corrupt"
    scan = ResultsStore(out).scan()
    runs = sorted(scan.of(BenchmarkDocument), key=lambda found: str(found[1].datetime))
    bench = [(p, d) for p, d in runs if d.kind == "bench"]
    assert len(bench) == 9 and len({d.commit for _, d in bench}) == 9  # each run its own date and commit
    assert [layout.stamp_in(p) for p, _ in bench] == sorted(layout.stamp_in(p) for p, _ in bench)
    assert len(list(out.glob("sweep-*"))) == 2 and len(list(out.glob("timeline-*"))) == 2
    assert len(scan.skipped) == 6  # one of each corruption, each skipped with its reason
    assert all(s.why for s in scan.skipped)

    real = read_document(SOURCE / "bench-20261205T191503-cpu.json")
    first, last = bench[0][1], bench[-1][1]
    for copy in (first, last):  # the same benchmarks, times moved by a few percent (the last third: 8% slower too)
        assert [b.name for b in copy.benchmarks] == [b.name for b in real.benchmarks]
    ratios = [c.stats.median / r.stats.median for c, r in zip(first.benchmarks, real.benchmarks) if r.stats]
    assert min(ratios) > 0.85 and max(ratios) < 1.15 and len(set(ratios)) > 1
    later = [c.stats.median / r.stats.median for c, r in zip(last.benchmarks, real.benchmarks) if r.stats]
    assert sum(later) / len(later) > sum(ratios) / len(ratios)

    results = load(ResultsStore(out))
    assert results.runs["file"].nunique() == 9 + 2 * 2 + 2 * 3 - 1  # runs, sweep cells, timeline cells (one cut)


def test_it_never_writes_over_a_folder_and_says_what_it_needs(tmp_path):
    (tmp_path / "taken").mkdir()
    done = make(tmp_path / "taken")
    assert done.returncode == 2 and "already exists" in done.stderr and "Traceback" not in done.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(empty), str(tmp_path / "new")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 1 and "holds no runs to copy" in done.stderr and "Traceback" not in done.stderr
    assert json.loads((SOURCE / "timeline-20261205T171450" / "cells.json").read_text())["kind"] == "sweep-cells"


def test_a_run_of_the_scale_benchmark_itself_is_no_source(tmp_path):
    import shutil

    source = tmp_path / "source"
    shutil.copytree(SOURCE, source)
    doc = json.loads((SOURCE / "bench-20261205T191503-cpu.json").read_text())
    doc["benchmarks"] = [{**doc["benchmarks"][0], "name": "test_results_folder[summary]"}]
    (source / "bench-20261206T183936-host.json").write_text(json.dumps(doc))
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import make_scale_folder
    finally:
        sys.path.remove(str(SCRIPT.parent))
    runs, _, _ = make_scale_folder.sources(source)
    assert [p.name for p in runs] == ["bench-20261205T191503-cpu.json"]
