"""``jaxmlp sweep``: the version matrix (``run``, the default) and the other subcommands, one module each: each
builds its settings from its arguments, runs `jaxmlp.measure.sweep` and files its results through `jaxmlp.results`."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from types import ModuleType

from jaxmlp.cli.sweep import bisect, corpus, env, explain, resume, run, timeline, trials, validate
from jaxmlp.cli.sweep.common import RANKED, alone

MODULES: dict[str, ModuleType] = {
    "run": run,
    "resume": resume,
    "timeline": timeline,
    "bisect": bisect,
    "explain": explain,
    "trials": trials,
    "validate": validate,
    "env": env,
    "corpus": corpus,
}
"""Each subcommand's module, in ``jaxmlp sweep --help``'s order."""
SUBCOMMANDS = tuple(MODULES)


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
    sub = parser.add_subparsers(dest="sweep_command", required=True, metavar="COMMAND", parser_class=type(parser))
    for name, module in MODULES.items():
        command = sub.add_parser(name, help=module.HELP, description=module.DESCRIPTION)
        module.add_arguments(command)
        command.set_defaults(run=module.run if name in RANKED else alone(name, module.run))
