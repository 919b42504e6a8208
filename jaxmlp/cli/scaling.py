"""``jaxmlp scaling``: the sharded epoch, step and compile time for each device count N and process count P."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path

from jaxmlp import errors, registry
from jaxmlp.cli import options
from jaxmlp.errors import EXIT_FAILED, Interrupted, JaxmlpError
from jaxmlp.measure import distributed, scaling, workers
from jaxmlp.measure.records import ProcessResult
from jaxmlp.measure.train import check_batch_size
from jaxmlp.report.text import text_summary
from jaxmlp.results.schema.scaling import document
from jaxmlp.results.store.frames import benchmark_rows
from jaxmlp.results.store.writing import ResultsStore, check_folder, new_trace_run
from jaxmlp.results.tables import ALL_REDUCE, trace_share

TRACES = "traces"
"""The folder under --out where each N > 1's traced epoch goes (a TensorBoard logdir: `jaxmlp tensorboard`)."""


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


def process_counts(asked: list[int] | None, cluster: tuple[int, int] | None) -> tuple[int, ...]:
    """The process counts to measure: as asked, else 1; under a cluster launcher of P processes, 1 and P only."""
    for p in asked or ():
        errors.at_least("--processes", p, 1)
    if cluster is None:
        return tuple(asked or (1,))
    size = cluster[1]
    if asked and not set(asked) <= {1, size}:
        raise JaxmlpError(
            f"--processes {' '.join(map(str, asked))}: under {distributed.launcher()} with {size} "
            f"processes only 1 and {size} can be measured: give --processes 1 {size}, or run jaxmlp "
            "scaling without the launcher (its own processes on this machine)"
        )
    return tuple(asked or (1, size))


def run(args: argparse.Namespace) -> int:
    for n in args.devices or ():
        errors.at_least("--devices", n, 1)
    joined = distributed.rank()
    cluster = joined if distributed.launcher() not in (None, distributed.OWN) else None
    processes = process_counts(args.processes, cluster)
    settings = scaling.Scaling(1, args.backend, args.dataset, args.data_dir, args.limit, args.epochs, args.calls)
    if args.timeout is not None:
        errors.positive_finite("--timeout", args.timeout)
    if args.limit is not None:
        check_batch_size(settings.batch_size, args.limit, fixed=True)
    if cluster is not None and cluster[0] != 0:  # one of a cluster's processes: its worker joins process 0's, quiet
        with contextlib.redirect_stdout(open(os.devnull, "w")):  # noqa: SIM115 (closed as the process ends)
            return _measure(args, settings, processes, cluster)
    check_folder(args.out, "--out")
    return _measure(args, settings, processes, cluster)


def _devices(args: argparse.Namespace) -> tuple[int, ...]:
    """The device counts asked for (else the backend's default), checked against the devices visible."""
    visible = scaling.visible_devices(args.backend)
    devices = tuple(args.devices or scaling.default_devices(args.backend, visible))
    if args.backend == "gpu" and max(devices) > visible:
        raise JaxmlpError(
            f"--devices {max(devices)} asks for more GPUs than the {visible} visible: choose at most {visible}"
        )
    if args.backend == "tpu" and devices != (visible,):
        raise JaxmlpError(
            f"--devices {' '.join(map(str, devices))}: on a TPU host jaxmlp scaling measures all "
            f"{visible} chips visible: give --devices {visible}, or leave it out"
        )
    if args.backend != "cpu" and visible == 1:
        print(f"jaxmlp scaling: one {args.backend.upper()} visible: N = 1 only (scaling needs more than one)")
    return devices


def _say_plan(
    args: argparse.Namespace,
    devices: tuple[int, ...],
    processes: tuple[int, ...],
    cluster: tuple[int, int] | None,
    left: list[str],
) -> None:
    """What the call measures, each process's time limit and the counts it leaves out, said first."""
    how = (
        f"processes {', '.join(map(str, processes))} ({distributed.launcher()}'s for P > 1)"
        if cluster
        else f"processes {', '.join(map(str, processes))}"
        if processes != (1,)
        else "one process each"
    )
    print(
        f"jaxmlp scaling: the sharded pipeline on {', '.join(map(str, devices))} {args.backend} device(s), "
        f"{how}, fresh processes each; {registry.dataset_label(args.dataset)}",
        flush=True,
    )
    limit = (
        f"{args.timeout:g} s"
        if args.timeout is not None
        else (f"{workers.FIRST_SECONDS:.0f} s for the first, then {workers.DERIVED_LIMIT}")
    )
    print(f"Time limit of each process: {limit} (--timeout)", flush=True)
    for line in left:
        print(line, flush=True)


def _measure(
    args: argparse.Namespace, settings: scaling.Scaling, processes: tuple[int, ...], cluster: tuple[int, int] | None
) -> int:
    devices = _devices(args)
    pairs, left = scaling.plan(devices, processes)
    speaker = cluster is None or cluster[0] == 0
    if cluster is not None:  # the cluster's processes all run its P together, first; then process 0 alone the rest
        pairs = [pair for pair in pairs if pair[1] > 1] + ([pair for pair in pairs if pair[1] == 1] if speaker else [])
    if not pairs:
        raise JaxmlpError("no device count splits evenly over the process counts asked for: " + "; ".join(left))
    _say_plan(args, devices, processes, cluster, left)
    traces = Path(args.out) / TRACES

    def trace_dir(these: scaling.Scaling) -> str | None:
        if not speaker:
            return None
        return str(new_trace_run(traces, f"scaling-N{these.devices}-P{these.processes}"))

    def traced(folder: str) -> dict[str, object]:
        return trace_share(folder, ALL_REDUCE)

    results: list[ProcessResult] = []
    try:
        _, failures = scaling.run(
            pairs,
            settings,
            lambda line: print(line, flush=True),
            args.timeout,
            cluster is not None,
            trace_dir,
            traced,
            results,
        )
    except KeyboardInterrupt as e:  # the cells measured before the signal are kept
        stopped = e if isinstance(e, Interrupted) else Interrupted()
        if results and speaker:
            said = f"kept {len(results)} of {len(pairs)} cells"
            try:
                path = ResultsStore(args.out).save(document(results, partial=f"stopped by {stopped}; {said}"))
                stopped.kept = f"{said} in {path}"
            except (JaxmlpError, OSError) as error:  # the stop's line still, saying why nothing was kept
                stopped.kept = f"the {len(results)} cells measured could not be written: {error}"
        raise stopped from None
    if results and speaker:  # what was measured is kept, whatever failed after
        doc = document(results)
        rows, _ = benchmark_rows(doc)
        print(text_summary(rows))
        print(f"Saved {ResultsStore(args.out).save(doc)}")
    for line in failures:
        print(f"jaxmlp scaling: FAILED {line}", file=sys.stderr)
    return EXIT_FAILED if failures else 0
