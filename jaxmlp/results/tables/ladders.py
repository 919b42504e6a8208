"""The ladders of one run: each pipeline's epoch and each loader's input against its precision's floor."""

from __future__ import annotations

from typing import Any

import pandas as pd

from jaxmlp import registry
from jaxmlp.results.store.frames import query
from jaxmlp.results.tables.base import mark_best, precision_of, precisions, shows
from jaxmlp.results.tables.floors import floor_of, floors

PIPELINE_RUNG = "pipeline "
FLOOR_RUNG = "floor, "
FLOORS = tuple(f"{FLOOR_RUNG}{p}" for p in registry.GEMM_PRECISIONS)
"""The floors' rungs in the epoch ladder, one a precision (``floor, f32``)."""
FLOOR = FLOORS[0]
STEP_GEMMS = "the step's matmuls alone"

LADDER_KEYS = list(registry.EPOCH.params)
"""An epoch's parameters (`registry.EPOCH`): a rung of the ladder each."""
LADDER_COLUMNS = [
    *LADDER_KEYS,
    *(f"{part}_{column}" for part in ("loader", "epoch") for column in ("s", "iqr_s", "x_floor", "x_scan", "best")),
]
"""The loader ladder's columns: each rung's keys, then `_rungs`' columns of its input alone and of its epoch."""
PIPELINE_COLUMNS = [
    "backend",
    "rung",
    "precision",
    "epoch_s",
    "epoch_iqr_s",
    "x_floor",
    "samples_per_s",
    "compile_s",
    "rounds",
    "library",
    "gflop_per_s",
    "pipeline",
    "workers",
]


def rung_name(pipeline: object, workers: object = 0, precision: object = "f32") -> str:
    """A pipeline's rung in the epoch ladder: ``pipeline seed, 1 worker``, ``pipeline scan, bf16``."""
    name = f"{PIPELINE_RUNG}{pipeline}"
    if not (workers is None or workers is pd.NA or workers == 0):
        name += f", {workers} worker{'' if workers == 1 else 's'}"
    return name if precision_of(precision) == "f32" else f"{name}, {precision_of(precision)}"


def _rungs(rows: pd.DataFrame, name: str, keys: list[str], floor: pd.Series, scan: pd.Series) -> pd.DataFrame:
    part = rows.set_index(keys)
    return pd.DataFrame(
        {
            f"{name}_s": part["median"],
            f"{name}_iqr_s": part["iqr"],
            f"{name}_x_floor": part["median"] / floor.to_numpy(),
            f"{name}_x_scan": part["median"] / scan.to_numpy(),
            f"{name}_best": mark_best(part["median"], part["q1"], part["q3"]),
        }
    )


