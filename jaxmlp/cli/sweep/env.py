"""``jaxmlp sweep env VERSION ...``: each release's environment made (or found) and checked."""

from __future__ import annotations

import argparse

from jaxmlp.cli import options
from jaxmlp.cli.sweep.common import source_of
from jaxmlp.flows.env import check

DESCRIPTION = (
    "Make each release's environment under --envs (or find it made) and check that "
    "a worker process runs in it: two short epochs of the synthetic set."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    options.add(
        parser,
        options.own("versions", "jax/jaxlib releases (e.g. 0.6.2 0.8.3)", nargs="+", metavar="VERSION"),
        options.ENVS,
        options.WHEELS,
        options.PYTHON,
    )


def run(args: argparse.Namespace) -> int:
    """Make (or find) each release's environment and check that a worker runs in it."""
    check(tuple(args.versions), args.envs, source_of(args), tuple(args.python or ()))
    return 0
