"""``jaxmlp sweep``: the version matrix (``run``, the default) and the other subcommands, each loaded when used."""

from __future__ import annotations

import argparse
import functools
import importlib
from collections.abc import Sequence

from jaxmlp.cli import Deferred

SUBCOMMANDS = {
    "run": "the version matrix (the default subcommand)",
    "resume": "go on with a sweep that was stopped: measure only what is missing",
    "timeline": "every release from A to B, and where the time changed",
    "bisect": "the first release between GOOD and BAD that is slower (or faster)",
    "explain": "why A and B differ on a workload: the compiled program, or below it",
    "trials": "the detector's check: A/A and injected-slowdown trials here",
    "validate": "the change-point detector on synthetic histories with known changes",
    "env": "make each release's environment and check that it runs",
    "corpus": "run the corpus of known regressions as a user would, and score what was found",
}
"""Each subcommand and its ``jaxmlp sweep --help`` line, in order; its module ``jaxmlp.cli.sweep.<name>``."""


def _load(name: str, parser: argparse.ArgumentParser) -> None:
    """Subcommand ``name``'s module imported (with stops held: it imports jax) and its arguments added."""
    from jaxmlp.cli.sweep.common import RANKED, alone
    from jaxmlp.stops import held

    with held():
        module = importlib.import_module(f"jaxmlp.cli.sweep.{name}")
    parser.description = module.DESCRIPTION
    module.add_arguments(parser)
    parser.set_defaults(run=module.run if name in RANKED else alone(name, module.run))


def normalized(argv: Sequence[str]) -> list[str]:
    """``jaxmlp sweep 0.6.2 0.8.3 ...`` is ``jaxmlp sweep run 0.6.2 0.8.3 ...``; ``--xla-flags --xla_foo=1`` is
    ``--xla-flags=--xla_foo=1`` (a value that starts with a dash, which argparse would take for an option)."""
    argv = list(argv)
    at = argv.index("sweep")
    if len(argv) == at + 1 or argv[at + 1] not in (*SUBCOMMANDS, "-h", "--help"):
        argv.insert(at + 1, "run")
    out: list[str] = []
    values = iter(argv)
    for arg in values:
        if arg == "--xla-flags":
            value = next(values, None)
            out.append(arg if value is None else f"{arg}={value}")
        else:
            out.append(arg)
    return out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Time a workload (the MLP's epochs and step, or your own function) in each release's own "
        "environment, fresh processes in rotating order, and say which release is slower or faster "
        "than the one before; `jaxmlp sweep 0.6.2 0.8.3` runs the matrix (the `run` subcommand), "
        "`jaxmlp sweep bisect GOOD BAD` finds the release that changed it."
    )
    sub = parser.add_subparsers(dest="sweep_command", required=True, metavar="COMMAND", parser_class=Deferred)
    for name, help in SUBCOMMANDS.items():
        sub.add_parser(name, help=help, load=functools.partial(_load, name))
