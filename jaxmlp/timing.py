"""Timing that waits for the device, and compile time measured on its own."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator

import jax

_COMPILE_EVENT_PREFIX = "/jax/core/compile/"
_active: list[list[float]] = []


def _on_event_duration(event: str, duration: float, **_kwargs) -> None:
    if event.startswith(_COMPILE_EVENT_PREFIX):
        for sink in _active:
            sink.append(duration)


# One listener for the process (jax.monitoring has no public way to remove one);
# it only reports to the `compile_seconds` blocks that are open.
jax.monitoring.register_event_duration_secs_listener(_on_event_duration)


class CompileTime:
    """Seconds JAX spent tracing, lowering and compiling inside a `compile_seconds` block."""

    def __init__(self) -> None:
        self.durations: list[float] = []

    @property
    def seconds(self) -> float:
        return float(sum(self.durations))

    @property
    def count(self) -> int:
        return len(self.durations)


@contextlib.contextmanager
def compile_seconds() -> Iterator[CompileTime]:
    """Collects JAX's own compile-stage durations for the code inside the block."""
    result = CompileTime()
    _active.append(result.durations)
    try:
        yield result
    finally:
        _active.remove(result.durations)


def timed(fn: Callable, *args, **kwargs) -> tuple[object, float]:
    """``fn(*args, **kwargs)`` and its wall time in seconds, the clock stopped once the result is ready."""
    start = time.perf_counter()
    result = jax.block_until_ready(fn(*args, **kwargs))
    return result, time.perf_counter() - start
