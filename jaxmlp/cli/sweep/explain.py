"""``jaxmlp sweep explain A B``: why two releases differ on a workload (`jaxmlp.flows.explain`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from jaxmlp.cli import options
from jaxmlp.cli.sweep.common import DEFAULT_WORKLOAD, WORKLOADS, add_matrix, matrix_of, measuring_of
from jaxmlp.flows.explain import explain
from jaxmlp.results.sweep.explain_files import EXPLAIN_PROCESSES

DESCRIPTION = (
    "Say whether two releases compiled the same optimized HLO for a workload: "
    "if not, the operations added or removed, the change in flops, bytes and memory and "
    "the HLO's diff; if so, each operation's time in one profiled process per release. "
    "Writes RESULTS/explain-<time>/."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    options.add(
        parser,
        *options.EXPLAIN_RANGE,
        options.WORKLOAD.but(help=f"the workload to explain: {WORKLOADS} (default: {DEFAULT_WORKLOAD})"),
        *options.DATA,
        *options.TIMING,
        options.PIN_CPU,
    )
    add_matrix(
        parser,
        options.PROCESSES.but(
            default=EXPLAIN_PROCESSES,
            why="a release; the first of each profiled",
            help="processes a release, the first of each profiled (default: %(default)s)",
        ),
        options.XLA_FLAGS.but(
            help="the XLA_FLAGS both releases run with, one value (e.g. "
            "--xla_cpu_use_thunk_runtime=false) (default: none)"
        ),
    )
    options.add(parser, options.ENV)


def run(args: argparse.Namespace) -> int:
    """Run, file and print an explanation."""
    measuring, matrix = measuring_of(args), matrix_of(args)
    workload = (args.workload or [DEFAULT_WORKLOAD])[0]
    explain(a=args.a, b=args.b, workload=workload, measuring=measuring, matrix=matrix, out=Path(args.out))
    return 0
