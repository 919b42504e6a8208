"""`jaxmlp sweep trials --noise hog`: a busy loop on the workers' CPU while inside, gone after (a real process), a
hog without pinned workers refused in one line; the found rates' intervals."""

from __future__ import annotations

import os
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
