"""A machine, as asv's is: the host a run's times depend on (`MACHINE`), kept apart and named alike everywhere."""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from jaxmlp import units

if TYPE_CHECKING:
    import pandas as pd

MACHINE = ("machine_cpu", "machine_cores", "machine_backend", "machine_device", "machine_name")
"""What two runs must share to be on one machine (files before schema version 5: `results.schema.upgrade`)."""

SETTINGS = ("size", "xla_flags", "jax_default_matmul_precision")
"""A run's settings that change its times: two runs that differ in one are two environments."""
ENVIRONMENT = (*MACHINE, "jax", "jaxlib", "commit", *SETTINGS)
"""What two runs of one environment share: machine, jax, jaxlib, the suite's commit and the settings."""


def _known(value: Any) -> bool:
    pandas = sys.modules.get("pandas")  # where pandas was never imported, no value is its NA (a process that
    # writes a result reads no table: pandas is not imported for it)
    return (
        value is not None
        and (pandas is None or value is not pandas.NA)
        and not (isinstance(value, float) and math.isnan(value))
        and str(value) not in ("", "unknown", "None")
    )


def machine(row: Mapping[str, Any] | pd.Series) -> str:
    """A machine as one label: ``AMD EPYC, 2 cores`` (``1 core``) for a host without an accelerator, ``TPU v5 lite
    (host: 13 cores)`` for one with; its name first where the user gave one (``lab-1: AMD EPYC, 2 cores``)."""
    cores = row.get("machine_cores")
    count = units.count(round(float(cores)), "core") if _known(cores) and cores is not None else ""
    cpu = str(row.get("machine_cpu")) if _known(row.get("machine_cpu")) else ""
    backend = str(row.get("machine_backend")) if _known(row.get("machine_backend")) else "cpu"
    name = f"{row.get('machine_name')}: " if _known(row.get("machine_name")) else ""
    if backend == "cpu":
        return name + ", ".join(p for p in (cpu or "a CPU", count) if p)
    device = str(row.get("machine_device")) if _known(row.get("machine_device")) else backend.upper()
    host = ", ".join(p for p in (cpu, count) if p)
    return f"{name}{device} ({'host: ' + host if host else backend})"


def machine_of(rows: pd.DataFrame) -> str:
    """The machine of a run's rows (its first row's); ``… · its CPU`` for CPU rows on an accelerator's host."""
    if not len(rows):
        return "?"
    first = rows.iloc[0]
    label = machine(first)
    backends = set(rows["backend"].dropna()) if "backend" in rows else set()
    if backends == {"cpu"} and _known(first.get("machine_backend")) and first.get("machine_backend") != "cpu":
        label += " · its CPU"
    return label


def environment(row: Mapping[str, Any] | pd.Series) -> str:
    """An environment as words: ``jax 0.10.2, jaxlib 0.10.2, commit 8da3c890`` and its non-default settings."""
    commit = str(row.get("commit"))[:8] if _known(row.get("commit")) else "?"
    settings = [
        f"{label} {value}"
        for key, label in (("size", "size"), ("xla_flags", "XLA_FLAGS"), ("jax_default_matmul_precision", "precision"))
        if _known(value := row.get(key)) and value not in ("quick", "default")
    ]
    return ", ".join([f"jax {row.get('jax') or '?'}, jaxlib {row.get('jaxlib') or '?'}, commit {commit}", *settings])
