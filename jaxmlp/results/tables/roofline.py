"""The roofline (pure): a workload against the two ceilings (`point`) and an epoch's bound (`step_bound`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NamedTuple

from jaxmlp import registry
from jaxmlp.registry import LAYER_SIZES, N_TARGETS

FLOPS, MEMORY = "FLOP rate", "memory bandwidth"


def point(
    flops: float | None, bytes_accessed: float | None, seconds: float, flop_ceiling: float, bandwidth: float
) -> dict[str, Any]:
    """One workload against the ceilings (``flop_ceiling`` FLOP/s, ``bandwidth`` bytes/s): its intensity, attainable
    time, measured / attainable, the ceiling that binds and the FLOP/s reached; a row missing XLA's counts says why."""
    if not flops or not bytes_accessed:
        missing = "flops" if not flops else "bytes accessed"
        return {"why": f"no roofline: XLA's cost analysis gives no {missing} for it", "measured_seconds": seconds}
    compute, memory = flops / flop_ceiling, bytes_accessed / bandwidth
    attainable = max(compute, memory)
    return {
        "flops": flops,
        "bytes_accessed": bytes_accessed,
        "intensity": flops / bytes_accessed,
        "compute_seconds": compute,
        "memory_seconds": memory,
        "attainable_seconds": attainable,
        "measured_seconds": seconds,
        "x_attainable": seconds / attainable,
        "binds": FLOPS if compute >= memory else MEMORY,
        "achieved_flops_per_second": flops / seconds,
        "ridge_intensity": flop_ceiling / bandwidth,
    }


LOOP_NOTE = (
    "no roofline: its program loops (a while), and XLA's cost analysis counts a loop's body once, so its "
    "flops and bytes are one pass of the body, not a call's"
)
CACHE_NOTE = (
    "measured below attainable: XLA's bytes accessed count every operation's operands and results as if "
    "from memory, while much of them stay in the caches; the bandwidth roof is then a DRAM roof this "
    "workload does not meet"
)


def points(workloads: Mapping[str, Mapping[str, Any]], ceilings: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """`point` of each workload; only why where XLA's counts are not a call's, and a ``note`` where below attainable."""
    out = {}
    for name, w in workloads.items():
        p = {
            **point(
                w.get("flops_per_call"),
                w.get("bytes_accessed_per_call"),
                float(w["steady_seconds"]),
                float(ceilings["flops_per_second"]),
                float(ceilings["bytes_per_second"]),
            ),
            "programs": w.get("programs"),
        }
        runs = [q.get("runs") for q in w.get("programs") or []]
        if (w.get("operations") or {}).get("while") and runs[:1] == [1]:
            p = {"why": LOOP_NOTE, "measured_seconds": float(w["steady_seconds"]), "programs": w.get("programs")}
        elif p.get("x_attainable", 1.0) < 1.0:
            p["note"] = CACHE_NOTE
        out[name] = p
    return out


PARAMETERS = sum(n_in * n_out + n_out for n_in, n_out in zip(LAYER_SIZES[:-1], LAYER_SIZES[1:]))
"""The MLP's parameters (weights and biases): 669,706, float32 in every precision (the bf16 step's too)."""

LOOP_MEASURED, LOOP_NOT_MEASURED = "measured (empty scan)", "not measured in this run"
LOOP_HOST, LOOP_KERNEL = "a host loop (not a scan)", "the kernel's own loop"
"""What a `step_bound`'s loop term is: the empty scan's cost, not measured, or none."""


def moved_bytes(pipeline: str, precision: str, steps: float, samples: float | None) -> float:
    """The bytes an epoch must move through memory, as docs/methods/floor.md counts them."""
    image = LAYER_SIZES[0] * (2 if precision == "bf16" else 4)
    images = samples if samples is not None else steps * registry.BATCH_SIZE
    updates = 1 if pipeline in registry.PARAMS_ON_CHIP else steps
    return 2 * 4 * PARAMETERS * updates + images * (image + 4 * N_TARGETS)


class Bound(NamedTuple):
    """An epoch's bound (`step_bound`) in seconds, term by term, which binds and what became of the loop."""

    compute_s: float
    memory_s: float
    loop_s: float
    bound_s: float
    binds: str
    loop: str


def step_bound(
    pipeline: str,
    precision: str,
    steps: float,
    samples: float | None,
    unroll: int,
    compute_s: float,
    bandwidth: float,
    loop_step_s: float | None,
) -> Bound:
    """An epoch's bound: max(``compute_s``, `moved_bytes` at ``bandwidth``) plus the loop's own cost for a `lax.scan`
    epoch; ``binds``: which of the first two is larger; ``loop``: what became of the loop term."""
    memory_s = moved_bytes(pipeline, precision, steps, samples) / bandwidth
    if pipeline in registry.SCAN_LOOP:
        loop = LOOP_MEASURED if loop_step_s is not None else LOOP_NOT_MEASURED
        loop_s = math.ceil(steps / max(unroll, 1)) * loop_step_s if loop_step_s is not None else math.nan
    else:
        loop, loop_s = (LOOP_KERNEL if pipeline in registry.PARAMS_ON_CHIP else LOOP_HOST), math.nan
    bound = max(compute_s, memory_s) + (0.0 if math.isnan(loop_s) else loop_s)
    binds = "" if math.isnan(memory_s) or math.isnan(compute_s) else "memory" if memory_s > compute_s else "compute"
    return Bound(compute_s, memory_s, loop_s, bound, binds, loop)
