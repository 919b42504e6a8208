"""``jaxmlp scaling``: the sharded epoch, step and compile time for each device count, a fresh process each."""

from __future__ import annotations

import argparse
import sys

from jaxmlp import errors, registry
from jaxmlp.cli import options
from jaxmlp.errors import EXIT_FAILED, JaxmlpError
from jaxmlp.measure import scaling, workers
from jaxmlp.report.text import text_summary
from jaxmlp.results.frames import benchmark_rows
from jaxmlp.results.schema.scaling import document
from jaxmlp.results.store import ResultsStore, check_folder


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Time the sharded pipeline (jax.sharding: the batch split over a mesh of N devices, params "
                          "replicated) for each device count N, each in a fresh process: on the CPU N simulated "
                          f"devices ({scaling.FORCE_DEVICES}=N, sharing this machine's cores), on a GPU machine the "
                          "first N GPUs, on a TPU host its chips.")  # fmt: skip
    parser.add_argument("--devices", type=options.whole_number, nargs="+", help="device counts (default: 1 2 4 8 on "
                        "the CPU; 1, 2, 4, ... up to the GPUs visible on --backend gpu)")  # fmt: skip
    options.add(parser, options.BACKEND.but(default="cpu", why="simulated devices unless a GPU or TPU is asked for"),
                *options.DATA, options.EPOCHS.but(default=6, why="a sharded epoch is short; 5 steady epochs"),
                options.CALLS, options.TIMEOUT, options.OUT)  # fmt: skip
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    for n in args.devices or ():
        errors.at_least("--devices", n, 1)
    check_folder(args.out, "--out")
    settings = scaling.Scaling(1, args.backend, args.dataset, args.data_dir, args.limit, args.epochs, args.calls)
    visible = scaling.visible_devices(args.backend)
    devices = tuple(args.devices or scaling.default_devices(args.backend, visible))
    if args.backend == "gpu" and max(devices) > visible:
        raise JaxmlpError(f"--devices {max(devices)} asks for more GPUs than the {visible} visible: choose at most "
                          f"{visible}")  # fmt: skip
    if args.backend == "tpu" and devices != (visible,):
        raise JaxmlpError(f"--devices {' '.join(map(str, devices))}: on a TPU host jaxmlp scaling measures all "
                          f"{visible} chips visible: give --devices {visible}, or leave it out")  # fmt: skip
    if args.backend != "cpu" and visible == 1:
        print(f"jaxmlp scaling: one {args.backend.upper()} visible: N = 1 only (scaling needs more than one)")
    print(f"jaxmlp scaling: the sharded pipeline on {', '.join(map(str, devices))} {args.backend} device(s), a fresh "
          f"process each; {registry.dataset_label(args.dataset)}", flush=True)  # fmt: skip
    if args.timeout is not None:
        errors.positive_finite("--timeout", args.timeout)
    limit = (
        f"{args.timeout:g} s"
        if args.timeout is not None
        else (f"{workers.FIRST_SECONDS:.0f} s for the first, then {workers.DERIVED_LIMIT} before")
    )
    print(f"Time limit of each process: {limit} (--timeout)", flush=True)
    results, failures = scaling.run(devices, settings, lambda line: print(line, flush=True), args.timeout)
    if results:  # what was measured is kept, whatever failed after
        doc = document(results)
        rows, _ = benchmark_rows(doc)
        print(text_summary(rows))
        print(f"Saved {ResultsStore(args.out).save(doc)}")
    for line in failures:
        print(f"jaxmlp scaling: FAILED {line}", file=sys.stderr)
    return EXIT_FAILED if failures else 0
