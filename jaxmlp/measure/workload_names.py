"""A workload's spec (``file.py:make``, ``module:make`` or a built-in's name) and the name its results carry: plain
text, no JAX, so that reading result files never loads it."""

from __future__ import annotations

from pathlib import Path

from jaxmlp.errors import JaxmlpError
from jaxmlp.registry import SWEEP_WORKLOADS

__all__ = ["parse_spec", "spec_name", "workload_name"]


def parse_spec(spec: str) -> tuple[str, str]:
    """``file.py:make`` or ``module:make`` as (where, function); the function is ``make`` when not named."""
    where, _, attribute = spec.rpartition(":") if ":" in spec else (spec, "", "make")
    if not where or not attribute.isidentifier():
        raise JaxmlpError(f"workload {spec!r}: name it as path/to/file.py:make or package.module:make")
    return where, attribute


def spec_name(spec: str) -> str:
    """The name a user workload's results carry: the file's or module's last part, and the function when it
    is not ``make`` (``bench/workloads/scan_heavy.py:make`` -> ``scan_heavy``)."""
    where, attribute = parse_spec(spec)
    stem = Path(where).stem if where.endswith(".py") else where.rpartition(".")[2]
    return stem if attribute == "make" else f"{stem}.{attribute}"


def workload_name(spec: str) -> str:
    """The name a workload's results carry: a built-in's own, else `spec_name`."""
    return spec if spec in SWEEP_WORKLOADS else spec_name(spec)
