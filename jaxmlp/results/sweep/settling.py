"""`jaxmlp track`'s settling (pure): the comparisons, the explanations' cost and the next round's processes."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from jaxmlp import units
from jaxmlp.measure.sweep.budget import Taken
from jaxmlp.measure.sweep.matrix import Measured, Probed
from jaxmlp.registry import THRESHOLD, version_key
from jaxmlp.results.schema.track import Tracked
from jaxmlp.results.sweep import metric
from jaxmlp.results.sweep.explain_files import EXPLAIN_PROCESSES
from jaxmlp.stats import FASTER, INCONCLUSIVE, SLOWER, Comparison, processes_to_settle
from jaxmlp.units import minutes

MIN_SIDE = 5
"""The fewest processes a side a verdict can rest on (p < 0.01 reachable: `jaxmlp.stats.smallest_p`)."""


@dataclass(frozen=True)
class Settle:
    """What a call's settling needs: its pairs, workloads, budget in minutes and ± band."""

    pairs: tuple[tuple[str, str, str], ...]
    workloads: tuple[str, ...]
    budget: float
    threshold: float = THRESHOLD


def rounds_held(samples: Iterable[tuple[str, int]], planned: int) -> int:
    """The processes a release a call's log holds already, planned or more."""
    return max([planned, *(round_ + 1 for _, round_ in samples)])


def more_processes(comparison: Comparison, threshold: float = THRESHOLD) -> int:
    """The processes a side to add to an inconclusive comparison; 0 for a settled one (docs/methods/statistics.md)."""
    if comparison.word != INCONCLUSIVE:
        return 0
    settle = processes_to_settle(comparison, threshold)
    if settle is not None and settle > 0:
        return settle
    n = min(comparison.n_baseline, comparison.n_new)
    return max(MIN_SIDE - n, n, 1)


def unsettled(comparisons: Iterable[Tracked]) -> list[Tracked]:
    return [c for c in comparisons if c.verdict == INCONCLUSIVE]


def comparisons_of(
    measured: Measured, pairs: Iterable[tuple[str, str, str]], workloads: Sequence[str], threshold: float = THRESHOLD
) -> list[Tracked]:
    """Each of a call's pairs compared on each workload against the ``threshold`` band (`metric.compared`)."""
    return metric.compared(measured.processes, pairs, workloads, measured.apart, threshold)


def _one_workload(cell: str, workload: str, probed: Probed) -> float:
    """An estimate of the seconds a process of ``cell`` measuring ``workload`` alone takes, from its probe."""
    seconds = probed.seconds.get(cell, 0.0)
    process = probed.reference.get(cell)
    if process is None or workload not in process.workloads:
        return seconds
    others = sum(
        t.compile_seconds + t.first_seconds + sum(t.call_seconds) for w, t in process.workloads.items() if w != workload
    )
    return max(seconds - others, 0.0)


def explain_cost(comparisons: Sequence[Tracked], probed: Probed) -> float:
    """An estimate of the seconds the explanations of ``comparisons``' changes take."""
    changes = {(t.baseline, t.release, t.workload) for t in comparisons if t.verdict in (SLOWER, FASTER)}
    return sum(EXPLAIN_PROCESSES * (_one_workload(a, w, probed) + _one_workload(b, w, probed)) for a, b, w in changes)


@dataclass(frozen=True)
class Settling:
    """The next settling round: its cells, the processes it adds (0: settling ends) and its line."""

    cells: tuple[str, ...]
    more: int
    line: str


def settling(
    measured: Measured,
    pairs: Iterable[tuple[str, str, str]],
    workloads: Sequence[str],
    budget: float,
    elapsed: float,
    processes: int,
    threshold: float = THRESHOLD,
    taken: Taken | None = None,
) -> Settling:
    """Rounds for the inconclusive comparisons' cells that fit in what is left of ``budget`` (minutes), each
    process at the slowest so far (``taken``: the probes' and the rounds' timed; None: the probes')."""
    comparisons = comparisons_of(measured, pairs, workloads, threshold)
    open_ = [t for t in unsettled(comparisons) if more_processes(t.comparison, threshold)]
    if not open_:  # every inconclusive one is given processes (`more_processes`): none is left
        return Settling((), 0, "")
    probed = measured.probed
    cells = tuple(sorted({c for t in open_ for c in (t.release, t.baseline) if c in probed.runners}, key=version_key))
    taken = Taken(probed.seconds) if taken is None else taken
    per_round = taken.per_round(cells)
    left = budget * 60 - elapsed - explain_cost(comparisons, probed)  # the changes found are explained first
    fit = taken.fit(left, cells)
    if fit < 1:
        return Settling(
            (),
            0,
            f"{units.count(len(open_), 'comparison')} still inconclusive after {processes} processes a release: the "
            f"budget is spent ({minutes(elapsed)} of {budget:g} min; --budget gives more)",
        )
    more = min(max(more_processes(t.comparison, threshold) for t in open_), fit)
    return Settling(
        cells,
        more,
        f"{units.count(len(open_), 'comparison')} inconclusive: {more} more process(es) for {', '.join(cells)} "
        f"(about {minutes(more * per_round)}; {minutes(left)} of the budget left)",
    )
