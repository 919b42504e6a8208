"""Every difference between the JAX versions jaxmlp supports, in one place."""

from __future__ import annotations

import contextlib
import re
from typing import Any, cast

import jax

from jaxmlp import hlo


def enable_x64() -> contextlib.AbstractContextManager[Any]:
    """A context manager that turns on 64-bit types (``jax.enable_x64`` from 0.5, experimental before)."""
    if hasattr(jax, "enable_x64"):
        return cast(contextlib.AbstractContextManager[Any], jax.enable_x64(True))
    from jax.experimental import enable_x64 as _enable_x64  # type: ignore[attr-defined]  # jax < 0.5 (gone since)

    return cast(contextlib.AbstractContextManager[Any], _enable_x64())


def cost_analysis(compiled: jax.stages.Compiled) -> dict[str, Any]:
    """``Compiled.cost_analysis()`` as a dict: a dict from jax 0.4.38, a one-element list before, maybe None."""
    with contextlib.suppress(Exception):  # documented as best-effort; some backends raise
        costs = compiled.cost_analysis()
        if isinstance(costs, (list, tuple)):
            costs = costs[0] if costs else None
        return dict(costs or {})
    return {}


_MEMORY_FIELDS = {
    "argument_bytes": "argument_size_in_bytes",
    "output_bytes": "output_size_in_bytes",
    "temp_bytes": "temp_size_in_bytes",
    "generated_code_bytes": "generated_code_size_in_bytes",
    "alias_bytes": "alias_size_in_bytes",
}


def memory_analysis(compiled: jax.stages.Compiled) -> dict[str, int]:
    """``Compiled.memory_analysis()`` as a dict of byte counts (best-effort: empty where unsupported)."""
    try:
        stats = compiled.memory_analysis()
    except Exception:  # documented as best-effort; some backends and versions raise
        return {}
    if isinstance(stats, (list, tuple)):  # older versions: one entry per device
        stats = stats[0] if stats else None
    if stats is None:
        return {}
    return {key: int(getattr(stats, attr)) for key, attr in _MEMORY_FIELDS.items() if hasattr(stats, attr)}


def optimized_hlo(compiled: jax.stages.Compiled) -> str | None:
    """The optimized HLO text of a compiled program (``Compiled.as_text()``), or None where unavailable."""
    try:
        text = compiled.as_text()
    except Exception:  # some backends and versions raise
        return None
    return text if isinstance(text, str) and text else None


def compiled_facts(compiled: jax.stages.Compiled) -> dict[str, Any]:
    """What XLA says about a compiled program: its analyses and its optimized HLO's fingerprint and size."""
    costs = cost_analysis(compiled)
    text = optimized_hlo(compiled)
    ops = hlo.operations(text) if text else None
    facts = {
        "flops": costs.get("flops"),
        "bytes_accessed": costs.get("bytes accessed"),
        "transcendentals": costs.get("transcendentals"),
        **memory_analysis(compiled),
        "hlo_fingerprint": hlo.fingerprint(text) if text else None,
        "hlo_instructions": sum(ops.values()) if ops else None,
        "hlo_fusions": sum(n for op, n in ops.items() if op.startswith("fusion")) if ops else None,
    }
    # XLA says -1 for what it could not count (the GPU's cost analysis of a cuBLAS matmul): not a number of flops
    return {
        f"xla_{key}": value
        for key, value in facts.items()
        if value is not None and not (isinstance(value, (int, float)) and value < 0)
    }


def device_memory_stats(device: Any) -> dict[str, Any] | None:
    """``device.memory_stats()``, or None where the backend keeps none or the release lacks it."""
    stats = getattr(device, "memory_stats", None)
    if stats is None:
        return None
    try:
        found = stats()
    except Exception:  # some backends and releases raise instead of returning None
        return None
    return dict(found) if found else None


def lower_and_compile(jitted: Any, args: tuple[Any, ...]) -> tuple[jax.stages.Compiled, float, float]:
    """``jitted.lower(*args).compile()``, and the seconds of each half: tracing and lowering to StableHLO, then
    XLA's compile (the same API from 0.4.30 on; kept here beside the other compiled-program differences)."""
    import time

    start = time.perf_counter()
    lowered = jitted.lower(*args)
    lowered_at = time.perf_counter()
    compiled = lowered.compile()
    return compiled, lowered_at - start, time.perf_counter() - lowered_at


HOST_TRACER_LEVEL = 2
"""The host tracer level a profile is taken at: XLA:CPU's per-operation events (one per thunk) are level 2."""


def profiler_trace(folder: str) -> contextlib.AbstractContextManager[Any]:
    """``jax.profiler.trace(folder)`` at `HOST_TRACER_LEVEL` where the release takes profiler options (0.5.3 takes
    none): jax 0.7.0 starts a trace given none at level 1, whose trace holds no operations."""
    import inspect

    options = getattr(jax.profiler, "ProfileOptions", None)
    if options is None or "profiler_options" not in inspect.signature(jax.profiler.trace).parameters:
        return cast(contextlib.AbstractContextManager[Any], jax.profiler.trace(folder))
    chosen = options()
    chosen.host_tracer_level = HOST_TRACER_LEVEL
    return cast(contextlib.AbstractContextManager[Any], jax.profiler.trace(folder, profiler_options=chosen))


TPU_HELD = ("already in use by process", "multi-process lockfile")
"""What libtpu says when another program holds the chip (``The TPU is already in use by process with pid N``; older
releases: its ``multi-process lockfile``)."""


def backend_errors() -> dict[str, str]:
    """The backends JAX tried and could not start in this process, each with its error."""
    from jax._src import xla_bridge

    return dict(getattr(xla_bridge, "_backend_errors", None) or {})


def tpu_held(message: str) -> str | None:
    """One line where ``message`` says another program holds the TPU (which, and what to do); else None."""
    if not any(marker in message for marker in TPU_HELD):
        return None
    pid = re.search(r"pid (\d+)", message)
    who = (
        f"process {pid[1]} holds it (see it with `ps -o pid,user,etime,cmd -p {pid[1]}`)"
        if pid
        else "find which with `sudo lsof -w /dev/accel* /dev/vfio/* /tmp/libtpu_lockfile`"
    )
    return (
        f"the TPU is in use by another program: {who}; stop it or let it finish, then run again (measuring "
        "on the CPU instead would file CPU numbers for this TPU host)"
    )
