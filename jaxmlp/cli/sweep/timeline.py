"""``jaxmlp sweep timeline A B``: every release from A to B measured as one matrix, then each change explained."""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from dataclasses import replace
from pathlib import Path

from jaxmlp.cli import options
from jaxmlp.cli.sweep.common import add_matrix, add_measuring, matrix_of, measuring_of, progress_bar, releases
from jaxmlp.cli.sweep.explain import explain_change
from jaxmlp.cli.sweep.measured import SweepOutcome, ended, measure_into
from jaxmlp.cli.sweep.ranks import (
    Ranks,
    announce,
    beating,
    gather,
    mark_done,
    meet,
    meeting_file,
    others_stopped,
    rank_0_plan,
    rank_log,
    recorder,
    said_processes,
    take_rank_files,
    telling,
)
from jaxmlp.errors import Interrupted, JaxmlpError
from jaxmlp.measure.sweep import envs
from jaxmlp.measure.sweep import timeline as flow
from jaxmlp.measure.sweep.matrix import (
    Measured,
    Probed,
    Runner,
    environments,
    follow,
    measure_cells,
    runners_for,
)
from jaxmlp.measure.sweep.settings import Matrix, Measuring, Timeline
from jaxmlp.results.store import layout
from jaxmlp.results.store.writing import ResultsStore, check_folder
from jaxmlp.results.sweep.files import Plan, RunLog
from jaxmlp.results.sweep.folders import timeline_changes
from jaxmlp.units import minutes

