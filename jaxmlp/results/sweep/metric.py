"""`jaxmlp track`'s comparisons, each on the time `wall_or_cpu.choose` gives it, which it names."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace

from jaxmlp.measure.records import ProcessResult
from jaxmlp.measure.wall_or_cpu import choose, steady
from jaxmlp.registry import ALPHA, THRESHOLD
from jaxmlp.results.schema.track import Tracked
from jaxmlp.results.sweep import tracked


def compared(
    processes: Mapping[str, Sequence[ProcessResult]],
    pairs: Iterable[tuple[str, str, str]],
    workloads: Sequence[str],
    apart: Callable[[str, str], Mapping[str, str]] | None = None,
    threshold: float = THRESHOLD,
    alpha: float = ALPHA,
) -> list[Tracked]:
    """`tracked.compared` of each pair and workload on the metric `choose` gives it, which it names; results that differ
    are not compared on time, a workload that failed in a cell not at all."""
    out = []
    for release, baseline, against in pairs:
        for workload in workloads:
            a, b = processes.get(baseline, ()), processes.get(release, ())
            if any(side and all(workload not in p.workloads for p in side) for side in (a, b)):
                continue  # it failed where its cell ran: named as not measured, not compared
            metric = choose(a, b, workload)
            samples = {
                baseline: {workload: steady(a, workload, metric)},
                release: {workload: steady(b, workload, metric)},
            }
            differs = {release: apart(baseline, release)} if apart else None  # this pair's own two sides
            (t,) = tracked.compared(samples, [(release, baseline, against)], [workload], threshold, alpha, differs)
            out.append(t if t.differs else replace(t, metric=metric.name, metric_why=metric.why))
    return out
