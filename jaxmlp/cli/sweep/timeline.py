"""``jaxmlp sweep timeline A B``: every release from A to B measured as one matrix, then each change explained."""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

from jaxmlp.cli import options
from jaxmlp.cli.sweep.common import add_matrix, add_measuring, matrix_of, measuring_of, progress_bar, releases
from jaxmlp.cli.sweep.explain import explain_change
from jaxmlp.cli.sweep.measured import ended, measure_into
from jaxmlp.measure.sweep import envs
from jaxmlp.measure.sweep import timeline as flow
from jaxmlp.measure.sweep.matrix import Probed, environments, measure_cells, runners_for
from jaxmlp.measure.sweep.settings import EVERY, Matrix, Timeline
from jaxmlp.results.releases.files import Plan, RunLog
from jaxmlp.results.releases.folders import timeline_changes
from jaxmlp.results.store import layout
from jaxmlp.results.store.writing import ResultsStore, check_folder
from jaxmlp.units import minutes

HELP = "every release from A to B, and where the time changed"
DESCRIPTION = (
    "Measure every release published for jax and jaxlib alike from A to B "
    "(patch releases included) in its own environment, fresh processes in rotating order "
    "as `run` does; then the change points, transients and drifts of each workload's steady "
    "state (README: the release timeline)."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("first", metavar="A", help="the first release (e.g. 0.4.30)")
    parser.add_argument("last", metavar="B", help="the last release (e.g. 0.5.0)")
    options.add(parser, options.VERSIONS)
    parser.add_argument(
        "--every",
        choices=EVERY,
        default="patch",
        help="every release (patch), or the last patch of each minor release (minor) (default: %(default)s)",
    )
    parser.add_argument(
        "--budget",
        type=options.number,
        metavar="MINUTES",
        help="the minutes the processes may "
        "take: sets the processes a release from the probe's measured time (default: "
        "--processes)",
    )
    add_measuring(parser)
    add_matrix(parser)


def run(args: argparse.Namespace) -> int:
    """Every release from A to B as one sweep matrix, then its change points (`jaxmlp.changepoints`)."""
    start = time.monotonic()
    settings = Timeline(args.first, args.last, releases(args.versions), args.every, args.budget, args.wheels)
    measuring = measuring_of(args)
    store = ResultsStore(check_folder(args.out, "--out"))
    versions = flow.releases(settings)
    matrix = matrix_of(args, versions)
    print(
        f"Timeline {settings.first} to {settings.last}: {len(versions)} releases ({', '.join(versions)}), "
        f"{1 + len(matrix.xla_flags)} column(s); {_disk(versions, matrix)}; a probe process each, then "
        + (
            f"as many processes a release as fit in {settings.budget:g} min"
            if settings.budget
            else f"{matrix.processes} processes a release"
        )
    )
    pythons = environments(matrix, versions)
    envs.prune(versions, matrix.envs, source=matrix.source)
    runners = runners_for(pythons, matrix, measuring)
    log = RunLog.create(store, layout.TIMELINE)
    print(f"Samples go into {log.folder} as they are measured")
    plans: list[Plan] = []
    fitted: list[Matrix] = [matrix]

    def fit(probed: Probed) -> Matrix:
        spent, per_round = time.monotonic() - start, sum(probed.seconds.values())
        processes = flow.fitted_processes(settings.budget * 60, 0.0, per_round) if settings.budget else matrix.processes
        fitted[0] = replace(matrix, processes=processes)
        print(
            f"Cost: {len(probed.runners)} cells x {processes} processes = {len(probed.runners) * processes} "
            f"processes; the probe's processes took {per_round:.1f} s a round ({minutes(spent)} so far, "
            f"environments included): about {minutes(per_round * processes)} to go"
        )
        return fitted[0]

    def planned(probed: Probed, differs: dict[str, dict[str, str]], limit: float) -> None:
        plans.append(Plan(tuple(runners), replace(probed, reference={}), differs, fitted[0], limit))
        log.start(plans[0])

    code, unmeasured_cells = measure_into(
        log, plans, lambda: measure_cells(runners, matrix, print, progress_bar, log.record, planned, fit), start
    )
    for change in timeline_changes(log.folder):
        explain_change(log.folder, change, fitted[0])
    return ended(code, unmeasured_cells, log.folder)


def _disk(versions: list[str], matrix: Matrix) -> str:
    """The disk the environments not made yet will take, as measured on those made here."""
    missing = [v for v in versions if not envs.is_made(v, matrix.envs, matrix.source)]
    size = envs.env_megabytes(matrix.envs)
    if missing and size:
        return f"about {size * len(missing) / 1e3:.1f} GB of disk for {len(missing)} not made yet"
    if missing:
        return f"{len(missing)} not made yet (size unknown: none made here)"
    return "every environment made"
