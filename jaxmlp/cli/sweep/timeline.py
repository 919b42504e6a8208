"""``jaxmlp sweep timeline A B``: every release from A to B measured as one matrix, then each change explained."""

from __future__ import annotations

import argparse
from pathlib import Path

from jaxmlp.cli import options
from jaxmlp.cli.sweep.common import add_matrix, add_measuring, matrix_of, measuring_of, versions_of
from jaxmlp.flows.timeline import measure
from jaxmlp.measure.distributed import Ranks
from jaxmlp.measure.sweep.settings import Timeline

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
    """Every release from A to B as one sweep matrix, then its change points; mpirun or srun ranks share its rounds."""
    timeline = Timeline(args.first, args.last, versions_of(args.versions), args.every, args.budget, args.wheels)
    measuring, matrix, out = measuring_of(args), matrix_of(args), Path(args.out)
    ranks = Ranks.found()
    return measure(timeline=timeline, measuring=measuring, matrix=matrix, out=out, ranks=ranks, strict=args.strict).code
