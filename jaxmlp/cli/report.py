"""``jaxmlp report``: every result under a folder rendered into a new report folder (`jaxmlp.flows.summary`)."""

from __future__ import annotations

import argparse

from jaxmlp.cli import options
from jaxmlp.flows.summary import report


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Load every result file under --results (benchmarks, training runs, sweeps, bisections, "
        "scaling, trials, traces) and write summary.md, a self-contained index.html with plots, "
        "results.csv and samples.csv into a new folder."
    )
    options.add(parser, options.RESULTS, options.REPORT_OUT)


def run(args: argparse.Namespace) -> int:
    report(results=args.results, out=args.out)
    return 0
