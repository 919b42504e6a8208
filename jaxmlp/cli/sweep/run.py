"""``jaxmlp sweep run`` (``jaxmlp sweep VERSION ...``): the version matrix, then each change it flags explained."""

from __future__ import annotations

import argparse
from pathlib import Path

from jaxmlp import registry
from jaxmlp.cli import options
from jaxmlp.cli.sweep.common import add_matrix, add_measuring, matrix_of, measuring_of
from jaxmlp.flows.sweep import measure

DESCRIPTION = (
    "Measure each release (and each --xla-flags value) in its own environment: "
    "worker processes in rotating order, a pytest-benchmark file a cell."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    options.add(
        parser,
        options.own(
            "versions",
            f"jax/jaxlib releases (default: {' '.join(registry.SWEEP_VERSIONS)})",
            nargs="*",
            metavar="VERSION",
        ),
    )
    add_measuring(parser)
    add_matrix(parser)
    options.add(
        parser,
        options.STRICT,
        options.ENV.but(help="also measure environments made by hand"),
    )


def run(args: argparse.Namespace) -> int:
    versions = args.versions if args.versions or args.env else registry.SWEEP_VERSIONS
    matrix = matrix_of(args, versions)
    return measure(measuring=measuring_of(args), matrix=matrix, out=Path(args.out), strict=args.strict).code
