"""``jaxmlp sweep resume FOLDER``: a stopped sweep measured on, only what it is missing."""

from __future__ import annotations

import argparse
from pathlib import Path

from jaxmlp.cli import options
from jaxmlp.cli.sweep.common import hand_made
from jaxmlp.flows.sweep import resume
from jaxmlp.results.store import layout

DESCRIPTION = (
    "Measure the processes a stopped sweep did not finish (those that failed "
    "too), with its own settings, into its own folder, then write its files."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    options.add(
        parser,
        options.own("folder", "the sweep's folder (it holds samples.jsonl and INCOMPLETE)", metavar="FOLDER"),
        options.ENVS,
        options.WORKLOAD.but(help="each workload of your own the sweep measured, again"),
        options.ENV.but(help="each environment made by hand the sweep measured, again"),
    )


def run(args: argparse.Namespace) -> int:
    folder = Path(args.folder)
    workloads = tuple(args.workload or ())
    if folder.name.startswith(f"{layout.TRACK}-"):  # a stopped `jaxmlp track` call: gone on with as track does
        from jaxmlp.cli import track

        return track.resume(folder, workloads, args.envs)
    return resume(
        folder=folder, envs_folder=args.envs, pythons=hand_made(tuple(args.env or ())), workloads=workloads
    ).code
