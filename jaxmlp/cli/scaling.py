"""``jaxmlp scaling``: the sharded epoch, step and compile time over N devices, P processes (`jaxmlp.flows.scaling`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from jaxmlp.cli import options
from jaxmlp.flows.scaling import TRACES, measure
from jaxmlp.measure import scaling


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Time the sharded pipeline (jax.sharding: the batch split over a mesh of N devices, params "
        "replicated) for each device count N and process count P, fresh processes each: on the CPU "
        f"N simulated devices ({scaling.FORCE_DEVICES}=N/P a process, sharing this machine's "
        "cores), on a GPU machine N GPUs, on a TPU host its chips. Where N > 1, one more epoch is "
        f"traced (into --out's {TRACES}/) for the all-reduce's share."
    )
    options.add(
        parser,
        options.own(
            "--devices",
            "device counts (default: 1 2 4 8 on the CPU; 1, 2, 4, ... up to the GPUs visible on --backend gpu)",
            None,
            options.whole_number,
            **options.LIST,
        ),
        options.SCALING_PROCESSES,
        options.BACKEND.but(default="cpu", why="simulated devices unless a GPU or TPU is asked for"),
        *options.DATA,
        options.EPOCHS.but(
            default=6,
            why="a sharded epoch is short; 5 steady epochs",
            help="timed sharded epochs a process: the first, then the steady state (default: %(default)s)",
        ),
        options.CALLS.but(
            help="timed calls a process of the sharded step: the first, then the steady state (default: %(default)s)"
        ),
        options.TIMEOUT,
        options.OUT,
    )


def run(args: argparse.Namespace) -> int:
    settings = scaling.Scaling(1, args.backend, args.dataset, args.data_dir, args.limit, args.epochs, args.calls)
    outcome = measure(
        settings=settings, devices=args.devices, processes=args.processes, timeout=args.timeout, out=Path(args.out)
    )
    for line in outcome.why:  # the cells that failed
        print(f"jaxmlp scaling: FAILED {line}", file=sys.stderr)
    return outcome.code
