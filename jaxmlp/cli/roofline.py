"""``jaxmlp roofline``: each workload against this machine's FLOP rate and bandwidth (`jaxmlp.flows.roofline`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from jaxmlp.cli import options
from jaxmlp.flows.roofline import measure
from jaxmlp.measure.sweep.settings import Measuring


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Measure this machine's FLOP rate (the best of a few float32 matmuls in XLA) and memory "
        "bandwidth (STREAM-like kernels in XLA, and numpy's for comparison) once per environment, "
        "then put each workload on the roofline: arithmetic intensity from XLA's cost analysis, "
        "attainable time = max(flops / FLOP rate, bytes / bandwidth), measured / attainable and "
        "which ceiling binds."
    )
    options.add(
        parser,
        options.BACKEND,
        options.WORKLOAD,
        *options.DATA,
        *options.TIMING,
        options.OUT,
        options.own(
            "--remeasure-ceilings",
            "measure the ceilings again even where this environment's are kept",
            action="store_true",
        ),
    )


def run(args: argparse.Namespace) -> int:
    workloads, data = tuple(args.workload or ()), (args.dataset, args.data_dir, args.limit)
    measuring = Measuring(workloads, *data, args.epochs, args.calls, program_facts=True, backend=args.backend)
    return measure(measuring=measuring, out=Path(args.out), remeasure_ceilings=args.remeasure_ceilings).code
