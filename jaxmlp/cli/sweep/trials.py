"""``jaxmlp sweep trials``: the detector checked here, A/A and injected-slowdown comparisons of one jax."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from jaxmlp.cli import options
from jaxmlp.cli.sweep.common import DEFAULT_WORKLOAD, WORKLOADS, measuring_of
from jaxmlp.flows.trials import trials
from jaxmlp.measure.noise import NOISES, check
from jaxmlp.measure.sweep.settings import Detector, Trials

DESCRIPTION = (
    "Check the detector on this machine: --trials comparisons of the jax "
    "installed here against itself (A/A: a flag is a false alarm) and against itself with a "
    "known slowdown injected (a flag is a hit), each side --processes fresh processes at first, then more to a "
    "comparison not yet settled (as jaxmlp track adds them) while --budget lasts; writes "
    "OUT/detector-<time>/trials.json."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    # Short runs of many short epochs: the setting that met the detector's goals on a 2-core machine (README).
    measured = "the setting measured here (README: how the detector was checked)"
    options.add(
        parser,
        options.WORKLOAD.but(help=f"the workload to compare against itself: {WORKLOADS} (default: {DEFAULT_WORKLOAD})"),
        options.DATASET.but(default="synthetic", why=measured),
        options.DATA_DIR,
        options.LIMIT.but(default=2000, why=measured),
        options.EPOCHS.but(default=16, why=measured),
        options.CALLS,
        options.PIN_CPU,
        options.own("--trials", "A/A and injected comparisons (default: %(default)s)", 20, options.whole_number),
        options.PROCESSES.but(
            default=5,
            why="the fewest a verdict can rest on, as jaxmlp track settles",
            help="fresh processes a side of each comparison at first (default: %(default)s)",
        ),
        options.BUDGET.but(
            default=5.0,
            why="a comparison settled within minutes",
            help="the minutes a trial may take: processes are added to a comparison not yet settled while they fit "
            "(default: %(default)s)",
        ),
        options.own(
            "--inject-slowdown", "the known slowdown, as a fraction (default: %(default)s)", 0.10, options.number
        ),
        options.own(
            "--noise",
            "hog: a busy loop on the workers' CPU (--pin-cpu) for the whole run, started and ended here; none: the "
            "machine as it is (default: %(default)s)",
            "none",
            choices=NOISES,
        ),
        *options.DETECTOR,
        options.OUT,
    )


def run(args: argparse.Namespace) -> int:
    """A/A and injected-slowdown trials of one version against itself."""
    settings = Trials(args.trials, args.processes, args.inject_slowdown, args.noise, args.budget)
    check(args.noise, args.pin_cpu)
    detector = Detector(args.threshold, args.alpha)
    measuring = replace(measuring_of(args), workloads=((args.workload or [DEFAULT_WORKLOAD])[0],))
    trials(settings=settings, detector=detector, measuring=measuring, out=Path(args.out))
    return 0
