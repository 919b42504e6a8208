"""Peak memory of what a benchmark ran: the resident set's and the device's peaks (docs/methods/timing.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jaxmlp.measure.programs import current_peak, device_peak, own_peak
from jaxmlp.registry import PEAK_SCOPE_BENCHMARK, PEAK_SCOPE_PROCESS

__all__ = ["current_peak", "device_mark", "peak_facts", "reset_peak"]

CLEAR_REFS = Path("/proc/self/clear_refs")


def reset_peak() -> bool:
    """Reset this process's peak resident set to its current one; False where the system does not allow it."""
    try:
        CLEAR_REFS.write_text("5")
    except OSError:
        return False
    return True


def device_mark(device: Any | None) -> int | None:
    """The device's peak bytes in use so far, taken before a benchmark; None where the backend keeps none."""
    return None if device is None else device_peak(device).get("device_peak_bytes")


def peak_facts(was_reset: bool, device: Any | None = None, device_before: int | None = None) -> dict[str, Any]:
    """What a benchmark records of its memory: its resident and device peaks and the scope of each."""
    peak = current_peak() if was_reset else None
    facts: dict[str, Any] = {
        "peak_rss_bytes": peak if peak is not None else own_peak()["peak_rss_bytes"],
        "peak_rss_scope": PEAK_SCOPE_BENCHMARK if peak is not None else PEAK_SCOPE_PROCESS,
    }
    if device is not None:
        facts.update(device_peak(device))
        if "device_peak_bytes" in facts:
            own = device_before is not None and facts["device_peak_bytes"] > device_before
            facts["device_peak_scope"] = PEAK_SCOPE_BENCHMARK if own else PEAK_SCOPE_PROCESS
    return facts
