"""Data-parallel scaling of the ``sharded`` pipeline (``jaxmlp scaling``; docs/questions/scaling.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from jaxmlp import errors
from jaxmlp.errors import JaxmlpError
from jaxmlp.jsonio import Plain
from jaxmlp.measure import distributed, workers
from jaxmlp.measure.profiling import removed_unless_ended
from jaxmlp.measure.records import ProcessResult
from jaxmlp.registry import BACKENDS, DATASETS
from jaxmlp.units import duration

CPU_DEVICES = (1, 2, 4, 8)
"""The simulated CPU device counts measured by default."""

FORCE_DEVICES = "--xla_force_host_platform_device_count"
TOLERANCE = 5e-3
"""The largest relative difference allowed between the sharded and one-device params (docs/results/scaling.md)."""


@dataclass(frozen=True)
class Scaling(Plain):
    """What one (N, P)'s worker measures: the sharded epoch and step, and a traced epoch where N > 1."""

    devices: int = 1
    backend: str = "cpu"
    dataset: str = "mnist"
    data_dir: str | None = None
    limit: int | None = None
    epochs: int = 6
    calls: int = 50
    batch_size: int = 128
    processes: int = 1
    trace_dir: str | None = None

    def __post_init__(self) -> None:
        errors.at_least("--devices", self.devices, 1)
        errors.at_least("--processes", self.processes, 1)
        if self.devices % self.processes:
            raise JaxmlpError(f"N = {self.devices} devices do not split over P = {self.processes} processes")
        errors.at_least("--limit", self.limit, 1, "training images")
        errors.at_least("--epochs", self.epochs, 2, "the first epoch is recorded apart from the steady state")
        errors.at_least("--calls", self.calls, 2, "the first call is recorded apart from the steady state")
        if self.backend not in BACKENDS or self.dataset not in DATASETS:
            raise JaxmlpError(f"unknown --backend {self.backend!r} or --dataset {self.dataset!r}")

    @property
    def label(self) -> str:
        """How the lines name it: ``N = 2`` (one process), ``N = 2, P = 2``."""
        return f"N = {self.devices}" + (f", P = {self.processes}" if self.processes > 1 else "")


def plan(devices: Sequence[int], processes: Sequence[int]) -> tuple[list[tuple[int, int]], list[str]]:
    """The (N, P) pairs to measure, and a line for each left out (P must divide N)."""
    pairs, left = [], []
    for n in devices:
        for p in processes:
            if n % p:
                left.append(f"N = {n}, P = {p}: left out (the {n} devices do not split evenly over {p} processes)")
            else:
                pairs.append((n, p))
    return pairs, left


def default_devices(backend: str, visible: int) -> tuple[int, ...]:
    """The device counts to measure: `CPU_DEVICES`, powers of two up to the GPUs, or every chip of a TPU host."""
    if backend == "cpu":
        return CPU_DEVICES
    if backend == "tpu":
        return (visible,)
    return tuple(n for n in (1, 2, 4, 8, 16, 32, 64) if n <= visible) or (1,)


def visible_devices(backend: str) -> int:
    """How many devices the workers may use, found without opening them here."""
    if backend == "cpu":
        return max(CPU_DEVICES)
    if backend == "tpu":
        return tpu_chips()
    try:
        listed = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30).stdout.splitlines()
    except (OSError, subprocess.TimeoutExpired):
        listed = []
    count = sum(line.startswith("GPU ") for line in listed)
    if not count:
        raise JaxmlpError(
            "--backend gpu was asked for, but no NVIDIA GPU is visible (nvidia-smi lists none): run it "
            "on a machine with one, or use --backend cpu"
        )
    return count


def tpu_chips() -> int:
    """The TPU chips JAX sees, counted in a child process; a `JaxmlpError` where it sees none."""
    from jaxmlp.measure.environment import absent_accelerator

    probe = "import jax; print(len(jax.devices('tpu')))"
    child = workers.Child("TPU probe", [sys.executable, "-c", probe], {**os.environ, "JAX_PLATFORMS": "tpu"}, 120)
    try:
        count = int(workers.run(child).strip().splitlines()[-1])
    except (JaxmlpError, ValueError, IndexError):
        count = 0
    if not count:
        raise JaxmlpError(absent_accelerator("tpu", ["none in a child process with JAX_PLATFORMS=tpu"]))
    return count


