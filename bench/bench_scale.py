"""`jaxmlp summary` and `jaxmlp report` over a large results folder: each command a fresh process, timed from start
to exit, with its own peak memory (the child's maximum resident set, from ``wait4``).

The folder is made once a session by `make_scale_folder.make` (``scale_folder`` in `conftest.SIZES`: at
``--size full`` 1,000 benchmark runs, 50 sweeps and 20 timelines, with 6 corrupt or truncated files) from the real
results in ``reports/`` (the committed runs), or from ``tests/fixtures/scale`` at ``--size smoke``, so that
`nox -s tests`' smoke pass never reads the user's results. Each round is one whole command (``scale_rounds``, not
``--rounds``: a round of the full size lasts up to a minute). The check, once: the command exits 0 and says one
line for each corrupt file.
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


def run_command(argv: list[str], out: Path) -> tuple[float, int, str]:
    """Run ``argv`` as a child (its output to files in ``out``): (seconds from start to exit, its peak resident set
    in bytes, its stderr), or a failure saying how it ended."""
    out.mkdir(parents=True, exist_ok=True)
    with (out / "stdout").open("wb") as stdout, (out / "stderr").open("wb") as stderr:
        start = time.perf_counter()
        child = subprocess.Popen(argv, stdout=stdout, stderr=stderr, cwd=out)
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            seconds = time.perf_counter() - start
            if pid:
                break
            if seconds > TIME_LIMIT:
                child.kill()
                child.wait()
                pytest.fail(f"{' '.join(argv[2:])}: stopped after {TIME_LIMIT} s")
            time.sleep(0.02)
    child.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait for it again
    err = (out / "stderr").read_text(errors="replace")
    if child.returncode != 0:
        pytest.fail(f"{' '.join(argv[2:])} exited {child.returncode}: {err.strip().splitlines()[-1:]}")
    return seconds, usage.ru_maxrss * 1024, err  # Linux: ru_maxrss in KiB


@pytest.mark.parametrize("variant", registry.RESULTS_FOLDER.variants)
def test_results_folder(benchmark, variant, scale_folder, sizes, tmp_path):
    folder, made = scale_folder
    jaxmlp = [sys.executable, "-m", "jaxmlp"]
    runs: list[tuple[float, int, str]] = []

    def once() -> None:
        where = tmp_path / f"round-{len(runs)}"
        if variant == "summary":
            argv = [*jaxmlp, "summary", str(folder)]
        else:
            argv = [*jaxmlp, "report", "--results", str(folder), "--out", str(where / "report")]
        runs.append(run_command(argv, where))

    benchmark.pedantic(once, rounds=sizes["scale_rounds"], iterations=1, warmup_rounds=0)
    warnings = [line for line in runs[0][2].splitlines() if ": warning: skipped " in line]
    assert len(warnings) == made["corrupt"], runs[0][2]  # one line for each corrupt file, no more
    if variant == "report":
        assert sorted(p.name for p in (tmp_path / "round-0" / "report").iterdir()) == sorted(REPORT_FILES)
    # pytest-benchmark times the round, which waits for the child's exit: the command's own wall time
    benchmark.extra_info.update(
        command=variant,
        command_peak_rss_bytes=max(peak for _, peak, _ in runs),
        folder_runs=made["runs"],
        folder_sweeps=made["sweeps"],
        folder_timelines=made["timelines"],
        folder_corrupt=made["corrupt"],
        folder_source=made["source"],
    )
