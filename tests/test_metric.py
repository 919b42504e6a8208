"""Which time a comparison rests on (`jaxmlp.measure.wall_or_cpu`): wall time where wall and CPU time agree, CPU
time where a neighbour shows on both sides alike, wall time where the sides' wall/CPU ratios differ (a change in
waiting) or CPU time was not recorded; and each call's CPU time kept with its wall time (schema version 9)."""

from __future__ import annotations

import json
import math

import numpy as np

from jaxmlp.measure import wall_or_cpu as metric
from jaxmlp.measure.records import ProcessResult, WorkloadTimes
from jaxmlp.results.sweep.metric import compared
from jaxmlp.results.sweep.tracked import verdict_line


def _process(cpu: float, wall: float | None = None, with_cpu: bool = True) -> ProcessResult:
    wall = cpu if wall is None else wall
    times = WorkloadTimes.of(0.1, [wall] * 4, None, [cpu] * 4 if with_cpu else ())
    return ProcessResult({}, {"w": times})


def _side(cpu: float, walls: list[float], with_cpu: bool = True) -> list[ProcessResult]:
    return [_process(cpu, w, with_cpu) for w in walls]


def test_each_call_s_cpu_time_is_kept_and_an_older_file_reads_without_it():
    times = WorkloadTimes.of(0.1, [2.0, 1.0, 1.2, 1.1], None, [1.9, 0.9, 1.0, 0.95])
    assert times.has_cpu and times.steady_cpu_seconds == 0.95 and times.call_cpu_seconds == (0.9, 1.0, 0.95)
    back = WorkloadTimes.from_json(json.loads(json.dumps(times.to_json())))
    assert back.steady_cpu_seconds == 0.95 and back.call_cpu_seconds == times.call_cpu_seconds
    old = {k: v for k, v in times.to_json().items() if "cpu" not in k}
    assert not WorkloadTimes.from_json(old).has_cpu and math.isnan(WorkloadTimes.from_json(old).steady_cpu_seconds)


def test_wall_time_where_the_two_agree():
    rng = np.random.default_rng(0)
    quiet = [float(x) for x in 1.0 + rng.normal(0, 0.01, 6)]
    chosen = metric.choose(_side(1.0, quiet), _side(1.0, quiet), "w")
    assert chosen.name == metric.WALL and chosen.why.startswith("wall and CPU time agree")


def test_cpu_time_where_a_neighbour_shows_on_both_sides_alike():
    """Interleaved processes, some beside a busy loop (wall doubled), alike on both sides: CPU time; the comparison
    on it finds a x1.10 step the wall time's spread would hide."""
    walls = [1.0, 2.1, 1.05, 1.9, 1.0, 2.2, 1.1, 1.95]
    a = _side(1.0, walls)
    b = [_process(1.1 + 0.001 * i, 1.1 * w) for i, w in enumerate(walls)]
    chosen = metric.choose(a, b, "w")
    assert chosen.name == metric.CPU and "neighbour" in chosen.why
    (t,) = compared({"0.7.0": a, "0.7.1": b}, [("0.7.1", "0.7.0", "previous")], ["w"])
    assert t.metric == metric.CPU and t.verdict == "slower" and t.comparison.ratio > 1.09
    assert "; on CPU time: a neighbour" in verdict_line(t)


def test_wall_time_where_the_change_is_in_waiting_or_cpu_time_was_not_recorded():
    a = _side(1.0, [1.0, 1.3, 1.0, 1.35, 1.02, 1.3])
    b = _side(1.0, [2.0, 2.6, 2.0, 2.7, 2.04, 2.6])  # the same CPU time, twice the wall: it waits
    chosen = metric.choose(a, b, "w")
    assert chosen.name == metric.WALL and "waiting" in chosen.why
    assert metric.choose(_side(1.0, [1.0] * 6, False), _side(1.0, [1.0] * 6), "w").why == "CPU time not recorded"
