"""``jaxmlp sweep run`` (``jaxmlp sweep VERSION ...``): the version matrix, then each change it flags explained."""

from __future__ import annotations

import argparse
import time

from jaxmlp import registry
from jaxmlp.cli import options
from jaxmlp.cli.sweep.common import add_matrix, add_measuring, matrix_of, measuring_of, progress_bar
from jaxmlp.cli.sweep.explain import explain_change
from jaxmlp.cli.sweep.measured import ended, measure_into
from jaxmlp.measure.sweep.matrix import Probed, environments, measure_cells, runners_for
from jaxmlp.results.releases.files import Plan, RunLog
from jaxmlp.results.releases.folders import flagged_changes
from jaxmlp.results.store.writing import ResultsStore, check_folder

HELP = "the version matrix (the default subcommand)"
DESCRIPTION = (
    "Measure each release (and each --xla-flags value) in its own environment: "
    "worker processes in rotating order, a pytest-benchmark file a cell."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "versions",
        nargs="*",
        metavar="VERSION",
        help=f"jax/jaxlib releases (default: {' '.join(registry.SWEEP_VERSIONS)})",
    )
    add_measuring(parser)
    add_matrix(parser)
    options.add(parser, options.STRICT)
    parser.add_argument("--env", metavar="LABEL=PYTHON", **options.LIST, help="also measure environments made by hand")


def run(args: argparse.Namespace) -> int:
    start = time.monotonic()
    measuring = measuring_of(args)
    matrix = matrix_of(args, args.versions if args.versions or args.env else registry.SWEEP_VERSIONS)
    store = ResultsStore(check_folder(args.out, "--out"))
    pythons = environments(matrix, matrix.versions)
    runners = runners_for(pythons, matrix, measuring)
    log = RunLog.create(store)
    print(f"Samples go into {log.folder} as they are measured")
    plans: list[Plan] = []

    def planned(probed: Probed, differs: dict[str, dict[str, str]], limit: float) -> None:
        plans.append(Plan(tuple(runners), probed, differs, matrix, limit))
        log.start(plans[0])

    code, missing = measure_into(
        log,
        plans,
        lambda: measure_cells(runners, matrix, print, progress_bar, log.record, planned),
        start,
        strict=args.strict,
    )
    for change in flagged_changes(log.folder):
        explain_change(log.folder, change, matrix)
    return ended(code, missing, log.folder)
