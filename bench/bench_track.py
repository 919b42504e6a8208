"""`jaxmlp track`'s time against the goals a team has (`registry.TRACK_NOTHING_SECONDS`, `TRACK_NEW_SECONDS`): a
call with nothing new answers in seconds; a new release tracked for the MLP epoch and two small workloads (the
corpus's `scan_scatter_linearize`, `bench/workloads/scan_heavy.py`), its environment made from wheels included, in
minutes. Each call is a fresh `jaxmlp` process timed from start to exit (`bench_scale.run_command`, its own peak
memory), the host's one-minute load average before and after said beside it (the host may be shared).

The second needs real wheels and makes environments: it runs only where ``JAXMLP_BENCH_WHEELS`` names a folder
holding jax and jaxlib 0.7.0 and 0.7.1 for this Python (`pip download`), never at ``--size smoke``, and makes its
environments in a fresh folder (``--envs``), so that their making is timed."""

import json
import os
import sys
from pathlib import Path

import pytest
from bench_scale import run_command

from jaxmlp import registry

ROOT = Path(__file__).resolve().parent.parent
WHEELS = "JAXMLP_BENCH_WHEELS"
HERE = f"cp{sys.version_info.major}{sys.version_info.minor}"
SMALL = (
    ROOT / "bench" / "corpus" / "cases" / "scan_scatter_linearize.py",
    ROOT / "bench" / "workloads" / "scan_heavy.py",
)


def _said(name: str, seconds: float, peak: int, goal: float, load: tuple[float, float]) -> None:
    """The figure as the closing note reads it: one JSON line on stdout (pytest -s shows it)."""
    line = {"benchmark": name, "seconds": round(seconds, 1), "goal_seconds": goal, "met": seconds <= goal}
    line |= {"peak_rss_bytes": peak, "load_before": load[0], "load_after": load[1]}
    print(json.dumps(line))


def _wheels(folder: Path, versions) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for v in versions:
        (folder / f"jax-{v}-py3-none-any.whl").write_bytes(b"")
        (folder / f"jaxlib-{v}-{HERE}-{HERE}-manylinux2014_x86_64.whl").write_bytes(b"")
    return folder


def test_track_nothing_new(request, tmp_path):
    """A history that holds the newest release: the call lists the source, reads the history, says one line. The
    goal is checked where the benchmarks are run for their figures, not at --size smoke (a check that it runs, on a
    machine that may be busy)."""
    wheels = _wheels(tmp_path / "wheels", ["0.7.0"])
    out = tmp_path / "reports"
    args = ["track", "--wheels", str(wheels), "--out", str(out), "--workload", f"{SMALL[0]}:make", f"{SMALL[1]}:make"]
    run_command(args, tmp_path / "start")
    before = os.getloadavg()[0]
    seconds, peak, _ = run_command(args, tmp_path / "again")
    assert (tmp_path / "again" / "stdout").read_text().startswith("Nothing new to track")
    _said("track, nothing new", seconds, peak, registry.TRACK_NOTHING_SECONDS, (before, os.getloadavg()[0]))
    assert request.config.getoption("--size") == "smoke" or seconds <= registry.TRACK_NOTHING_SECONDS


def test_track_a_new_release(request, tmp_path):
    """0.7.1 new beside 0.7.0: both environments made (a fresh --envs), probed, measured 6 processes each in
    rotating order (more where inconclusive, within the 12-minute --budget), filed."""
    given = os.environ.get(WHEELS)
    if request.config.getoption("--size") == "smoke":
        pytest.skip("makes two release environments and measures minutes: not at --size smoke")
    if not given or not Path(given).is_dir():
        pytest.skip(f"set {WHEELS} to a folder of jax and jaxlib 0.7.0 and 0.7.1 wheels (pip download)")
    first = tmp_path / "first"
    first.mkdir()
    for wheel in Path(given).glob("*-0.7.0-*.whl"):
        (first / wheel.name).symlink_to(wheel.resolve())
    out, envs = tmp_path / "reports", tmp_path / "envs"
    args = ["track", "--pinned", "0.7.0", "--out", str(out), "--envs", str(envs), "--calls", "5"]
    args += ["--workload", *(f"{w}:make" for w in SMALL)]
    run_command([*args, "--wheels", str(first)], tmp_path / "start")
    before = os.getloadavg()[0]
    seconds, peak, _ = run_command([*args, "--wheels", given], tmp_path / "new", codes=(0, 3))  # 0.7.1 is slower
    said = (tmp_path / "new" / "stdout").read_text()
    assert "New in the wheels in " in said and "jax 0.7.1" in said
    _said("track, a new release", seconds, peak, registry.TRACK_NEW_SECONDS, (before, os.getloadavg()[0]))
    assert seconds <= registry.TRACK_NEW_SECONDS