HELP = "every release from A to B, and where the time changed"
DESCRIPTION = (
    "Measure every release published for jax and jaxlib alike from A to B "
    "(patch releases included) in its own environment, fresh processes in rotating order "
    "as `run` does; then the change points, transients and drifts of each workload's steady "
    "state (README: the release timeline)."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    options.add(parser, *options.TIMELINE_RANGE)
    add_measuring(parser)
    add_matrix(parser)
    options.add(parser, options.STRICT)


def run(args: argparse.Namespace) -> int:
    """Every release from A to B as one sweep matrix, then its change points (`jaxmlp.changepoints`); under mpirun
    or srun, the ranks share its rounds (`jaxmlp.cli.sweep.ranks`) and rank 0 files it."""
    timeline = Timeline(args.first, args.last, releases(args.versions), args.every, args.budget, args.wheels)
    measuring, matrix, out = measuring_of(args), matrix_of(args), Path(args.out)
    ranks = Ranks.found()
    return measure(timeline=timeline, measuring=measuring, matrix=matrix, out=out, ranks=ranks, strict=args.strict).code


def measure(
    *,
    timeline: Timeline,
    measuring: Measuring,
    matrix: Matrix,
    out: Path,
    ranks: Ranks | None = None,
    strict: bool = False,
) -> SweepOutcome:
    """The releases of ``timeline`` (exactly these: its ends and ``versions`` those releases, 3 or more) measured as
    one sweep matrix (``matrix``, its versions the timeline's; its ``source`` where their environments come from, the
    same wheel folder as ``timeline.wheels``) into a new timeline folder under ``out``, then each change point found
    explained into it. ``ranks`` (`Ranks.found`, under mpirun or srun) share its rounds: rank 0 files it, the
    others' lines go to stderr. ``strict``: an inconclusive comparison exits 4 (`errors.gate`)."""
    quiet = ranks and ranks.rank  # rank 0 speaks: the others' lines go to stderr
    with contextlib.redirect_stdout(sys.stderr) if quiet else contextlib.nullcontext():
        return _measure(timeline, measuring, matrix, out, ranks, strict)


def _measure(
    timeline: Timeline, measuring: Measuring, matrix: Matrix, out: Path, ranks: Ranks | None, strict: bool
) -> SweepOutcome:
    start = time.monotonic()
    store = ResultsStore(check_folder(out, "--out"))
    versions = flow.releases(timeline)
    matrix = replace(matrix, versions=tuple(versions))
    asked, matrix = matrix.processes, ranks.split(matrix) if ranks else matrix
    print(
        f"Timeline {timeline.first} to {timeline.last}: {len(versions)} releases ({', '.join(versions)}), "
        f"{1 + len(matrix.xla_flags)} column(s); {_disk(versions, matrix)}; a probe process each, then "
        + (
            f"as many processes a release as fit in {timeline.budget:g} min"
            if timeline.budget
            else f"{matrix.processes} processes a release"
        )
    )
    if ranks:
        print(said_processes(ranks, asked, matrix))
    pythons = environments(matrix, versions)
    if not (ranks and ranks.rank):  # one rank tidies the environments (a shared folder's, maybe)
        envs.prune(versions, matrix.envs, source=matrix.source)
    runners = runners_for(pythons, matrix, measuring)
    if ranks and ranks.rank:
        return _follow(runners, matrix, store, ranks)
    log = RunLog.create(store, layout.TIMELINE)
    meeting = meeting_file(store.folder, ranks) if ranks else None
    if ranks and meeting:
        announce(meeting, log.folder)
    print(f"Samples go into {log.folder} as they are measured")
    plans: list[Plan] = []
    fitted: list[Matrix] = [matrix]
    share = ranks.size if ranks else 1

    def fit(probed: Probed) -> Matrix:
        spent, per_round = time.monotonic() - start, sum(probed.seconds.values())
        processes = (
            flow.fitted_processes(timeline.budget * 60 * share, 0.0, per_round) if timeline.budget else matrix.processes
        )
        fitted[0] = replace(matrix, processes=processes)
        fitted[0] = ranks.split(fitted[0]) if ranks else fitted[0]
        print(
            f"Cost: {len(probed.runners)} cells x {fitted[0].processes} processes = "
            f"{len(probed.runners) * fitted[0].processes} processes; the probe's processes took {per_round:.1f} s a "
            f"round ({minutes(spent)} so far, environments included): about "
            f"{minutes(per_round * fitted[0].processes / share)} to go"
        )
        return fitted[0]

    def planned(probed: Probed, differs: dict[str, dict[str, str]], limit: float) -> None:
        plans.append(Plan(tuple(runners), replace(probed, reference={}), differs, fitted[0], limit))
        log.start(plans[0])

    def measure() -> Measured:
        record = recorder(log, ranks) if ranks else log.record
        return measure_cells(runners, matrix, print, progress_bar, record, planned, fit)

    def shared() -> Measured:
        assert ranks and meeting
        try:
            with telling(log.folder, ranks), beating(meeting):
                measured = measure()
                gather(log, ranks, 2 * plans[0].limit + 60)
                return measured
        except (KeyboardInterrupt, JaxmlpError) as e:
            first = others_stopped(log.folder, ranks)
            if first and isinstance(e, KeyboardInterrupt):  # mpirun stops the others when one rank ends: said first
                print(f"jaxmlp sweep timeline: {first} first", file=sys.stderr, flush=True)
            take_rank_files(log, ranks)  # what the others measured is kept with rank 0's
            raise
        finally:
            meeting.unlink(missing_ok=True)

    code, unmeasured_cells = measure_into(
        log, plans, shared if ranks else measure, start, shared=bool(ranks), strict=strict
    )
    changes = timeline_changes(log.folder)
    for change in changes:
        explain_change(log.folder, change, fitted[0])
    return ended(code, unmeasured_cells, log.folder, changes)


def _follow(runners: list[Runner], matrix: Matrix, store: ResultsStore, ranks: Ranks) -> SweepOutcome:
    """A rank other than 0: its rounds into its own samples file in rank 0's folder, then a mark that it is done
    (or why it stopped); rank 0 files them."""
    folder = meet(meeting_file(store.folder, ranks), ranks)
    log = rank_log(folder, ranks)
    print(f"{ranks.name}: its rounds go into {log.log}")

    try:
        with telling(folder, ranks):
            plan = rank_0_plan(folder, ranks)
            mine = replace(matrix, processes=plan.matrix.processes)
            follow(runners, plan.probed, plan.differs, mine, plan.limit, print, progress_bar, recorder(log, ranks))
            mark_done(folder, ranks)
    except Interrupted as e:
        e.kept = f"{ranks.name}: its samples are in {log.log}, which rank 0 keeps"
        raise
    return SweepOutcome(folder, 0)


def _disk(versions: list[str], matrix: Matrix) -> str:
    """The disk the environments not made yet will take, as measured on those made here."""
    missing = [v for v in versions if not envs.made_any(v, matrix.envs, matrix.source)]
    size = envs.env_megabytes(matrix.envs)
    if missing and size:
        return f"about {size * len(missing) / 1e3:.1f} GB of disk for {len(missing)} not made yet"
    if missing:
        return f"{len(missing)} not made yet (size unknown: none made here)"
    return "every environment made"
