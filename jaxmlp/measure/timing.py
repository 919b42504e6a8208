"""Compile time measured on its own: JAX's compile-stage durations inside a block of code."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import jax

_COMPILE_EVENT_PREFIX = "/jax/core/compile/"
_active: list[list[float]] = []


def _on_event_duration(event: str, duration_secs: float, **_kwargs: str | int) -> None:
    if event.startswith(_COMPILE_EVENT_PREFIX):
        for sink in _active:
            sink.append(duration_secs)


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


@contextlib.contextmanager
def compile_seconds() -> Iterator[CompileTime]:
    """Collects JAX's own compile-stage durations for the code inside the block."""
    result = CompileTime()
    _active.append(result.durations)
    try:
        yield result
    finally:
        _active.remove(result.durations)
