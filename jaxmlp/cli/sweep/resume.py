"""``jaxmlp sweep resume FOLDER``: a stopped sweep measured on, only what it is missing."""

from __future__ import annotations

import argparse
from pathlib import Path

from jaxmlp.cli import options
from jaxmlp.flows.sweep import resume

DESCRIPTION = (
    "Measure the processes a stopped sweep did not finish (those that failed "
    "too), with its own settings, into its own folder, then write its files."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    options.add(
        parser,
        options.own("folder", "the sweep's folder (it holds samples.jsonl and INCOMPLETE)", metavar="FOLDER"),
    )


def run(args: argparse.Namespace) -> int:
    return resume(folder=Path(args.folder)).code
