"""Data-parallel scaling of the ``sharded`` pipeline: epoch, step and compile time for each device count N.

Each N runs in a fresh worker process (``python -m jaxmlp.measure.scaling worker``), since the device count is
fixed when JAX starts: on the CPU, N simulated devices (``XLA_FLAGS=--xla_force_host_platform_device_count=N``,
sharing this machine's cores); on a GPU machine, the first N GPUs (``CUDA_VISIBLE_DEVICES``). The worker measures
the sharded epoch and the sharded step as workloads (`jaxmlp.measure.workload.measure`: compiled once and timed
apart, every call ending in ``block_until_ready``, the first call kept apart) and checks the epoch's params
against the one-device ``scan`` epoch. The parent writes one results file: a row per benchmark and N.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import Any

from jaxmlp import registry
from jaxmlp.errors import JaxmlpError, last_error_line
from jaxmlp.results.records import BenchmarkDocument, BenchmarkRow, ProcessResult, Stats

CPU_DEVICES = (1, 2, 4, 8)
"""The simulated CPU device counts measured by default."""

FORCE_DEVICES = "--xla_force_host_platform_device_count"
TOLERANCE = 5e-3
"""The largest relative difference allowed between the sharded epoch's params and the one-device scan's after one
epoch. The all-reduce sums the batch's gradient in another order; over an epoch of float32 SGD on the tutorial's
unscaled pixels that change grows to 5e-4 (N = 2, 8) and 2e-3 (N = 4) on MNIST, while a few steps stay within
1e-6; one device summing each batch's gradient in two halves computes the 2-device params exactly
(tests/test_sharded.py)."""


def default_devices(backend: str, visible: int) -> tuple[int, ...]:
    """The device counts to measure: `CPU_DEVICES` on the CPU; 1, 2, 4, ... up to the GPUs visible on a GPU."""
    if backend == "cpu":
        return CPU_DEVICES
    return tuple(n for n in (1, 2, 4, 8, 16, 32, 64) if n <= visible) or (1,)


def visible_devices(backend: str) -> int:
    """How many devices the workers may use: the GPUs ``nvidia-smi -L`` lists (without starting JAX here, which
    would take the GPUs' memory from the workers); on the CPU, any number can be simulated."""
    if backend == "cpu":
        return max(CPU_DEVICES)
    try:
        listed = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout.splitlines()
    except OSError:
        listed = []
    count = sum(line.startswith("GPU ") for line in listed)
    if not count:
        raise JaxmlpError("--backend gpu was asked for, but no NVIDIA GPU is visible (nvidia-smi lists none): run it "
                          "on a machine with one, or use --backend cpu")  # fmt: skip
    return count


def worker_environment(devices: int, backend: str, base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of the worker for ``devices`` devices: the caller's, with the device count set."""
    env = dict(os.environ if base is None else base)
    if backend == "cpu":
        flags = [f for f in env.get("XLA_FLAGS", "").split() if not f.startswith(FORCE_DEVICES)]
        env["XLA_FLAGS"] = " ".join([*flags, f"{FORCE_DEVICES}={devices}"])
        env["JAX_PLATFORMS"] = "cpu"
    else:
        env["CUDA_VISIBLE_DEVICES"] = ",".join(str(i) for i in range(devices))
    return env


# --- the worker: one device count -------------------------------------------------------------------------------


def measure_devices(devices: int, backend: str, dataset: str, data_dir: str | None, limit: int | None, epochs: int,
                    calls: int, batch_size: int = 128) -> ProcessResult:  # fmt: skip
    """In a process that sees ``devices`` devices of ``backend``: the sharded epoch and step, and the check."""
    import jax

    from jaxmlp.measure import workload as w
    from jaxmlp.measure.environment import metadata
    from jaxmlp.model import LAYER_SIZES, init_network_params, max_relative_difference
    from jaxmlp.pipelines.epochs import make_epoch
    from jaxmlp.pipelines.mnist import load_arrays

    seen = jax.devices(backend)
    if len(seen) != devices:
        raise JaxmlpError(f"asked for {devices} {backend} devices, JAX sees {len(seen)}")
    train, _ = load_arrays(dataset, data_dir, limit)
    device = seen[0]
    with jax.default_device(device):
        params = init_network_params(LAYER_SIZES, jax.random.PRNGKey(0))
        reference = make_epoch("scan", train, batch_size=batch_size, device=device)(params)
        epoch = make_epoch("sharded", train, batch_size=batch_size, device=device)
        params = epoch.place(params)  # once: every timed call starts from the same replicated params
        step, step_args = epoch.sharded_step(params)
        times = {
            "epoch": w.measure(w.Workload("epoch", epoch, (params,), lambda: epoch.compile(params)), epochs),
            "step": w.measure(w.Workload("step", step, step_args), calls),
        }
        difference = max_relative_difference(epoch.local(epoch(params)), reference)
    meta = {**metadata(device), "devices": devices, "dataset": dataset, "samples": epoch.n_samples,
            "steps": epoch.n_steps, "batch_size": batch_size, "flops": epoch.flops,
            "max_relative_difference": difference}  # fmt: skip
    return ProcessResult(meta, times)


def worker_command(args: argparse.Namespace) -> int:
    out = measure_devices(args.devices, args.backend, args.dataset, args.data_dir, args.limit, args.epochs, args.calls)
    print(json.dumps(out.to_json()))
    return 0


# --- the parent: every device count, one results document -------------------------------------------------------


def run_worker(devices: int, backend: str, options: Sequence[str]) -> ProcessResult:
    """One device count's worker process, its result; a `JaxmlpError` with its last error line if it fails."""
    command = [sys.executable, "-m", "jaxmlp.measure.scaling", "worker", "--devices", str(devices),
               "--backend", backend, *options]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, env=worker_environment(devices, backend))
    if done.returncode != 0:
        said = last_error_line(done.stderr) or f"exit code {done.returncode}"
        raise JaxmlpError(f"N = {devices}: the worker failed: {said}")
    return ProcessResult.from_json(json.loads(done.stdout.strip().splitlines()[-1]))


SCALING_EXTRA = ("backend", "device_kind", "devices", "dataset", "samples", "steps", "batch_size", "flops",
                 "max_relative_difference", "xla_flags")  # fmt: skip
"""The worker's metadata that each scaling row repeats in its ``extra_info``."""


def rows_of(result: ProcessResult) -> list[BenchmarkRow]:
    """A worker's two benchmark rows: the sharded epoch and the sharded step at its device count."""
    meta = result.metadata
    extra = {key: meta.get(key) for key in SCALING_EXTRA}
    params = {"backend": meta["backend"], "devices": meta["devices"]}
    rows = []
    for bench, times, what in ((registry.SCALING_EPOCH, result.workloads["epoch"], "epoch"),
                               (registry.SCALING_STEP, result.workloads["step"], "step")):  # fmt: skip
        info = {**extra, "compile_seconds": times.compile_seconds, f"first_{what}_seconds": times.first_seconds}
        rows.append(BenchmarkRow(bench.name(*params.values()), f"scaling: sharded {what}, {meta['backend']}",
                                 params, info, Stats.of(times.call_seconds)))  # fmt: skip
    return rows


def progress_line(result: ProcessResult) -> str:
    epoch, step, meta = result.workloads["epoch"], result.workloads["step"], result.metadata
    return (f"N = {meta['devices']}: epoch {epoch.steady_seconds:.3g} s, step {step.steady_seconds * 1e3:.3g} ms, "
            f"compile {epoch.compile_seconds:.2f} s; params within {meta['max_relative_difference']:.1e} of one "
            "device's")  # fmt: skip


def run_scaling(devices: Sequence[int], backend: str, options: Sequence[str],
                progress: Callable[[str], None] | None = None) -> BenchmarkDocument:  # fmt: skip
    """Every device count in turn, in its own process, as one results document (metadata: the first worker's)."""
    import datetime as dt

    results = []
    for n in devices:
        result = run_worker(n, backend, options)
        difference = result.metadata["max_relative_difference"]
        if difference > TOLERANCE:
            raise JaxmlpError(f"N = {n}: the sharded epoch's params differ from the one-device scan's by "
                              f"{difference:.2g} (more than {TOLERANCE:g})")  # fmt: skip
        results.append(result)
        if progress:
            progress(progress_line(result))
    meta: dict[str, Any] = {**results[0].metadata, "scaling": True, "xla_flags": None, "devices": None}
    rows = tuple(row for result in results for row in rows_of(result))
    return BenchmarkDocument(rows, meta, dt.datetime.now(dt.UTC).isoformat(), meta.get("commit"))


def add_worker_arguments(parser: argparse.ArgumentParser, integer: Callable[[str], int] = int) -> None:
    """The options `jaxmlp scaling` passes on to its workers (``integer``: the CLI's number parser)."""
    parser.add_argument("--dataset", choices=registry.DATASETS, default="mnist")
    parser.add_argument("--data-dir")
    parser.add_argument("--limit", type=integer, help="the first LIMIT training images only")
    parser.add_argument("--epochs", type=integer, default=6, help="timed epochs a device count (default: %(default)s)")
    parser.add_argument("--calls", type=integer, default=50, help="timed steps a device count (default: %(default)s)")


def main(argv=None) -> int:
    """``python -m jaxmlp.measure.scaling worker ...``: a worker's entry (``jaxmlp scaling`` for people)."""
    parser = argparse.ArgumentParser(prog="jaxmlp.measure.scaling")
    commands = parser.add_subparsers(dest="command", required=True)
    worker = commands.add_parser("worker")
    worker.add_argument("--devices", type=int, required=True)
    worker.add_argument("--backend", choices=registry.BACKENDS, default="cpu")
    add_worker_arguments(worker)
    args = parser.parse_args(argv)
    try:
        return worker_command(args)
    except JaxmlpError as e:
        print(f"jaxmlp scaling worker: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
