"""One worker process of a sweep: measures every workload once and prints one `ProcessResult`. No torch, no pandas."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from jaxmlp.errors import JaxmlpError
from jaxmlp.measure import programs
from jaxmlp.measure.records import FAILED, ProcessResult
from jaxmlp.measure.sweep.settings import Measuring, is_builtin
from jaxmlp.measure.workers import serve
from jaxmlp.measure.workload_names import spec_name
from jaxmlp.registry import SWEEP_PIPELINES

R = TypeVar("R")


def timed_with_hook(
    fn: Callable[[], R],
    inject_slowdown: float = 0.0,
    clock: Callable[[], float] = time.perf_counter,
    cpu: Callable[[], float] = time.process_time,
) -> tuple[R, float, float]:
    """``fn()``, its wall and CPU seconds, stretched by ``inject_slowdown`` (the test hook; docs/methods/trials.md)."""
    start, used = clock(), cpu()
    result = fn()
    seconds, spent = clock() - start, cpu() - used
    if inject_slowdown:
        end, spend = start + seconds * (1 + inject_slowdown), used + spent * (1 + inject_slowdown)
        while cpu() < spend or clock() < end:
            pass
        seconds, spent = clock() - start, cpu() - used
    return result, seconds, spent


def measure_process(measuring: Measuring) -> ProcessResult:
    """One process's measurements of each workload, in the order given."""
    import jax

    device = jax.devices(measuring.backend)[0]  # JAX's default device where no backend is asked for
    with jax.default_device(device) if measuring.backend else contextlib.nullcontext():
        return _measure_on(measuring, device)


def _measure_on(measuring: Measuring, device: Any) -> ProcessResult:
    """`measure_process` on ``device`` (the built-in workloads' arrays placed there)."""
    import jax

    from jaxmlp.measure import workload as w
    from jaxmlp.measure.environment import metadata

    specs = measuring.specs
    builtin = [name for name in specs if is_builtin(name)]
    samples = None
    made: dict[str, w.Workload] = {}
    if builtin:
        from jaxmlp.pipelines.mnist import load_arrays

        train, _ = load_arrays(measuring.dataset, measuring.data_dir, measuring.limit)
        samples = len(train)
        made = {x.name: x for x in w.builtin(builtin, train, precision=measuring.precision, device=device)}
    failed: dict[str, str] = {}  # a workload that fails is named, and the others are measured
    for spec in (s for s in specs if not is_builtin(s)):
        try:
            user = w.from_spec(spec)
        except JaxmlpError as e:
            failed[spec_name(spec)] = str(e)
            continue
        if user.name in made:
            raise JaxmlpError(f"workload {spec!r} is named {user.name!r} like another workload: rename its file")
        made[user.name] = user
    meta = {
        **metadata(device),
        "injected_slowdown": measuring.inject_slowdown,
        "dataset": measuring.dataset if builtin else None,
        "samples": samples,
        "epochs": measuring.epochs,
        "calls": measuring.calls,
        "compiles": measuring.compiles,
        "batch_size": w.BATCH_SIZE,
        "precision": measuring.precision,
        "workload_source": ",".join(specs),
    }
    times = {}
    for name in (n for n in measuring.names if n in made):  # in the order given
        n = measuring.epochs if name in SWEEP_PIPELINES else measuring.calls
        try:
            times[name] = w.measure(
                made[name], n, lambda fn: timed_with_hook(fn, measuring.inject_slowdown), compiles=measuring.compiles
            )
        except JaxmlpError as e:
            failed[name] = str(e)
    if failed:
        meta[FAILED] = failed
    meta.update(programs.process_facts(device, jax.__version__))  # before the facts' compiles add to it
    if measuring.program_facts:
        for name in times:
            facts = programs.workload_facts(made[name].program_list(), jax.__version__)
            times[name] = dataclasses.replace(times[name], program=facts)
    if measuring.profile_dir:
        for name in times:
            traced(made[name], min(n_calls(measuring, name), PROFILED_CALLS), Path(measuring.profile_dir) / name)
    return ProcessResult(meta, times)


PROFILED_CALLS = 5
"""The most calls of a workload traced when a profile is asked (`jaxmlp sweep explain`)."""


def n_calls(measuring: Measuring, name: str) -> int:
    return measuring.epochs if name in SWEEP_PIPELINES else measuring.calls


def traced(workload: Any, calls: int, folder: Path) -> None:
    """``calls`` calls of ``workload`` in one XLA profiler trace into ``folder``."""
    import jax

    from jaxmlp import compat

    fn = jax.jit(workload.fn) if workload.compile is None else workload.fn
    jax.block_until_ready(fn(*workload.args))  # type: ignore[no-untyped-call]  # compiled outside the trace
    folder.mkdir(parents=True, exist_ok=True)
    with compat.profiler_trace(str(folder)):  # at the level that holds the operations, in every release
        for _ in range(calls):
            jax.block_until_ready(fn(*workload.args))  # type: ignore[no-untyped-call]


def pin(cpu: int) -> None:
    """Every thread of this process onto ``cpu``, those started before it too (numpy's BLAS pool, started at import,
    would otherwise run on any CPU)."""
    tasks = Path("/proc/self/task")
    if not tasks.is_dir():  # no thread list: this thread, and those it starts
        os.sched_setaffinity(0, {cpu})
    for task in sorted(tasks.iterdir()) if tasks.is_dir() else []:
        with contextlib.suppress(ProcessLookupError):  # a thread that ended meanwhile
            os.sched_setaffinity(int(task.name), {cpu})


def _measure(measuring: Measuring) -> ProcessResult:
    if measuring.pin_cpu is not None:  # before JAX starts: XLA sizes its thread pool from this process's affinity
        pin(measuring.pin_cpu)
    return measure_process(measuring)


if __name__ == "__main__":
    sys.exit(serve(sys.argv[1:], _measure, Measuring.from_json, "jaxmlp.measure.sweep.worker"))
