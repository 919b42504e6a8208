"""The floor per backend and precision of a run (docs/methods/floor.md); every table of the run reads `floors`."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from jaxmlp import registry
from jaxmlp.results.store.frames import query
from jaxmlp.results.tables.base import mark_best, precisions, shows
from jaxmlp.results.tables.roofline import Bound, step_bound
from jaxmlp.units import duration, flop_rate

GEMM_UNAVAILABLE = "numpy has no bfloat16 type: no numpy bf16 rows"
"""Why a library and precision have no rows (`jaxmlp.measure.floor.unavailable` skips them)."""

FLOOR_COLUMNS = ["backend", "precision", "library", "shape", "gflop_per_s", "flops", "floor_s"]


def _order(values: pd.Series, order: tuple[str, ...]) -> pd.Series:
    return values.map({v: i for i, v in enumerate(order)}).fillna(len(order))


def matmul_rate(df: pd.DataFrame) -> pd.DataFrame:
    """Per backend: the floor's own 2048^3 matmul, its time (one product's), rate and precision."""
    d = query(df, registry.MATMUL)
    if d.empty:
        return pd.DataFrame(columns=["backend", "precision", "matmul_ms", "gflop_per_s"])
    setting = "jax_default_matmul_precision"
    run = d[setting].astype(object).fillna("default") if setting in d else pd.Series("default", index=d.index)
    f32 = (d["backend"] == "cpu") | run.isin(["highest", "float32"])
    if "round_calls" in d:
        f32 |= d["round_calls"].notna()
    return pd.DataFrame(
        {
            "backend": d["backend"],
            "precision": run.where(~f32, "f32"),
            "matmul_ms": d["median"] * 1e3,
            "gflop_per_s": d["flops"] / d["median"] / 1e9,
        }
    ).reset_index(drop=True)


@shows(registry.GEMM)
def gemm_rates(df: pd.DataFrame) -> pd.DataFrame:
    """Per backend, shape, precision and library: a product's median time and rate, the fastest marked."""
    d = query(df, registry.GEMM)
    columns = [
        "backend",
        "shape",
        "precision",
        "library",
        "gemm_ms",
        "gemm_iqr_ms",
        "gflop_per_s",
        "bf16_speedup",
        "best",
    ]
    if d.empty:
        return pd.DataFrame(columns=columns)
    out = pd.DataFrame(
        {
            "backend": d["backend"],
            "shape": d["shape"],
            "precision": d["precision"],
            "library": d["library"],
            "gemm_ms": d["median"] * 1e3,
            "gemm_iqr_ms": d["iqr"] * 1e3,
            "gflop_per_s": d["flops"] / d["median"] / 1e9,
            "q1": d["q1"] * 1e3,
            "q3": d["q3"] * 1e3,
            "m": d["m"],
            "k": d["k"],
            "n": d["n"],
        }
    )
    out["best"] = ""
    for _, rows in out.groupby(["backend", "shape", "precision"]):
        out.loc[rows.index, "best"] = mark_best(rows["gemm_ms"], rows["q1"], rows["q3"])
    f32 = out[out["precision"] == "f32"].set_index(["backend", "shape", "library"])["gflop_per_s"]
    keys = pd.MultiIndex.from_frame(out[["backend", "shape", "library"]])
    out["bf16_speedup"] = (out["gflop_per_s"].to_numpy() / f32.reindex(keys).to_numpy()).astype(float)
    out.loc[out["precision"] != "bf16", "bf16_speedup"] = float("nan")
    out["size"] = -(out["m"] * out["k"] * out["n"]).astype(float)
    out = out.sort_values(
        ["backend", "size", "shape", "precision", "library"],
        kind="stable",
        key=lambda c: (
            _order(c, registry.GEMM_PRECISIONS)
            if c.name == "precision"
            else _order(c, registry.GEMM_LIBRARIES)
            if c.name == "library"
            else c
        ),
    )
    return out.reindex(columns=columns).reset_index(drop=True)


def _rates(run: pd.DataFrame, gemm_table: pd.DataFrame) -> pd.DataFrame:
    """Every rate the run measured: its GEMM rows and its float32 matmul (backend, precision, library, shape)."""
    gemm = gemm_table[["backend", "precision", "library", "shape", "gflop_per_s"]]
    matmul = matmul_rate(run).assign(library="xla", shape="2048x2048x2048")
    matmul = matmul[matmul["precision"] == "f32"][["backend", "precision", "library", "shape", "gflop_per_s"]]
    return pd.concat([f for f in (gemm, matmul) if len(f)], ignore_index=True) if len(gemm) or len(matmul) else gemm


