"""CPU against an accelerator: each backend's newest run with an epoch ladder, and the two side by side."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from jaxmlp import registry
from jaxmlp.results.store.frames import query
from jaxmlp.results.tables.bench import shown_metadata
from jaxmlp.results.tables.derived import RunTables
from jaxmlp.results.tables.ladders import pipeline_ladder

ACCELERATOR_DIFFER = ("file", registry.HOST, "jax", "jaxlib", "torch", "python")
SIDE_BY_SIDE = (registry.UPDATE, registry.PREDICT, registry.MATMUL, registry.GEMM)
"""The benchmarks besides the epoch ladder that run on a backend, set side by side per backend."""


def newest_by_backend(runs_by_file: Mapping[str, pd.DataFrame]) -> dict[str, RunTables]:
    """The newest run of each backend that has an epoch ladder: its rows of that backend and their tables."""
    newest: dict[str, RunTables] = {}
    for rows in runs_by_file.values():
        if "backend" not in rows or not (rows["test"] == registry.EPOCH.id).any():
            continue  # no epoch, no ladder
        for backend, part in rows.groupby("backend"):
            if str(backend) in newest:  # a backend found: no ladder to build
                continue
            if not (tabled := RunTables(part)).pipeline_ladder.empty:
                newest[str(backend)] = tabled
    return newest


def benchmark_medians(run: pd.DataFrame, ladder: pd.DataFrame | None = None) -> pd.Series:
    """One backend's run as medians (s) by benchmark: the ladder's rungs, then every `SIDE_BY_SIDE` benchmark by its
    parameters. ``ladder``: `pipeline_ladder` of the same run, where the caller has it."""
    medians = (pipeline_ladder(run) if ladder is None else ladder).set_index("rung")["epoch_s"].to_dict()
    for bench in SIDE_BY_SIDE:
        shown = [p for p in bench.params if p != "backend"]
        for r in query(run, bench).itertuples():
            label = ", ".join(f"{p} {getattr(r, p)}" for p in shown if hasattr(r, p))
            medians[f"{bench.id.removeprefix('test_')}{': ' if label else ''}{label}"] = r.median
    return pd.Series(medians, dtype=float)


def cpu_vs_accelerator(
    runs_by_file: Mapping[str, pd.DataFrame], accelerator: str, newest: Mapping[str, RunTables] | None = None
) -> tuple[pd.DataFrame, dict[str, tuple[Any, Any]] | None]:
    """The newest CPU and ``accelerator`` runs side by side (per benchmark both ran: each median and CPU / accelerator),
    and what differs between them (None: not both). ``newest``: where the caller has it."""
    newest = newest_by_backend(runs_by_file) if newest is None else newest
    if not {"cpu", accelerator} <= set(newest):
        return pd.DataFrame(), None
    cpu_run, other_run = newest["cpu"], newest[accelerator]
    table = pd.DataFrame(
        {
            "cpu_s": benchmark_medians(cpu_run.rows, cpu_run.pipeline_ladder),
            "accelerator_s": benchmark_medians(other_run.rows, other_run.pipeline_ladder),
        }
    )
    table = table.dropna()  # a benchmark only one side ran is not a comparison
    table["cpu_over_accelerator"] = table["cpu_s"] / table["accelerator_s"]
    cpu, other = shown_metadata(cpu_run.rows), shown_metadata(other_run.rows)
    differ = {key: (cpu[key], other[key]) for key in ACCELERATOR_DIFFER if cpu[key] != other[key]}
    return table.rename_axis("benchmark").reset_index(), differ
