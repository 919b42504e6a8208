"""XLA profiler traces of training steps for TensorBoard, each step annotated with its "load" and "compute"."""

from __future__ import annotations

import contextlib
import itertools
import shutil
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, cast

import jax

from jaxmlp.registry import ONE_PROGRAM, STEP_NAME

if TYPE_CHECKING:
    from jaxmlp.model import Params
    from jaxmlp.pipelines.epoch_base import Epoch
    from jaxmlp.pipelines.steps import CompiledStep


class Capture(NamedTuple):
    run_dir: Path  # a TensorBoard logdir holding this one capture (plugins/profile/<time>/)
    xplanes: list[Path]
    steps: int
    seconds: float


def annotated_steps(batches: Iterable[Any], limit: int, first_step: int = 0) -> Iterator[Any]:
    """Yield at most ``limit`` batches, each step marked: fetch in "load", the consumer's work in "compute"."""
    iterator = iter(batches)
    for step_num in range(first_step, first_step + limit):
        with jax.profiler.StepTraceAnnotation(STEP_NAME, step_num=step_num):
            with jax.profiler.TraceAnnotation("load"):
                batch = next(iterator, None)
            if batch is None:
                return
            with jax.profiler.TraceAnnotation("compute"):
                yield batch  # the step loop dispatches this batch's step before asking for the next


def limited(batches: Iterable[Any], limit: int) -> Iterator[Any]:
    return itertools.islice(batches, limit)


def run_steps(
    epoch: Epoch, params: Params, steps: int, wrap: Callable[[Iterable[Any], int, int], Iterable[Any]]
) -> tuple[Params, int]:
    """Run ``steps`` steps of ``epoch`` (over as many epochs as it takes); ``wrap(batches, limit, done)``."""
    done = 0
    while done < steps:
        if epoch.pipeline in ONE_PROGRAM:  # one program per epoch: the epoch is the step
            with jax.profiler.StepTraceAnnotation(STEP_NAME, step_num=done), jax.profiler.TraceAnnotation("compute"):
                params = epoch(params)
            done += 1
        else:
            limit = min(steps - done, epoch.n_steps)

            def progress(batches: Iterable[Any], _total: int, limit: int = limit, done: int = done) -> Iterable[Any]:
                return wrap(batches, limit, done)

            params = epoch(params, progress)
            done += limit
    return params, done


class _Synced:
    """A step that returns only once its result is ready."""

    def __init__(self, step: Callable[[Params, Any, Any], Params]):
        self.step = step

    def __call__(self, params: Params, x: Any, y: Any) -> Params:
        ready = jax.block_until_ready(self.step(params, x, y))  # type: ignore[no-untyped-call]  # unannotated in jax
        return cast("Params", ready)


@contextlib.contextmanager
def removed_unless_ended(folder: str | Path | None) -> Iterator[None]:
    """A trace folder removed where the work inside does not end, since its trace would be partial."""
    try:
        yield
    except BaseException:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
        raise


def capture(epoch: Epoch, params: Params, *, steps: int, run_dir: Callable[[], Path], warmup_steps: int = 3) -> Capture:
    """Warm up, then trace ``steps`` annotated steps into ``run_dir()``, removed where the capture does not end."""
    epoch.compile(params)
    params, _ = run_steps(
        epoch,
        params,
        min(warmup_steps, 1 if epoch.pipeline in ONE_PROGRAM else warmup_steps),
        lambda batches, limit, _done: limited(batches, limit),
    )
    folder = run_dir()
    # Each traced step waits for its own result, so that a step's time in the trace is the time the step
    # took rather than the time to dispatch it (with asynchronous dispatch the host runs ahead).
    step, epoch.step = epoch.step, cast("CompiledStep", _Synced(epoch.step))  # stands in for its calls only
    start = time.perf_counter()
    try:
        with removed_unless_ended(folder), jax.profiler.trace(str(folder)):
            params, done = run_steps(epoch, params, steps, annotated_steps)
            jax.block_until_ready(params)  # type: ignore[no-untyped-call]  # unannotated in jax
    finally:
        epoch.step = step
    seconds = time.perf_counter() - start
    return Capture(folder, sorted(folder.glob("plugins/profile/*/*.xplane.pb")), done, seconds)