@shows(registry.MATMUL)
def floors(run: pd.DataFrame, gemm_table: pd.DataFrame | None = None) -> pd.DataFrame:
    """One run's floor per backend and precision: its best rate (library and shape), the epoch's FLOPs and the epoch at
    that rate (``floor_s``); without GEMM rows, the f32 floor its epochs recorded. ``gemm_table``: `gemm_rates` of the
    same run, where the caller has it."""
    epochs = query(run, registry.EPOCH)
    rates = _rates(run, gemm_rates(run) if gemm_table is None else gemm_table)
    rows: list[dict[str, Any]] = []
    for backend in sorted(set(epochs.get("backend", pd.Series(dtype=object)).dropna()) | set(rates["backend"])):
        mine = epochs[epochs["backend"] == backend] if len(epochs) else epochs
        flops_of = (
            mine.assign(p=precisions(mine)).groupby("p")["flops"].median().to_dict()
            if len(mine) and "flops" in mine
            else {}
        )
        measured = rates[rates["backend"] == backend]
        for precision in registry.GEMM_PRECISIONS:
            at = measured[measured["precision"] == precision].sort_values("gflop_per_s", ascending=False)
            flops = float(flops_of.get(precision, flops_of.get("f32", float("nan"))))
            if len(at):
                best = at.iloc[0]
                rate, library, shape = float(best["gflop_per_s"]), str(best["library"]), str(best["shape"])
            elif precision == "f32" and len(mine) and "floor_seconds" in mine and mine["floor_seconds"].notna().any():
                rate, library, shape = flops / float(mine["floor_seconds"].median()) / 1e9, "xla", "2048x2048x2048"
            else:
                continue
            rows.append(
                {
                    "backend": backend,
                    "precision": precision,
                    "library": library,
                    "shape": shape,
                    "gflop_per_s": rate,
                    "flops": flops,
                    "floor_s": flops / (rate * 1e9),
                }
            )
    return pd.DataFrame(rows, columns=FLOOR_COLUMNS)


def floor_of(table: pd.DataFrame, backend: object, precision: object) -> float:
    """``floors``' epoch time for a backend and precision (NaN where the run set none)."""
    at = table[(table["backend"] == backend) & (table["precision"] == precision)]
    return float(at["floor_s"].iloc[0]) if len(at) else float("nan")


def floor_line(row: Any) -> str:
    """``cpu f32 floor: 954 ms an epoch at 208 GFLOP/s (numpy, 2048x2048x2048)``."""
    return (
        f"{row.backend} {row.precision} floor: {duration(row.floor_s)} an epoch at "
        f"{flop_rate(row.gflop_per_s * 1e9)} ({row.library}, {row.shape})"
    )


EPOCH_ROOFLINE_COLUMNS = ["backend", "pipeline", "precision", "epoch_s", *Bound._fields, "x_bound"]


def loop_step_seconds(run: pd.DataFrame) -> dict[str, float]:
    """Per backend, the empty scan's cost a step (`registry.EMPTY_SCAN`, its median over its steps): the loop's own
    cost; none for a backend the run did not measure it on."""
    rows = query(run, registry.EMPTY_SCAN)
    if rows.empty or "steps" not in rows:
        return {}
    per_step = (rows["median"] / rows["steps"].astype(float)).groupby(rows["backend"]).min()
    return {str(k): float(v) for k, v in per_step.items() if pd.notna(v)}


def _given(row: pd.Series, column: str, otherwise: float) -> float:
    value = row.get(column)
    return float(value) if value is not None and pd.notna(value) else otherwise


@shows(registry.EMPTY_SCAN)
def epoch_roofline(run: pd.DataFrame, floor_table: pd.DataFrame | None = None) -> pd.DataFrame:
    """Each epoch of one run against its bound (`step_bound`): its compute, memory and loop terms in seconds,
    ``bound_s``, which binds and ``x_bound``; empty without a bandwidth. ``floor_table``: `floors` of the same run,
    where the caller has it."""
    epochs, bandwidth = query(run, registry.EPOCH), query(run, registry.BANDWIDTH)
    if epochs.empty or bandwidth.empty:
        return pd.DataFrame(columns=EPOCH_ROOFLINE_COLUMNS)
    table = floors(run) if floor_table is None else floor_table
    best = (bandwidth["bytes"] / bandwidth["median"]).groupby(bandwidth["backend"]).max()
    loops = loop_step_seconds(run)
    known = {c: epochs[c].dropna() if c in epochs else pd.Series(dtype=float) for c in ("steps", "samples")}
    rows = []
    for _, epoch in epochs.iterrows():
        given = epoch.get("precision")
        precision = given if isinstance(given, str) else "f32"  # a row without one (NaN): f32
        # a row without them (a benchmark that failed after its rounds): the run's other epochs', of one training set
        steps = _given(epoch, "steps", float(known["steps"].median()))
        samples = _given(epoch, "samples", float(known["samples"].median()))
        bound = step_bound(
            str(epoch["pipeline"]),
            precision,
            steps,
            None if math.isnan(samples) else samples,
            int(_given(epoch, "scan_unroll", 1.0)),
            floor_of(table, epoch["backend"], precision),
            float(best.get(epoch["backend"], float("nan"))),
            loops.get(str(epoch["backend"])),
        )
        rows.append(
            {
                "backend": epoch["backend"],
                "pipeline": epoch["pipeline"],
                "precision": precision,
                "epoch_s": epoch["median"],
                **bound._asdict(),
                "x_bound": epoch["median"] / bound.bound_s,
            }
        )
    return pd.DataFrame(rows, columns=EPOCH_ROOFLINE_COLUMNS).sort_values("epoch_s").reset_index(drop=True)
