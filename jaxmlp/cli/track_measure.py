"""``jaxmlp track``'s measuring: the new releases and those they are compared with measured side by side as a sweep
(`jaxmlp.measure.sweep.matrix`: a probe process each, then rounds in rotating order) into the call's folder, then
processes added to the inconclusive comparisons while the budget lasts. Imported by `jaxmlp.cli.track` only when
there is something to measure: a call with nothing new answers without importing JAX."""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from jaxmlp import units
from jaxmlp.cli.sweep.common import progress_bar
from jaxmlp.cli.sweep.measured import measure_into
from jaxmlp.measure.records import ProcessResult
from jaxmlp.measure.sweep import envs
from jaxmlp.measure.sweep.matrix import (
    Measured,
    Probed,
    Say,
    environments,
    measure_cells,
    rounds,
    runners_for,
    unmeasured,
)
from jaxmlp.measure.sweep.settings import Matrix, Measuring
from jaxmlp.measure.sweep.track import Step, Track
from jaxmlp.registry import version_key
from jaxmlp.results.schema.track import Tracked
from jaxmlp.results.store.writing import write_new
from jaxmlp.results.sweep import tracked
from jaxmlp.results.sweep.files import Plan, RunLog
from jaxmlp.units import minutes


def pythons_of(measured: Measured) -> dict[str, str]:
    """The Python each release's processes ran on (their first sample's)."""
    return {cell: str(done[0].metadata.get("python", "")) for cell, done in measured.processes.items() if done}


def measure(
    step: Step, settings: Track, measuring: Measuring, matrix: Matrix, folder: Path, began: float, say: Say
) -> tuple[Measured, list[Tracked], dict[str, str]]:
    """The step's releases measured into ``folder`` as a sweep (its log, then its cell files); processes added to
    the inconclusive comparisons while the budget lasts. Returns what was measured, the comparisons and the cells
    that could not be measured."""
    pythons = environments(matrix, matrix.versions, say)
    envs.prune(matrix.versions, matrix.envs, say, matrix.source)
    runners = runners_for(pythons, matrix, measuring)
    log = RunLog(folder)
    write_new(log.mark, "This call did not finish: its releases are measured again by the next `jaxmlp track`.\n")
    plans: list[Plan] = []

    def planned(probed: Probed, differs: dict[str, dict[str, str]], limit: float) -> None:
        plans.append(Plan(tuple(runners), probed, differs, matrix, limit))
        log.start(plans[0])

    def measure() -> Measured:
        measured = measure_cells(runners, matrix, say, progress_bar, log.record, planned)
        return _settle(step, settings, measuring, matrix, log, measured, began, say)

    measure_into(log, plans, measure, began, tables=False)  # the cell files written
    plan, samples = log.read()
    measured = log.measured(plan, samples)
    comparisons = tracked.compared(_samples(measured.processes, measuring.names), step.pairs, measuring.names)
    return measured, comparisons, unmeasured(measured)


def _samples(
    processes: Mapping[str, Sequence[ProcessResult]], workloads: Sequence[str]
) -> dict[str, dict[str, list[float]]]:
    return {cell: {w: tracked.steady(done, w) for w in workloads} for cell, done in processes.items()}


def _settle(
    step: Step,
    settings: Track,
    measuring: Measuring,
    matrix: Matrix,
    log: RunLog,
    measured: Measured,
    began: float,
    say: Say,
) -> Measured:
    """Rounds added to the cells of the inconclusive comparisons, as many as would settle them (about) and as fit in
    what is left of the budget (the probe's seconds a process); until none is inconclusive or the budget ends."""
    processes = matrix.processes
    while True:
        comparisons = tracked.compared(_samples(measured.processes, measuring.names), step.pairs, measuring.names)
        open_ = tracked.unsettled(comparisons)
        if not open_:
            return measured
        cells = {c for t in open_ for c in (t.release, t.baseline) if c in measured.probed.runners}
        per_round = sum(measured.probed.seconds.get(c, 0.0) for c in cells)
        left = settings.budget * 60 - (time.monotonic() - began)
        fit = math.floor(left / per_round) if per_round > 0 else 0
        wanted = max(tracked.more_processes(t.comparison) for t in open_)
        if fit < 1:
            say(
                f"{units.count(len(open_), 'comparison')} still inconclusive after {processes} processes a release: "
                f"the budget is spent ({minutes(time.monotonic() - began)} of {settings.budget:g} min; --budget "
                "gives more)"
            )
            return measured
        more = min(wanted, fit)
        say(
            f"{units.count(len(open_), 'comparison')} inconclusive: {more} more process(es) for "
            f"{', '.join(sorted(cells, key=version_key))} (about {minutes(more * per_round)}; {minutes(left)} of "
            "the budget left)"
        )
        processes += more
        plan, samples = log.read()
        probed = dataclasses.replace(
            measured.probed, runners={n: r for n, r in measured.probed.runners.items() if n in cells}
        )
        with envs.jaxmlp_path() as path:
            more_rounds = replace(matrix, processes=processes)
            rounds(probed, measured.differs, more_rounds, plan.limit, path, say, progress_bar, log.record, samples)
        plan, samples = log.read()
        measured = log.measured(plan, samples)
