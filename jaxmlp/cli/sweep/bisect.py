"""``jaxmlp sweep bisect GOOD BAD``: the first release between them that changed a workload, then its explanation."""

from __future__ import annotations

import argparse
from pathlib import Path

from jaxmlp.cli import options
from jaxmlp.cli.sweep.common import DEFAULT_WORKLOAD, add_matrix, add_measuring, matrix_of, measuring_of, versions_of
from jaxmlp.flows.bisect import search
from jaxmlp.measure.sweep.settings import Bisect, Detector

DESCRIPTION = (
    "Bisect the releases between GOOD and BAD: each probe measures the ends "
    "and their midpoint together and keeps the half that holds the change, until the "
    "first release flagged against the one before it. Where a release fails on the workload, the first release that "
    "fails instead (one probe process a release), filed, and the command exits 1."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    options.add(
        parser,
        *options.BISECT_RANGE,
        options.own(
            "--on",
            f"the workload whose steady state is bisected (default: the first --workload, else {DEFAULT_WORKLOAD})",
            metavar="WORKLOAD",
        ),
        *options.DETECTOR,
    )
    add_measuring(parser)
    add_matrix(parser)  # no --env: the releases between come from the index, each made here


def run(args: argparse.Namespace) -> int:
    settings = Bisect(args.good, args.bad, versions_of(args.versions), args.on, args.wheels)
    detector = Detector(args.threshold, args.alpha)
    measuring, matrix = measuring_of(args), matrix_of(args)
    return search(settings=settings, detector=detector, measuring=measuring, matrix=matrix, out=Path(args.out)).code
