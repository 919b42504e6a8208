"""``jaxmlp profile``: an XLA profiler trace of training steps, for TensorBoard (`jaxmlp.flows.profile`)."""

from __future__ import annotations

import argparse

from jaxmlp.cli import options
from jaxmlp.cli.train import config_of
from jaxmlp.flows.profile import capture


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "After a warm-up, trace N training steps of a pipeline (each step, batch fetch included, "
        "marked for TensorBoard's profile plugin) into a new run folder under --logdir."
    )
    options.add(
        parser,
        options.PIPELINE.but(default="scan", why="one program an epoch: the XLA ops, not the loader"),
        options.own(
            "--steps", "steps to trace; for scan one step is one epoch (default: %(default)s)", 10, options.whole_number
        ),
        options.LOGDIR,
        *options.DATA,
        options.DOWNLOAD,
        options.BATCH_SIZE,
        options.WORKERS,
        options.BACKEND,
    )


def run(args: argparse.Namespace) -> int:
    capture(config=config_of(args), steps=args.steps, logdir=args.logdir)
    print(f"Open it: jaxmlp tensorboard --logdir {args.logdir}   (then the PROFILE tab)")
    return 0
