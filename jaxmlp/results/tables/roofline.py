"""The roofline (pure): a workload's arithmetic intensity, its attainable time under this machine's two ceilings,
and which ceiling binds (`point`); an epoch's bound from what its steps must compute and move and its loop's own
cost (`step_bound`; the model: the docs' methods/floor page). The FLOP-only floor (`jaxmlp.measure.floor`) is the
case where the FLOP rate binds."""

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
    """One workload against the ceilings (``flop_ceiling`` FLOP/s, ``bandwidth`` bytes/s): its intensity
    (flops / bytes), the time each ceiling allows, the attainable time (the larger), measured / attainable, the
    ceiling that binds and the FLOP/s it reached. A count XLA did not give leaves the row saying why."""
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
    """`point` of each workload (its ``flops_per_call``, ``bytes_accessed_per_call``, ``steady_seconds``): none but
    the reason where XLA's counts are not a call's (a main program with a ``while`` run once a call: its body is
    counted once); a ``note`` where a measured time is below the attainable one."""
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
"""What the loop term of a `step_bound` is: the empty scan's cost; not measured (a run without `registry.EMPTY_SCAN`);
none for a host loop (a program a step: its dispatch is the rung's own cost, not a scan's) or the Pallas kernel's
(its loop runs inside it)."""


def moved_bytes(pipeline: str, precision: str, steps: float, samples: float | None) -> float:
    """The bytes an epoch must move through memory: the parameters read and written once a step (once an epoch for
    a pipeline that keeps them on chip, `registry.PARAMS_ON_CHIP`), and each image (bfloat16 at bf16, else float32)
    and its one-hot label (float32) read once."""
    image = LAYER_SIZES[0] * (2 if precision == "bf16" else 4)
    images = samples if samples is not None else steps * registry.BATCH_SIZE
    updates = 1 if pipeline in registry.PARAMS_ON_CHIP else steps
    return 2 * 4 * PARAMETERS * updates + images * (image + 4 * N_TARGETS)


class Bound(NamedTuple):
    """An epoch's bound (`step_bound`) in seconds, term by term: ``binds``, the larger of the first two; ``loop``,
    what became of the loop's term."""

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
    """An epoch's bound: max(``compute_s``, the bytes it must move (`moved_bytes`) at ``bandwidth``) plus its loop's
    own cost (``loop_step_s``, the empty scan's cost a step, over ceil(steps / unroll) iterations) for a `lax.scan`
    epoch (`registry.SCAN_LOOP`); ``binds``: the larger of the first two; ``loop``: what became of the loop term."""
    memory_s = moved_bytes(pipeline, precision, steps, samples) / bandwidth
    if pipeline in registry.SCAN_LOOP:
        loop = LOOP_MEASURED if loop_step_s is not None else LOOP_NOT_MEASURED
        loop_s = math.ceil(steps / max(unroll, 1)) * loop_step_s if loop_step_s is not None else math.nan
    else:
        loop, loop_s = (LOOP_KERNEL if pipeline in registry.PARAMS_ON_CHIP else LOOP_HOST), math.nan
    bound = max(compute_s, memory_s) + (0.0 if math.isnan(loop_s) else loop_s)
    binds = "" if math.isnan(memory_s) or math.isnan(compute_s) else "memory" if memory_s > compute_s else "compute"
    return Bound(compute_s, memory_s, loop_s, bound, binds, loop)
