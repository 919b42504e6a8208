"""``jaxmlp summary PATH``: the answer of any result jaxmlp writes, and ``--save`` (`jaxmlp.flows.summary`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from jaxmlp.cli import options
from jaxmlp.flows.summary import READS, summarize
from jaxmlp.report.text import FORMATS
from jaxmlp.results.store import layout


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Print the answer of a result: a benchmark run's speed-ups, best worker count and pipeline ladder; a "
        "sweep's verdict per release (median, ratio to the previous release, 95% interval, p, slower, faster, "
        "the same or inconclusive); a bisection's probes and answer; training runs; the detector's trials; of a "
        "folder of many, the answer to each question from the newest run that can answer it, per machine (--all: "
        "then the newest result of each kind in full)."
    )
    options.add(
        parser,
        options.own("file", f"what to summarize: {READS}", metavar="PATH"),
        options.own(
            "--format",
            "text for a terminal, md for Markdown "
            "(GitHub tables: a pull request, a CI step summary) (default: %(default)s)",
            "text",
            choices=FORMATS,
        ),
        options.own(
            "--all",
            "every table in full, the long ones "
            "too (peak memory, every GEMM); of a folder, the newest result of each kind in full",
            action="store_true",
            dest="everything",
        ),
        options.own(
            "--save",
            "also copy a benchmark, scaling, training or time-to-accuracy file, atomically "
            "and under a new name (never over another run), into DIR",
            metavar="DIR",
        ),
        options.own("--name", f"the saved file's name (default: {layout.BENCH}-<UTC time of the run>-<backends>.json)"),
    )


def run(args: argparse.Namespace) -> int:
    saved = summarize(
        path=Path(args.file), format=args.format, everything=args.everything, save=args.save, name=args.name
    )
    if saved is not None:
        print(f"\nSaved {saved}")
    return 0
