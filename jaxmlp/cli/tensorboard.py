"""``jaxmlp tensorboard``: TensorBoard on 127.0.0.1 over a folder of captures (`jaxmlp.flows.tensorboard`)."""

from __future__ import annotations

import argparse

from jaxmlp.cli import options
from jaxmlp.flows.tensorboard import serve


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Start TensorBoard (with its profile plugin) on 127.0.0.1 over --logdir; stop it with Ctrl-C (exit 130)."
    )
    options.add(
        parser,
        options.LOGDIR,
        options.own(
            "--port", "port on 127.0.0.1; 0 picks a free one (default: %(default)s)", 6006, options.whole_number
        ),
    )


def run(args: argparse.Namespace) -> int:
    return serve(logdir=args.logdir, port=args.port)
