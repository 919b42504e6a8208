"""What a measured matrix could not measure, and why."""

from __future__ import annotations

from collections.abc import Mapping

from jaxmlp.measure.sweep.matrix import PROBE_FAILED, Measured

WORKLOAD = "workload "
"""The start of `unmeasured`'s key for a workload that failed (its cells measured the others), not a cell."""


def failed_workloads(measured: Measured) -> dict[str, str]:
    """Each workload that gave no sample in a cell that ran, keyed ``workload NAME``: why and in which cells."""
    found: dict[str, dict[str, str]] = {}
    for name, runner in measured.probed.runners.items():
        done = measured.processes.get(name) or []
        if not done:
            continue
        said = [p.failed for p in (measured.probed.reference.get(name), *done) if p is not None]
        for workload in runner.measuring.names:
            why = next((s[workload] for s in reversed(said) if workload in s), None)  # as its processes said
            if why is not None and all(workload not in p.workloads for p in done):
                found.setdefault(workload, {})[name] = runner.measuring.as_recorded(why)
    return {f"{WORKLOAD}{w}": f"{list(cells.values())[-1]}; in {', '.join(cells)}" for w, cells in found.items()}


def unmeasured(measured: Measured) -> dict[str, str]:
    """The cells that gave no sample, and why, then each workload that failed where its cell ran."""
    found = {name: o.status for name, o in measured.probed.outcomes.items() if o.status.startswith(PROBE_FAILED)}
    for name in measured.probed.runners:
        if not measured.processes.get(name):
            reasons = [f.reason for f in measured.failures if f.cell == name]
            found[name] = f"every process failed (the last: {reasons[-1]})" if reasons else "no process ran"
    return found | failed_workloads(measured)


def unmeasured_line(found: Mapping[str, str]) -> str:
    """One line naming each cell that could not be measured and why (`unmeasured`); "" when there is none."""
    if not found:
        return ""
    return "not measured: " + "; ".join(f"{name} ({why})" for name, why in found.items())
