"""`jaxmlp sweep trials --noise hog`: a busy loop on the workers' CPU while inside, gone after (a real process), a
hog without pinned workers refused in one line; the found rates' intervals."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jaxmlp.errors import JaxmlpError
from jaxmlp.measure import noise
from jaxmlp.results.schema.trials import wilson


def _children() -> set[int]:
    """This process's live children (from /proc: their parent's pid), zombies left out."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == os.getpid() and fields[0] != "Z":
            found.add(int(stat.parent.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_the_hog_runs_while_inside_and_never_after():
    before = _children()
    with noise.neighbour("hog", 0):
        (hog,) = _children() - before
        for _ in range(200):  # until it has pinned itself (its interpreter starting, on a loaded machine too)
            if os.sched_getaffinity(hog) == {0}:
                break
            time.sleep(0.05)
        assert os.sched_getaffinity(hog) == {0}  # on the workers' CPU
    assert hog not in _children()
    with pytest.raises(RuntimeError), noise.neighbour("hog", 0):  # ended however it is left
        raise RuntimeError("stopped")
    assert _children() == before


def test_a_hog_needs_pinned_workers_and_a_known_noise():
    with pytest.raises(JaxmlpError, match="--noise hog needs --pin-cpu N"):
        noise.check("hog", None)
    with pytest.raises(JaxmlpError, match="unknown --noise 'loud'"):
        noise.check("loud", 0)
    noise.check("none", None)


def test_found_rates_have_wilson_intervals():
    low, high = wilson(0, 2)
    assert low == 0 and high == pytest.approx(0.658, abs=0.001)
    low, high = wilson(19, 20)
    assert low == pytest.approx(0.764, abs=0.001) and high == pytest.approx(0.991, abs=0.001)


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="CPU affinity is Linux's")
def test_a_hog_on_a_cpu_this_process_may_not_run_on_is_one_line():
    """Not a traceback from the busy loop (its affinity refused) while the trials run without their neighbour."""
    outside = max(os.sched_getaffinity(0)) + 1
    with pytest.raises(JaxmlpError, match=f"--pin-cpu {outside} is not a CPU this process may run on"):
        noise.check("hog", outside)
    noise.check("hog", min(os.sched_getaffinity(0)))


PARENT = """
import sys, time
sys.path.insert(0, sys.argv[1])
if sys.argv[2] == "bench":
    from bench.neighbour import busy
    print(busy(0).pid, flush=True)
else:
    from jaxmlp.measure import noise
    inside = noise.neighbour("hog", 0)  # kept: a context collected would end the hog
    inside.__enter__()
    print("inside", flush=True)
time.sleep(60)
"""


def _gone(pid: int, seconds: float = 10.0) -> bool:
    """Whether ``pid`` has ended (or is a zombie) within ``seconds``."""
    for _ in range(int(seconds / 0.05)):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state == "Z":
            return True
        time.sleep(0.05)
    return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
@pytest.mark.parametrize("who", ["jaxmlp", "bench"])
def test_a_busy_loop_dies_with_the_process_that_started_it_even_killed(who):
    """SIGKILL (or a timeout's SIGTERM) runs no ``finally``: the busy loop goes all the same (`workers.guarded`),
    `sweep trials --noise hog`'s and `bench/neighbour.py`'s."""
    root = Path(__file__).resolve().parents[1]
    parent = subprocess.Popen([sys.executable, "-c", PARENT, str(root), who], stdout=subprocess.PIPE, text=True)
    try:
        said = parent.stdout.readline().strip() if parent.stdout else ""
        hogs = [int(p.parent.name) for p in Path("/proc").glob("[0-9]*/stat") if _parent_of(p) == parent.pid]
        assert said and hogs, said
    finally:
        parent.kill()
        parent.wait()
    left = [hog for hog in hogs if not _gone(hog)]
    for hog in left:  # none left behind on this machine, even when the test fails
        os.kill(hog, signal.SIGKILL)
    assert left == [], "the busy loop outlived the process that started it"


def _parent_of(stat: Path) -> int:
    try:
        return int(stat.read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return -1


def test_trials_whose_processes_all_failed_end_in_one_line(monkeypatch):
    """Not an IndexError from the first trial's missing first process: what failed, in one line (exit 1)."""
    from jaxmlp.errors import NotMeasured
    from jaxmlp.measure.sweep import trials
    from jaxmlp.measure.sweep.settings import Detector, Measuring, Trials

    monkeypatch.setenv("REMOVED_API", "tree_map")
    spec = f"{Path(__file__).parent / 'workloads' / 'removed_api.py'}:make"
    measuring = Measuring((spec,), dataset="synthetic", limit=256, epochs=2, calls=2)
    kept: list[object] = []
    with pytest.raises(NotMeasured, match="every process of A failed.*has no attribute 'tree_map'"):
        trials.run(Trials(1, 1), measuring, Detector(), _silent, lambda meta, t: kept.append(t), said=lambda _: None)
    assert kept == []


@contextlib.contextmanager
def _silent(total: int):
    yield lambda round_, name: None


PINNED = """
import os, sys
sys.path.insert(0, sys.argv[1])
import numpy  # its BLAS pool's threads start here, before any pinning
from jaxmlp.measure.sweep.worker import pin
cpu = int(sys.argv[2])
pin(cpu)
tasks = os.listdir("/proc/self/task")
print(len(tasks), sorted({frozenset(os.sched_getaffinity(int(t))) == {cpu} for t in tasks}))
"""


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="a process's threads are listed by Linux's /proc")
def test_a_pinned_worker_pins_every_thread_those_started_before_it_too():
    cpu = min(os.sched_getaffinity(0))
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "2", "OMP_NUM_THREADS": "2"}
    root = Path(__file__).resolve().parents[1]
    run = subprocess.run(
        [sys.executable, "-c", PINNED, str(root), str(cpu)], capture_output=True, text=True, env=env, timeout=60
    )
    assert run.returncode == 0, run.stderr
    threads, pinned = run.stdout.split(maxsplit=1)
    assert int(threads) >= 1 and pinned.strip() == "[True]"
