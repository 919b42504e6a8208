"""``jaxmlp sweep timeline A B``: every release from A to B measured as one matrix, then each change explained."""

from __future__ import annotations

import contextlib
import sys
import time
from dataclasses import replace
from pathlib import Path

from jaxmlp.flows.explain import explain_change
from jaxmlp.flows.measured import SweepOutcome, ended, measure_into
from jaxmlp.flows.progress import progress_bar
from jaxmlp.flows.ranks import follow_rank_0, lead
from jaxmlp.measure.distributed import Ranks
from jaxmlp.measure.environments import disk, environments
from jaxmlp.measure.sweep import timeline as flow
from jaxmlp.measure.sweep.matrix import Measured, Probed, Record, measure_cells, runners_for
from jaxmlp.measure.sweep.settings import Matrix, Measuring, Timeline
from jaxmlp.results.store import layout
from jaxmlp.results.store.writing import ResultsStore, check_folder
from jaxmlp.results.sweep.files import Plan, RunLog
from jaxmlp.results.sweep.folders import timeline_changes


def measure(
    *,
    timeline: Timeline,
    measuring: Measuring,
    matrix: Matrix,
    out: Path,
    ranks: Ranks | None = None,
    strict: bool = False,
) -> SweepOutcome:
    """The releases of ``timeline`` measured as one sweep matrix into a new timeline folder under ``out``, then each
    change point found explained there; ``ranks`` share its rounds. ``strict``: an inconclusive comparison exits 4."""
    quiet = ranks and ranks.rank  # rank 0 speaks: the others' lines go to stderr
    with contextlib.redirect_stdout(sys.stderr) if quiet else contextlib.nullcontext():
        return _measure(timeline, measuring, matrix, out, ranks, strict)


def _measure(
    timeline: Timeline, measuring: Measuring, asked: Matrix, out: Path, ranks: Ranks | None, strict: bool
) -> SweepOutcome:
    """The timeline in one direction: its releases, environments, this rank's part measured, filed and explained."""
    start = time.monotonic()
    store = ResultsStore(check_folder(out, "--out"))
    versions = flow.releases(timeline)
    matrix = flow.shared(replace(asked, versions=tuple(versions)), ranks.share if ranks else (0, 1))
    print("\n".join(flow.opening(timeline, versions, matrix, asked.processes, ranked=ranks is not None)))
    pythons = environments(matrix, versions)
    if not (ranks and ranks.rank):  # one rank tidies the environments (a shared folder's, maybe)
        disk.prune(versions, matrix.envs, source=matrix.source)
    runners = runners_for(pythons, matrix, measuring)
    if ranks and ranks.rank:
        return SweepOutcome(follow_rank_0(runners, matrix, store.folder, ranks, print, progress_bar), 0)
    log = RunLog.create(store, layout.TIMELINE)
    print(f"Samples go into {log.folder} as they are measured")
    plans: list[Plan] = []

    def fit(probed: Probed) -> Matrix:
        per_round = sum(probed.seconds.values())
        fitted = flow.fitted(timeline, matrix, per_round)
        print(flow.cost(len(probed.runners), fitted, per_round, time.monotonic() - start))
        return fitted

    def planned(probed: Probed, differs: dict[str, dict[str, str]], limit: float) -> None:
        fitted = flow.fitted(timeline, matrix, sum(probed.seconds.values()))
        plans.append(Plan(tuple(runners), replace(probed, reference={}), differs, fitted, limit))
        log.start(plans[0])

    def rounds(record: Record) -> Measured:
        return measure_cells(runners, matrix, print, progress_bar, record, planned, fit)

    def mine() -> Measured:  # rank 0's part under mpirun or srun, else the whole
        return lead(log, store.folder, ranks, rounds) if ranks else rounds(log.record)

    code, unmeasured_cells = measure_into(log, plans, mine, start, shared=bool(ranks), strict=strict)
    changes = timeline_changes(log.folder)
    for change in changes:
        explain_change(log.folder, change, plans[0].matrix)
    return ended(code, unmeasured_cells, log.folder, changes)
