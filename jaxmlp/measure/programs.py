"""What a workload compiled and its process's peak memory: the facts a sweep cell records. No torch, no pandas."""

from __future__ import annotations

import contextlib
import resource
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from jaxmlp import compat, hlo

HLO_TEXT = "hlo_text"
"""The key of the optimized HLO text in a worker's facts, stored apart (compressed), never in the JSON."""

COST_FIELDS = {"flops": "flops", "bytes_accessed": "bytes accessed", "transcendentals": "transcendentals"}
MEMORY_FIELDS = ("argument_bytes", "output_bytes", "temp_bytes", "generated_code_bytes")


class Program(NamedTuple):
    """One program a workload runs ``runs`` times a call, lowered under ``precision`` (None: the caller's)."""

    name: str
    jitted: Any
    args: tuple[Any, ...]
    runs: int = 1
    precision: str | None = None


def program_facts(program: Program, version: str) -> dict[str, Any]:
    """One program compiled afresh: its HLO (text and fingerprint), operations, costs, memory and compile split."""
    import jax

    from jaxmlp.model import precision_scope

    jax.clear_caches()  # type: ignore[no-untyped-call]  # a real compile, not a cache hit
    with contextlib.nullcontext() if program.precision is None else precision_scope(program.precision):
        compiled, lower_seconds, compile_seconds = compat.lower_and_compile(program.jitted, program.args)
    missing: dict[str, str] = {}
    facts: dict[str, Any] = {
        "name": program.name,
        "runs": program.runs,
        "trace_lower_seconds": lower_seconds,
        "xla_compile_seconds": compile_seconds,
    }
    costs = compat.cost_analysis(compiled)
    for key, field in COST_FIELDS.items():
        value = costs.get(field)
        if value is None or value < 0:  # XLA says -1 for what it could not count
            missing[key] = f"not available in {version}: cost_analysis() gives no {field!r}"
        else:
            facts[key] = float(value)
    memory = compat.memory_analysis(compiled)
    for key in MEMORY_FIELDS:
        if key in memory:
            facts[key] = memory[key]
        else:
            missing[key] = f"not available in {version}: memory_analysis() gives no {key}"
    text = compat.optimized_hlo(compiled)
    if text is None:
        missing["hlo"] = f"not available in {version}: Compiled.as_text() gives no optimized HLO"
    else:
        facts[HLO_TEXT] = text
        facts["hlo_fingerprint"] = hlo.fingerprint(text)
        facts["operations"] = dict(sorted(hlo.operations(text).items()))
    facts["not_available"] = missing
    return facts


def workload_facts(programs: Sequence[Program], version: str) -> dict[str, Any]:
    """A workload's facts: its main program's, with every program's flops, bytes and compile time."""
    if not programs:
        return {
            "not_available": {
                "program": "the workload names no program (a make() returning a Workload without programs)"
            }
        }
    each = [program_facts(p, version) for p in programs]
    main = dict(each[0])
    main["programs"] = [{k: f.get(k) for k in ("name", "runs", "flops", "bytes_accessed")} for f in each]
    for key in ("flops", "bytes_accessed"):
        if all(key in f for f in each):
            main[f"{key}_per_call"] = sum(f[key] * f["runs"] for f in each)
    main["trace_lower_seconds"] = sum(f["trace_lower_seconds"] for f in each)
    main["xla_compile_seconds"] = sum(f["xla_compile_seconds"] for f in each)
    return main


def peak_rss_bytes() -> int:
    """This process's peak resident set so far (``getrusage``: kilobytes on Linux, bytes on macOS). On Linux it
    carries the high-water mark of the process it was forked from across ``exec`` (`own_peak` does not)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)


STATUS = Path("/proc/self/status")


def current_peak(status: str | None = None) -> int | None:
    """``VmHWM`` of ``/proc/self/status`` (or of ``status``, its text) in bytes: the high-water mark of this
    process's own memory since it started its program, never its parent's; None where there is none."""
    try:
        text = STATUS.read_text() if status is None else status
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024  # kB
    return None


NOT_OWN = "no VmHWM here (not Linux?): getrusage's peak, which may include the parent's"
"""Why a process's recorded peak may not be its own (``peak_rss_why``)."""


def own_peak() -> dict[str, Any]:
    """This process's own peak resident set, else getrusage's and why it may not be its own."""
    if (peak := current_peak()) is not None:
        return {"peak_rss_bytes": peak}
    return {"peak_rss_bytes": peak_rss_bytes(), "peak_rss_why": NOT_OWN}


def device_peak(device: Any, version: str | None = None) -> dict[str, Any]:
    """The device's peak bytes in use (``memory_stats()["peak_bytes_in_use"]``), or why there is none."""
    stats = compat.device_memory_stats(device)
    if stats is None or "peak_bytes_in_use" not in stats:
        where = f"in {version} on" if version else "on"
        return {"device_peak_why": f"not available {where} {device.platform}: the backend keeps no memory_stats() peak"}
    return {"device_peak_bytes": int(stats["peak_bytes_in_use"])}  # since the process started: JAX has no reset


def process_facts(device: Any, version: str) -> dict[str, Any]:
    """What the process held at its end: its own peak resident memory (`own_peak`) and the device's peak."""
    return {**own_peak(), **device_peak(device, version)}
