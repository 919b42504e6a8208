"""Which time a release comparison rests on: each process's wall time or its CPU time (all its threads), chosen
by a rule on the processes themselves (the method: docs/methods/statistics.md#wall-or-cpu). Wall time where the
two agree; CPU time where the run shows a neighbour (the wall/CPU ratio of its processes spread beyond
`CONTENTION`) and the two sides' ratios are alike (the change is not in waiting); wall time where they are not."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from jaxmlp.measure.records import ProcessResult

WALL, CPU = "wall time", "CPU time"
CONTENTION = 0.10
"""A run shows contention where its processes' wall/CPU ratios (each the ratio of its steady medians) spread more
than this either way around their median: on a quiet CPU the ratio of a call stays within a few percent."""
WAITING = 0.15
"""The two sides' median wall/CPU ratios further apart than this: a change in waiting (a wait, a lock, a sleep),
which CPU time does not see; the comparison stays on wall time. Under a neighbour a side's median ratio moves by
several percent from process to process (3 processes a side beside a busy loop: x0.948 apart with no change), so
a smaller change in waiting is not told from the neighbour."""


@dataclass(frozen=True)
class Metric:
    """The metric a comparison rests on (`WALL` or `CPU`) and why, in a few words."""

    name: str
    why: str

    @property
    def cpu(self) -> bool:
        return self.name == CPU


def ratios(processes: Sequence[ProcessResult], workload: str) -> list[float]:
    """Each process's steady wall time over its steady CPU time for ``workload``; [] where any lacks CPU time."""
    out = []
    for p in processes:
        times = p.workloads.get(workload)
        if times is None:
            continue
        if not times.has_cpu or not times.steady_cpu_seconds > 0:
            return []
        out.append(times.steady_seconds / times.steady_cpu_seconds)
    return out


def choose(baseline: Sequence[ProcessResult], new: Sequence[ProcessResult], workload: str) -> Metric:
    """The metric ``new`` against ``baseline`` is compared on for ``workload`` (the rule: the module's)."""
    a, b = ratios(baseline, workload), ratios(new, workload)
    if not a or not b:
        return Metric(WALL, "CPU time not recorded")
    both = a + b
    middle = statistics.median(both)
    spread = max(max(both) / middle - 1, 1 - min(both) / middle)
    shown = f"wall/CPU {min(both):.2f} to {max(both):.2f}"
    if spread <= CONTENTION:
        return Metric(WALL, f"wall and CPU time agree ({shown})")
    apart = statistics.median(b) / statistics.median(a)
    if abs(math.log(apart)) > math.log1p(WAITING):
        return Metric(WALL, f"{shown}, the sides' ratios x{apart:.3g} apart: the change may be in waiting")
    return Metric(CPU, f"a neighbour: {shown}, alike on both sides")


def steady(processes: Sequence[ProcessResult], workload: str, metric: Metric) -> list[float]:
    """Each process's steady state of ``workload`` in ``metric`` (seconds), those that measured it."""
    return [
        p.workloads[workload].steady_cpu_seconds if metric.cpu else p.workloads[workload].steady_seconds
        for p in processes
        if workload in p.workloads
    ]
