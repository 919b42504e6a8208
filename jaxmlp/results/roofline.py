"""The roofline (pure): a workload's arithmetic intensity, its attainable time under this machine's two ceilings,
and which ceiling binds. The FLOP-only floor (`jaxmlp.measure.floor`) is the case where the FLOP rate binds."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

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
