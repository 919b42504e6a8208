"""`jaxmlp summary` and `jaxmlp report` over a large results folder: each command a fresh process, timed from start
to exit, with its own peak memory, read first (cold: no index of the folder yet) and then again (warm).

The peak is the command's own: its process's ``VmHWM`` (the high-water mark of its resident set), which it writes at
exit through a small wrapper (`PEAK_WRAPPER`). ``wait4``'s ``ru_maxrss`` is not: Linux carries the parent's high-water
mark into a child through fork, vfork and posix_spawn alike (a ``/bin/true`` started from a Python process holding
200 MiB reads 211 MiB each way; ``/usr/bin/time -f %M`` reads under 2 MiB, and the wrapper agrees with it within
1 MiB on a `jaxmlp summary`).

The folder is made once a session by `make_scale_folder.make` (``scale_folder`` in `conftest.SIZES`: at
``--size full`` `registry.STORE_FOLDER`, 10,000 benchmark runs, 200 sweeps and 50 timelines, with 6 corrupt or
truncated files, the folder the goals of a store that holds years hold for: `registry.STORE_WARM_SECONDS`,
`STORE_COLD_SECONDS`, `STORE_MEMORY`, met or missed in `tables.results_folder_table`) from the real
results in ``reports/`` (the committed runs), or from ``tests/fixtures/scale`` at ``--size smoke``, so that
`nox -s tests`' smoke pass never reads the user's results. Each test first reads the folder cold (its index
removed: ``cold_seconds``, ``cold_peak_rss_bytes``), then times ``scale_rounds`` warm rounds, each one whole
command (not ``--rounds``); the host's one-minute load average before the cold read and after the last round is kept
beside them (``load_before``, ``load_after``: the host may be shared). The check, once: the command exits 0 and
says one line for each corrupt file, cold and warm.
"""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from make_scale_folder import make

from jaxmlp import registry
from jaxmlp.report.write import REPORT_FILES
from jaxmlp.results.store.index import INDEX_NAME

ROOT = Path(__file__).resolve().parent.parent
TIME_LIMIT = 20 * 60
"""Seconds a command may take before it is stopped (and the benchmark fails): far beyond the report's goal."""


@pytest.fixture(scope="session")
def scale_folder(request, sizes, tmp_path_factory):
    """The generated folder and what it holds (its counts, and where it was copied from)."""
    smoke = request.config.getoption("--size") == "smoke"
    source = ROOT / ("tests/fixtures/scale" if smoke else "reports")
    folder = tmp_path_factory.mktemp("scale") / "results"
    made = make(source, folder, **sizes["scale_folder"], log=lambda line: None)
    return folder, {**made, "source": str(source.relative_to(ROOT))}


PEAK_WRAPPER = """
import atexit, runpy, sys
PEAK = sys.argv.pop(1)
def peak():
    with open("/proc/self/status") as f:
        kib = next(line.split()[1] for line in f if line.startswith("VmHWM:"))
    with open(PEAK, "w") as f:
        f.write(kib)
atexit.register(peak)
sys.argv[0] = "jaxmlp"
runpy.run_module("jaxmlp", run_name="__main__", alter_sys=True)
"""
"""``python -c PEAK_WRAPPER FILE ARGS...``: ``python -m jaxmlp ARGS...`` that writes its own peak (KiB) to FILE."""


def run_command(args: list[str], out: Path, codes: tuple[int, ...] = (0,)) -> tuple[float, int, str]:
    """Run ``jaxmlp ARGS`` as a child (its output to files in ``out``): (seconds from start to exit, its own peak
    resident set in bytes, its stderr), or a failure saying how it ended (an exit code not among ``codes``)."""
    out.mkdir(parents=True, exist_ok=True)
    peak = out / "peak-kib"
    argv = [sys.executable, "-c", PEAK_WRAPPER, str(peak), *args]
    with (out / "stdout").open("wb") as stdout, (out / "stderr").open("wb") as stderr:
        start = time.perf_counter()
        child = subprocess.Popen(argv, stdout=stdout, stderr=stderr, cwd=out)
        try:
            child.wait(timeout=TIME_LIMIT)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
            pytest.fail(f"jaxmlp {' '.join(args)}: stopped after {TIME_LIMIT} s")
        seconds = time.perf_counter() - start
    err = (out / "stderr").read_text(errors="replace")
    if child.returncode not in codes:
        pytest.fail(f"jaxmlp {' '.join(args)} exited {child.returncode}: {err.strip().splitlines()[-1:]}")
    return seconds, int(peak.read_text()) * 1024, err


def without_index(folder: Path) -> None:
    """The folder as never read: its index (and the index's log) removed."""
    for suffix in ("", "-wal", "-shm"):
        (folder / f"{INDEX_NAME}{suffix}").unlink(missing_ok=True)


@pytest.mark.parametrize("variant", registry.RESULTS_FOLDER.variants)
def test_results_folder(benchmark, variant, scale_folder, sizes, tmp_path):
    folder, made = scale_folder
    runs: list[tuple[float, int, str]] = []

    def command(where: Path) -> tuple[float, int, str]:
        if variant == "summary":
            return run_command(["summary", str(folder)], where)
        return run_command(["report", "--results", str(folder), "--out", str(where / "report")], where)

    without_index(folder)
    load_before = os.getloadavg()[0]
    cold = command(tmp_path / "cold")
    benchmark.pedantic(
        lambda: runs.append(command(tmp_path / f"round-{len(runs)}")),
        rounds=sizes["scale_rounds"],
        iterations=1,
        warmup_rounds=0,
    )
    for _, _, err in (cold, runs[0]):
        warnings = [line for line in err.splitlines() if ": warning: skipped " in line]
        assert len(warnings) == made["corrupt"], err  # one line for each corrupt file, no more
    if variant == "report":
        assert sorted(p.name for p in (tmp_path / "round-0" / "report").iterdir()) == sorted(REPORT_FILES)
    # pytest-benchmark times the warm rounds, each waiting for the child's exit: the command's own wall time
    benchmark.extra_info.update(
        command=variant,
        command_peak_rss_bytes=max(peak for _, peak, _ in runs),
        cold_seconds=cold[0],
        cold_peak_rss_bytes=cold[1],
        peak_measured="VmHWM of the command's own process",
        folder_runs=made["runs"],
        folder_sweeps=made["sweeps"],
        folder_timelines=made["timelines"],
        folder_corrupt=made["corrupt"],
        folder_source=made["source"],
        load_before=load_before,
        load_after=os.getloadavg()[0],
    )
