"""A machine, as asv's machine is: what a run's times depend on (`MACHINE`: the CPU model, its core count, the
backend and its device kind). Every history and every answer keeps machines apart."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from jaxmlp import units

MACHINE = ("cpu_model", "cpu_affinity", "backend", "device_kind")
"""What two runs must share to be on one machine."""


def _known(value: Any) -> bool:
    return (
        value is not None
        and value is not pd.NA
        and not (isinstance(value, float) and pd.isna(value))
        and str(value) not in ("", "unknown", "None")
    )


def machine(row: Mapping[str, Any] | pd.Series) -> str:
    """A machine as one label: ``AMD EPYC, 2 cores`` (``1 core``) for a CPU run, ``TPU v5 lite (host: 13 cores)``
    for an accelerator's."""
    cores = row.get("cpu_affinity")
    count = units.count(round(float(cores)), "core") if _known(cores) and cores is not None else ""
    cpu = str(row.get("cpu_model")) if _known(row.get("cpu_model")) else ""
    backend = str(row.get("backend") or "cpu") if _known(row.get("backend")) else "cpu"
    if backend == "cpu":
        return ", ".join(p for p in (cpu or "a CPU", count) if p)
    device = str(row.get("device_kind")) if _known(row.get("device_kind")) else backend.upper()
    host = ", ".join(p for p in (cpu, count) if p)
    return f"{device} ({'host: ' + host if host else backend})"


def machine_of(rows: pd.DataFrame) -> str:
    """The machine of a run's rows (its first row's)."""
    return machine(rows.iloc[0]) if len(rows) else "?"
