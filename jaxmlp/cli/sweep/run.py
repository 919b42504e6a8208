"""``jaxmlp sweep run`` (``jaxmlp sweep VERSION ...``): the version matrix, then each change it flags explained."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from jaxmlp import registry
from jaxmlp.cli import options
from jaxmlp.cli.sweep.common import add_matrix, add_measuring, matrix_of, measuring_of
from jaxmlp.flows.explain import explain_change
from jaxmlp.flows.measured import SweepOutcome, ended, measure_into
from jaxmlp.flows.progress import progress_bar
from jaxmlp.measure.sweep.matrix import Probed, environments, measure_cells, runners_for
from jaxmlp.measure.sweep.settings import Matrix, Measuring
from jaxmlp.results.store.writing import ResultsStore, check_folder
from jaxmlp.results.sweep.files import Plan, RunLog
from jaxmlp.results.sweep.folders import flagged_changes

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
    versions = args.versions if args.versions or args.env else registry.SWEEP_VERSIONS
    matrix = matrix_of(args, versions)
    return measure(measuring=measuring_of(args), matrix=matrix, out=Path(args.out), strict=args.strict).code


def measure(*, measuring: Measuring, matrix: Matrix, out: Path, strict: bool = False) -> SweepOutcome:
    """The matrix's releases (and hand-made environments) measured into a new sweep folder under ``out``, its
    verdicts printed, then each change it flags explained into that folder. ``strict``: an inconclusive comparison
    exits 4 (`errors.gate`)."""
    start = time.monotonic()
    store = ResultsStore(check_folder(out, "--out"))
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
        strict=strict,
    )
    changes = flagged_changes(log.folder)
    for change in changes:
        explain_change(log.folder, change, matrix)
    return ended(code, missing, log.folder, changes)
