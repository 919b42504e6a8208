"""``jaxmlp tta``: time to accuracy per pipeline and precision over N seeds (`jaxmlp.flows.tta`)."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from jaxmlp.cli import options
from jaxmlp.flows.tta import measure
from jaxmlp.measure.tta import TtaConfig

DEFAULTS = TtaConfig()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Time to accuracy, MLPerf style: the wall time from the start of a run (data preparation "
        "and compilation included, each also shown apart) until the test accuracy first reaches "
        "--target, evaluated after every epoch (or every --eval-every steps), over --runs seeds, "
        "per pipeline and precision."
    )
    parser.epilog = (
        "Exit status 1 where, for a pipeline and precision, at most half the runs reached --target within "
        "--max-epochs: the median time over its runs is then no time (the runs are written all the same). "
        "Stopped (Ctrl-C, SIGTERM), the runs that ended are written, marked partial."
    )
    options.add(
        parser,
        options.own(
            "--target", "test accuracy to reach, a fraction (default: %(default)s)", DEFAULTS.target, options.number
        ),
        options.own(
            "--runs",
            "runs of each pipeline and precision, seeds 0..RUNS-1 (default: %(default)s)",
            DEFAULTS.runs,
            options.whole_number,
        ),
        options.own(
            "--eval-every",
            "evaluate every STEPS training steps (default: after every epoch)",
            None,
            options.whole_number,
            metavar="STEPS",
        ),
        options.own(
            "--max-epochs",
            "a run that has not reached the target after this many epochs stops and says so (default: %(default)s)",
            DEFAULTS.max_epochs,
            options.whole_number,
        ),
        options.EACH_PIPELINE,
        options.EACH_PRECISION,
        options.BATCH_SIZE,
        options.BACKEND,
        *options.DATA,
        options.OUT,
    )


def run(args: argparse.Namespace) -> int:
    given = {f.name: getattr(args, f.name) for f in dataclasses.fields(TtaConfig) if hasattr(args, f.name)}
    pipelines, precisions = (
        tuple(dict.fromkeys(each)) for each in (args.pipeline or ["scan"], args.precision or ["f32"])
    )
    config = TtaConfig(**given, pipelines=pipelines, precisions=precisions)
    outcome = measure(config=config, dataset=args.dataset, data_dir=args.data_dir, limit=args.limit, out=Path(args.out))
    for line in outcome.why:  # at most half the runs reached the target
        print(f"{args.prog}: {line}", file=sys.stderr)
    return outcome.code