@shows(registry.LOADER)
def loader_ladder(df: pd.DataFrame, floor_table: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per backend, each loader pipeline by workers and precision: its input alone and its epoch (median, IQR in
    seconds) as times its precision's floor and ``scan`` epoch, the fastest of each column marked. ``floor_table``:
    `floors` of the same run, where the caller has it."""
    loader, epochs = query(df, registry.LOADER), query(df, registry.EPOCH)
    floor_table = floors(df) if floor_table is None else floor_table
    frames = []
    for backend in sorted(epochs["backend"].unique()) if len(epochs) else [None]:
        mine = epochs[epochs["backend"] == backend] if backend is not None else epochs
        mine = mine.assign(precision=precisions(mine))
        scans = mine[mine["pipeline"] == "scan"].groupby("precision")["median"].median() if len(mine) else {}
        fed = mine[mine["pipeline"].isin(registry.LOADER_PIPELINES)] if len(mine) else mine
        parts = []
        if len(loader):
            alone = loader.assign(precision="f32")
            n = len(alone)
            parts.append(
                _rungs(
                    alone,
                    "loader",
                    ["pipeline", "workers", "precision"],
                    pd.Series([floor_of(floor_table, backend, "f32")] * n),
                    pd.Series([float(pd.Series(scans).get("f32", float("nan")))] * n),
                )
            )
        if len(fed):
            floor_by = {p: floor_of(floor_table, backend, p) for p in set(fed["precision"])}
            scan_by = {p: float(pd.Series(scans).get(p, float("nan"))) for p in set(fed["precision"])}
            parts.append(
                _rungs(
                    fed,
                    "epoch",
                    ["pipeline", "workers", "precision"],
                    fed["precision"].map(floor_by),
                    fed["precision"].map(scan_by),
                )
            )
        if parts:
            frames.append(pd.concat(parts, axis="columns").reset_index().assign(backend=backend))
    if not frames:
        return pd.DataFrame(columns=LADDER_COLUMNS)
    out = pd.concat(frames, ignore_index=True).reindex(columns=LADDER_COLUMNS)
    order = {p: i for i, p in enumerate(registry.LOADER_PIPELINES)}
    out = out.sort_values(LADDER_KEYS, key=lambda c: c.map(order) if c.name == "pipeline" else c)
    for best in ("loader_best", "epoch_best"):  # "" where not marked (a column of no marks is float NaN)
        out[best] = out[best].astype(object).where(out[best].notna(), "")
    return out.reset_index(drop=True)


def best_workers(df: pd.DataFrame) -> dict[str, int]:
    """Each loader pipeline with workers, and its worker count with the fastest input alone."""
    loader = query(df, registry.LOADER)
    if loader.empty:
        return {}
    with_workers = loader[loader["pipeline"].isin(registry.WORKER_PIPELINES)].sort_values("median")
    return {str(p): int(rows["workers"].iloc[0]) for p, rows in with_workers.groupby("pipeline", sort=False)}


@shows(registry.EPOCH, registry.STEP_GEMMS)
def pipeline_ladder(df: pd.DataFrame, floor_table: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per backend: each precision's floor, the step's matmuls alone, then each pipeline fastest first, each row as
    times its own precision's floor. ``floor_table``: `floors` of the same run, where the caller has it."""
    rows: list[dict[str, Any]] = []
    floor_table = floors(df) if floor_table is None else floor_table
    for backend, d in df.groupby("backend") if "backend" in df else ():
        epochs = query(d, registry.EPOCH)
        if epochs.empty:
            continue
        rows += [
            {
                "backend": backend,
                "rung": f"{FLOOR_RUNG}{f.precision}",
                "precision": f.precision,
                "epoch_s": f.floor_s,
                "library": f.library,
                "gflop_per_s": f.gflop_per_s,
            }
            for f in floor_table[floor_table["backend"] == backend].itertuples()
        ]
        rows += [
            {"backend": backend, "rung": STEP_GEMMS, "precision": "f32", "epoch_s": r.median, "epoch_iqr_s": r.iqr}
            for r in query(d, registry.STEP_GEMMS).itertuples()
        ]
        epochs = epochs.assign(precision=precisions(epochs))
        epochs = epochs.reindex(
            columns=[
                *epochs.columns.drop(["iqr", "samples_per_second", "compile_seconds", "rounds"], errors="ignore"),
                "iqr",
                "samples_per_second",
                "compile_seconds",
                "rounds",
            ]
        )  # absent in older rows
        rows += [
            {
                "backend": backend,
                "rung": rung_name(r.pipeline, r.workers, r.precision),
                "pipeline": r.pipeline,
                "workers": r.workers,
                "precision": r.precision,
                "epoch_s": r.median,
                "epoch_iqr_s": r.iqr,
                "samples_per_s": r.samples_per_second,
                "compile_s": r.compile_seconds,
                "rounds": r.rounds,  # the slow rungs may have fewer (bench's --slow-rounds)
            }
            for r in epochs.sort_values("median").itertuples()
        ]
    out = pd.DataFrame(rows, columns=PIPELINE_COLUMNS)
    if not out.empty:
        out["x_floor"] = [
            e / floor_of(floor_table, b, p) for e, b, p in zip(out["epoch_s"], out["backend"], out["precision"])
        ]
        out[["library", "pipeline"]] = out[["library", "pipeline"]].astype(object).fillna("")
    return out


def ladder_headlines(ladder: pd.DataFrame) -> list[dict[str, Any]]:
    """Per backend and precision: the fastest and ``seed`` pipelines against the floor row (None where none)."""
    out = []
    for (backend, precision), rungs in ladder.groupby(["backend", "precision"], sort=False):
        pipelines = rungs[rungs["rung"].str.startswith(PIPELINE_RUNG)]
        if len(pipelines):
            seed = pipelines[(pipelines["pipeline"] == "seed") & (pipelines["workers"].fillna(0) == 0)]
            floor = rungs[rungs["rung"] == f"{FLOOR_RUNG}{precision}"]
            out.append(
                {
                    "backend": backend,
                    "precision": precision,
                    "fastest": pipelines.iloc[0],
                    "seed": seed.iloc[0] if len(seed) else None,
                    "floor": floor.iloc[0] if len(floor) else None,
                }
            )
    return out