def worker_environment(
    devices: int, backend: str, base: Mapping[str, str] | None = None, first: int = 0
) -> dict[str, str]:
    """The environment of a worker process with ``devices`` devices (GPUs from ``first`` on)."""
    env = dict(os.environ if base is None else base)
    if backend == "cpu":
        flags = [f for f in env.get("XLA_FLAGS", "").split() if not f.startswith(FORCE_DEVICES)]
        env["XLA_FLAGS"] = " ".join([*flags, f"{FORCE_DEVICES}={devices}"])
        env["JAX_PLATFORMS"] = "cpu"
    elif backend == "gpu":
        env["CUDA_VISIBLE_DEVICES"] = ",".join(str(i) for i in range(first, first + devices))
    return env  # a TPU host: every chip (`default_devices`)


def run_worker(settings: Scaling, timeout: float | None = None, cluster: bool = False) -> ProcessResult:
    """One (N, P)'s worker processes, process 0's result; a `JaxmlpError` where one fails or they pass ``timeout`` s."""
    argv = [sys.executable, "-m", "jaxmlp.measure.scaling_worker", json.dumps(settings.to_json())]
    each = settings.devices // settings.processes
    if settings.processes == 1 or cluster:
        env = worker_environment(each, settings.backend)
        env = env if settings.processes > 1 else distributed.alone(env)  # P = 1 under mpirun: by itself
        return ProcessResult.from_json(workers.run_json(workers.Child(settings.label, argv, env, timeout)))
    envs = [worker_environment(each, settings.backend, first=i * each) for i in range(settings.processes)]
    printed = distributed.run_joined(argv, envs, timeout or workers.FIRST_SECONDS, settings.label).strip()
    try:
        return ProcessResult.from_json(json.loads(printed.splitlines()[-1]))
    except (IndexError, json.JSONDecodeError):
        raise JaxmlpError(f"{settings.label}: process 0 printed no JSON result") from None


def progress_line(result: ProcessResult) -> str:
    epoch, step, meta = result.workloads["epoch"], result.workloads["step"], result.metadata
    label = replace(Scaling(), devices=meta["devices"], processes=meta.get("process_count", 1)).label
    share = meta.get("all_reduce_share")
    traced = "" if share is None else f"; all-reduce {share:.0%} of the traced epoch's operations"
    return (
        f"{label}: epoch {duration(epoch.steady_seconds)}, step {duration(step.steady_seconds)}, "
        f"compile {duration(epoch.compile_seconds)}; params within {meta['max_relative_difference']:.1e} of one "
        f"device's{traced}"
    )


def run(
    pairs: Sequence[tuple[int, int]],
    settings: Scaling,
    progress: Callable[[str], None] | None = None,
    timeout: float | None = None,
    cluster: bool = False,
    trace_dir: Callable[[Scaling], str | None] | None = None,
    traced: Callable[[str], Mapping[str, Any]] | None = None,
    results: list[ProcessResult] | None = None,
) -> tuple[list[ProcessResult], list[str]]:
    """Every (N, P) in turn under a time limit, checked against the one-device scan and traced where N > 1; the results
    and a line for each pair that failed. ``results``: the caller's list, joined as each ends."""
    results = [] if results is None else results
    failures: list[str] = []
    took: list[float] = []
    for n, p in pairs:
        limit = workers.time_limit(timeout, took) if took or timeout else workers.FIRST_SECONDS
        start = time.monotonic()
        these = replace(settings, devices=n, processes=p)
        folder = trace_dir(these) if trace_dir is not None and n > 1 else None
        try:
            with removed_unless_ended(folder):
                result = run_worker(replace(these, trace_dir=folder), limit, cluster and p > 1)
        except JaxmlpError as e:
            failures.append(str(e) if str(e).startswith(these.label) else f"{these.label}: {e}")
            if progress:
                progress(f"{failures[-1]}; going on")
            continue
        took.append(time.monotonic() - start)
        if (difference := result.metadata["max_relative_difference"]) > TOLERANCE:
            failures.append(
                f"{these.label}: the sharded epoch's params differ from the one-device scan's by "
                f"{difference:.2g} (more than {TOLERANCE:g})"
            )
            continue
        if folder is not None and traced is not None:
            result = ProcessResult({**result.metadata, **traced(folder)}, result.workloads)
        results.append(result)
        if progress:
            progress(progress_line(result))
    return results, failures
