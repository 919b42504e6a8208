"""``jaxmlp track``'s measuring, settling and explaining, imported only where something is measured (it imports JAX)."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from jaxmlp import units
from jaxmlp.flows.explain import explain_change
from jaxmlp.flows.measured import measure_into
from jaxmlp.flows.progress import progress_bar
from jaxmlp.measure.environments import environments, envs
from jaxmlp.measure.records import ProcessResult
from jaxmlp.measure.sweep.budget import Stopwatch, Taken
from jaxmlp.measure.sweep.matrix import (
    Failure,
    Measured,
    Probed,
    Runner,
    Say,
    measure_cells,
    rounds,
    runners_for,
)
from jaxmlp.measure.sweep.settings import Matrix, Measuring
from jaxmlp.measure.sweep.unmeasured import unmeasured
from jaxmlp.report.explain import explain_text
from jaxmlp.results.schema.track import Tracked
from jaxmlp.results.store import layout
from jaxmlp.results.store.writing import write_new
from jaxmlp.results.sweep import settling
from jaxmlp.results.sweep.files import Plan, RunLog
from jaxmlp.results.sweep.folders import FiledChange
from jaxmlp.results.sweep.settling import Settle
from jaxmlp.stats import FASTER, SLOWER
from jaxmlp.units import minutes


def pythons_of(measured: Measured) -> dict[str, str]:
    """The Python each release's processes ran on (their first sample's)."""
    return {cell: str(done[0].metadata.get("python", "")) for cell, done in measured.processes.items() if done}


def measure(
    folder: Path, matrix: Matrix, measuring: Measuring, settle: Settle, began: float, say: Say
) -> tuple[Measured, list[Tracked], dict[str, str]]:
    """``matrix``'s releases measured into ``folder`` as a sweep, then settled (``settle``); a stopped call's folder
    keeps its samples and measures only what it lacks. Returns what was measured, the comparisons and the cells not
    measured."""
    log, plans = RunLog(folder), []
    watches: list[Stopwatch] = []  # the first rounds timed, from the probes' end on
    resume = log.incomplete
    done: dict[tuple[str, int], ProcessResult | Failure] = {}
    runners: list[Runner] = []
    if resume:
        plan, done = log.read()
        plans.append(plan)
        say(stopped_line(folder, done))
    else:
        pythons = environments(matrix, matrix.versions, say, tidy=True)
        runners = runners_for(pythons, matrix, measuring)
        write_new(log.mark, f"This call did not finish: {layout.TRACK_GOES_ON} goes on from its samples.\n")

    def planned(probed: Probed, differs: dict[str, dict[str, str]], limit: float) -> None:
        plans.append(Plan(tuple(runners), probed, differs, matrix, limit))
        log.start(plans[0])
        watches.append(Stopwatch(time.monotonic))

    def record(cell: str, round_: int, sample: ProcessResult | Failure) -> None:
        log.record(cell, round_, sample)
        if watches:
            watches[-1].ended(cell)

    def measure() -> Measured:
        if resume:  # the stopped call's plan: its cells, probes and environments, its samples kept
            watches.append(Stopwatch(time.monotonic))
            with envs.jaxmlp_path() as path:
                p = plans[0]
                rounds(p.probed, p.differs, p.matrix, p.limit, path, say, progress_bar, record, done)
        else:
            measure_cells(runners, matrix, say, progress_bar, record, planned)
        return settled(log, matrix, settle, began, say, watches[-1] if watches else None)

    measure_into(log, plans, measure, began, tables=False, goes_on=layout.TRACK_GOES_ON)  # the cell files written
    plan, samples = log.read()
    measured = log.measured(plan, samples)
    comparisons = settling.comparisons_of(measured, settle.pairs, settle.workloads, settle.threshold)
    deadline = began + settle.budget * 60
    return measured, explain(comparisons, matrix, folder, measured.probed, deadline, say), unmeasured(measured)


def stopped_line(folder: Path, done: Mapping[tuple[str, int], ProcessResult | Failure]) -> str:
    """The one line of a call that goes on from a stopped one: its folder and the samples it keeps."""
    kept = sum(not isinstance(s, Failure) for s in done.values())
    return f"Going on from the stopped call in {folder}: {units.count(kept, 'sample')} kept, none measured again"


def explain(
    comparisons: Sequence[Tracked],
    matrix: Matrix,
    folder: Path,
    probed: Probed,
    deadline: float,
    say: Say,
) -> list[Tracked]:
    """Each slower or faster comparison explained into the call's folder, the slower first, while the budget lasts
    (docs/questions/tracking.md); one that is not says why in its ``unexplained``."""
    made: dict[tuple[str, str, str], tuple[str, str]] = {}
    took: list[float] = []  # each explanation's seconds: the next one costs at least what they did
    for t in sorted(comparisons, key=lambda t: t.verdict != SLOWER):
        key = (t.baseline, t.release, t.workload)
        if t.verdict not in (SLOWER, FASTER) or key in made:
            continue
        cost, left = max([settling.explain_cost([t], probed), *took]), deadline - time.monotonic()
        if cost > left:
            made[key] = (
                "",
                f"not explained: the budget is spent (about {minutes(cost)} needed, "
                f"{minutes(max(left, 0.0))} left; --budget gives more)",
            )
            say(f"{t.workload}: {t.baseline} -> {t.release} {made[key][1]}")
            continue
        change, began = FiledChange(t.workload, "", t.baseline, t.release, t.verdict), time.monotonic()
        outcome, why = explain_change(folder, change, matrix)
        took.append(time.monotonic() - began)
        if outcome is None:
            made[key] = ("", why)
            continue
        write_new(outcome.folder / layout.EXPLAIN_TEXT, explain_text(outcome.document, outcome.folder) + "\n")
        made[key] = (layout.shown(outcome.folder, folder.parent), "")
    return [
        dataclasses.replace(t, explanation=made[k][0], unexplained=made[k][1])
        if (k := (t.baseline, t.release, t.workload)) in made and t.verdict in (SLOWER, FASTER)
        else t
        for t in comparisons
    ]


def settled(
    log: RunLog, matrix: Matrix, settle: Settle, began: float, say: Say, first: Stopwatch | None = None
) -> Measured:
    """Rounds added to inconclusive comparisons' cells until settled or out of budget, from every sample in ``log``;
    each round planned at the slowest process so far (the probes', ``first``'s rounds', its own)."""
    plan, samples = log.read()
    processes = settling.rounds_held(samples, matrix.processes)
    taken, watch = Taken(plan.probed.seconds), first
    while True:
        measured = log.measured(plan, samples)
        taken = taken if watch is None else watch.taken(taken)
        elapsed = time.monotonic() - began
        next_ = settling.settling(
            measured, settle.pairs, settle.workloads, settle.budget, elapsed, processes, settle.threshold, taken
        )
        if next_.line:
            say(next_.line)
        if not next_.more:
            return measured
        processes += next_.more
        probed = replace(
            measured.probed, runners={n: r for n, r in measured.probed.runners.items() if n in next_.cells}
        )
        watch = Stopwatch(time.monotonic)
        with envs.jaxmlp_path() as path:
            more_rounds = replace(matrix, processes=processes)
            timed = watch.recording(log.record)
            rounds(probed, measured.differs, more_rounds, plan.limit, path, say, progress_bar, timed, samples)
        plan, samples = log.read()
