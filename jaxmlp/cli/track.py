"""``jaxmlp track``'s arguments: every release newer than the last one tracked, measured against it and the pinned
release until settled or the budget ends, then each verdict and the gate's exit code. `run` parses the arguments and
calls `jaxmlp.flows.track.track`; `resume` goes on with a stopped call (`jaxmlp.flows.track`'s `go_on`)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from jaxmlp import registry
from jaxmlp.cli import Parser, options
from jaxmlp.cli.sweep.common import matrix_of, measuring_of
from jaxmlp.flows.track import chosen_workloads, go_on, recorded_call, track
from jaxmlp.measure.sweep.settings import Matrix, Measuring
from jaxmlp.measure.sweep.track import Track
from jaxmlp.measure.sweep.unmeasured import WORKLOAD, unmeasured_line

EPOCH = registry.SWEEP_WORKLOADS[0]
"""The MLP epoch every series tracks (the sweep's first built-in workload), beside each ``--workload`` given."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Measure every jax/jaxlib release newer than the last one this machine tracked (for these workloads) side by "
        "side with that one and with the pinned release, in fresh processes in rotating order; add processes to an "
        "inconclusive comparison until it is settled or --budget ends. Exit 0 when nothing is slower, 3 when a "
        "release is slower, 4 when one is inconclusive (--strict), 1 when one could not be measured, 2 on bad usage."
    )
    options.add(
        parser,
        options.own(
            "--pinned",
            "the release you run today: each new release is also compared with it (default: the series' start)",
            metavar="VERSION",
        ),
        options.own("--site", "also write the static site of every tracked series into DIR", None, Path, metavar="DIR"),
        options.own(
            "--message", "also write what changed as Markdown into FILE (a comment, a post)", None, Path, metavar="FILE"
        ),
        options.own(
            "--site-url",
            "where the site is published: the message's links point into it (absolute), and it links the site",
            "",
            metavar="URL",
        ),
        options.own(
            "--dry-run",
            "say the releases it would measure, the Python and environment each needs (made or to make) and the "
            "minutes it expects (an estimate), and exit 0: nothing measured, nothing written",
            action="store_true",
        ),
        options.WORKLOAD.but(
            help=f"also track these workloads: built-ins ({', '.join(registry.SWEEP_WORKLOADS)}) or your own, "
            f"path/to/file.py:make or module:make (the MLP epoch, {EPOCH}, always)"
        ),
        *options.DATA,
        *options.TIMING,
        options.PIN_CPU,
        options.PROCESSES,
        *options.RELEASES,
        options.STRICT,
        options.THRESHOLD.but(
            help="the band of the four words: slower or faster beyond 1 + THRESHOLD with the 95%% interval past it, "
            "the same with the whole interval within it (0.02: +-2%%; default: %(default)s)"
        ),
        options.BUDGET.but(
            default=12.0,
            why="a call with something new is held to a team's time: environments, first rounds, settling",
            help="the minutes the call may take, environments included: processes are added to an inconclusive "
            "comparison while they fit (default: %(default)s)",
        ),
    )


def settings_of(args: argparse.Namespace) -> tuple[Track, Measuring, Matrix]:
    """The call's settings from its arguments: the MLP epoch and each --workload, measured as a sweep."""
    given = [w for w in (args.workload or ()) if w != EPOCH]
    measuring = replace(measuring_of(args), workloads=(EPOCH, *dict.fromkeys(given)))
    matrix = matrix_of(args)  # track takes no --xla-flags, --env or --backend
    return Track(args.pinned, args.budget, args.strict, args.threshold, args.dry_run), measuring, matrix


def run(args: argparse.Namespace, say: Callable[[str], None] = print) -> int:
    settings, measuring, matrix = settings_of(args)
    outcome = track(
        settings=settings,
        measuring=measuring,
        matrix=matrix,
        out=Path(args.out),
        site=args.site,
        message=args.message,
        site_url=args.site_url,
        say=say,
        call={"argv": list(getattr(args, "argv", ["track"])), "cwd": os.getcwd()},
    )
    if outcome.lines:
        say("")
        for line in outcome.lines:
            say(line)
    if outcome.unmeasured:
        say(unmeasured_line({k if k.startswith(WORKLOAD) else f"jax {k}": v for k, v in outcome.unmeasured.items()}))
    return outcome.code


def resume(folder: Path, workloads: Sequence[str] = (), envs_folder: Path | None = None) -> int:
    """The stopped call in ``folder`` gone on with, its ``call.json``'s arguments parsed as this command parses them,
    what runs or writes elsewhere this command line's; its exit code (the gate's)."""
    call = recorded_call(folder)
    parser = Parser(prog="jaxmlp track")
    add_arguments(parser)
    args = parser.parse_args(call.argv[1:])
    args.workload = chosen_workloads(call, args.workload or (), workloads, args.python or ())
    args.envs, args.site, args.message, args.argv = envs_folder, None, None, list(call.argv)
    return go_on(call, out=args.out, wheels=args.wheels, run=lambda: run(args))
