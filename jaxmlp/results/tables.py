"""Views of the results: pure functions from the tidy DataFrame (`jaxmlp.results.frames`) to small tables.

Every table names the benchmarks it shows (`shows`), so a test can check that each registered benchmark
reaches some table. Statistics come from `jaxmlp.stats`; the report and the terminal summary only render
these tables. Ratios are only ever taken inside one run, so numbers from different machines or versions
never meet in one ratio; where runs are set side by side (CPU vs an accelerator), `cpu_vs_accelerator` says
what differs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from jaxmlp import registry
from jaxmlp.registry import ALPHA, MEMORY_THRESHOLD, THRESHOLD, Benchmark
from jaxmlp.results.frames import query
from jaxmlp.stats import INVALID, compare
from jaxmlp.units import duration, flop_rate, percent, ratio

F = TypeVar("F", bound=Callable[..., Any])
SHOWN: dict[str, tuple[Benchmark, ...]] = {}
"""Each table function's name, and the benchmarks it shows."""


def shows(*benchmarks: Benchmark) -> Callable[[F], F]:
    """Declare the benchmarks a table shows."""

    def register(table: F) -> F:
        SHOWN[table.__name__] = benchmarks
        return table

    return register


# --- one benchmark file ---------------------------------------------------------------------------------------


def _by_variant(df: pd.DataFrame, benchmark: Benchmark, value: str = "median") -> pd.DataFrame | None:
    """``value`` (median, iqr) of each of ``benchmark``'s variants (columns) per backend and batch size; None without
    rows."""
    d = query(df, benchmark)
    if d.empty:
        return None
    t = d.pivot_table(index=["backend", "batch_size"], columns="variant", values=value, aggfunc="median")
    return t.reindex(columns=list(benchmark.variants))  # a file without one variant shows it empty


def _variant_table(df: pd.DataFrame, benchmark: Benchmark, columns: Callable[..., dict[str, Any]]) -> pd.DataFrame:
    """A row per backend and batch size: ``columns(medians, iqrs, *variants)`` of the medians and IQRs by variant."""
    t, iqr = _by_variant(df, benchmark), _by_variant(df, benchmark, "iqr")
    return pd.DataFrame() if t is None else pd.DataFrame(columns(t, iqr, *benchmark.variants)).reset_index()


@shows(registry.UPDATE)
def jit_vs_eager(df: pd.DataFrame) -> pd.DataFrame:
    """Median step time per variant and batch size, with eager/jit and dispatch/jit ratios."""
    return _variant_table(df, registry.UPDATE, lambda t, iqr, jit, dispatch, eager: {
        "jit_ms": t[jit] * 1e3, "jit_iqr_ms": iqr[jit] * 1e3, "dispatch_ms": t[dispatch] * 1e3,
        "dispatch_iqr_ms": iqr[dispatch] * 1e3, "eager_ms": t[eager] * 1e3, "eager_iqr_ms": iqr[eager] * 1e3,
        "jit_speedup": t[eager] / t[jit]})  # fmt: skip


@shows(registry.PREDICT)
def vmap_vs_loop(df: pd.DataFrame) -> pd.DataFrame:
    """Median predict time per variant and batch size, with loop/vmap and loop/jit(vmap) ratios."""
    return _variant_table(df, registry.PREDICT, lambda t, iqr, vmap, loop, jit_vmap: {
        "loop_ms": t[loop] * 1e3, "loop_iqr_ms": iqr[loop] * 1e3, "vmap_ms": t[vmap] * 1e3,
        "vmap_iqr_ms": iqr[vmap] * 1e3, "jit_vmap_ms": t[jit_vmap] * 1e3, "jit_vmap_iqr_ms": iqr[jit_vmap] * 1e3,
        "vmap_speedup": t[loop] / t[vmap], "jit_vmap_speedup": t[loop] / t[jit_vmap]})  # fmt: skip


LADDER_KEYS = ["backend", "pipeline", "workers"]
LADDER_COLUMNS = [*LADDER_KEYS, "loader_s", "loader_iqr_s", "loader_x_floor", "loader_x_scan", "loader_best",
                  "epoch_s", "epoch_iqr_s", "epoch_x_floor", "epoch_x_scan", "epoch_best"]  # fmt: skip
BEST, TIED = "fastest", "~fastest"


def _mark_best(medians: pd.Series, q1: pd.Series, q3: pd.Series) -> pd.Series:
    """``fastest`` for the smallest median; ``~fastest`` where the quartile range overlaps the best's (so the two cannot
    be told apart in this run); else empty."""
    marks = pd.Series("", index=medians.index, dtype=object)
    if medians.notna().any():
        best = int(np.nanargmin(medians.to_numpy(dtype=float)))
        marks[(q1 <= q3.iloc[best]) & (q3 >= q1.iloc[best])] = TIED
        marks.iloc[best] = BEST
    return marks


def _rung_columns(rows: pd.DataFrame, name: str, floor: float, scan: float) -> pd.DataFrame:
    part = rows.set_index(["pipeline", "workers"])
    return pd.DataFrame({f"{name}_s": part["median"], f"{name}_iqr_s": part["iqr"],
                         f"{name}_x_floor": part["median"] / floor, f"{name}_x_scan": part["median"] / scan,
                         f"{name}_best": _mark_best(part["median"], part["q1"], part["q3"])})  # fmt: skip


@shows(registry.LOADER)
def loader_ladder(df: pd.DataFrame) -> pd.DataFrame:
    """Per backend, each loader pipeline by worker count: its input alone (``loader``, host only) and its training
    epoch (``epoch``), median and IQR in seconds, each as times the compute floor and times the ``scan`` epoch
    measured in the same run; the fastest of each column marked, with those it cannot be told from."""
    loader, epochs = query(df, registry.LOADER), query(df, registry.EPOCH)
    frames = []
    for backend in sorted(epochs["backend"].unique()) if len(epochs) else [None]:
        mine = epochs[epochs["backend"] == backend] if backend is not None else epochs
        floor = float(mine.get("floor_seconds", pd.Series(dtype=float)).median())
        scan = float(mine.loc[mine["pipeline"] == "scan", "median"].median()) if len(mine) else float("nan")
        fed = mine[mine["pipeline"].isin(registry.LOADER_PIPELINES)] if len(mine) else mine
        parts = [_rung_columns(rows, name, floor, scan) for name, rows in (("loader", loader), ("epoch", fed))
                 if len(rows)]  # fmt: skip
        if parts:
            frames.append(pd.concat(parts, axis="columns").reset_index().assign(backend=backend))
    if not frames:
        return pd.DataFrame(columns=LADDER_COLUMNS)
    out = pd.concat(frames, ignore_index=True).reindex(columns=LADDER_COLUMNS)
    order = {p: i for i, p in enumerate(registry.LOADER_PIPELINES)}
    out = out.sort_values(LADDER_KEYS, key=lambda c: c.map(order) if c.name == "pipeline" else c)
    return out.fillna({"loader_best": "", "epoch_best": ""}).reset_index(drop=True)


def best_workers(df: pd.DataFrame) -> dict[str, int]:
    """Each loader pipeline with workers, and its worker count with the fastest input alone."""
    loader = query(df, registry.LOADER)
    if loader.empty:
        return {}
    with_workers = loader[loader["pipeline"].isin(registry.WORKER_PIPELINES)].sort_values("median")
    return {str(p): int(rows["workers"].iloc[0]) for p, rows in with_workers.groupby("pipeline", sort=False)}


@shows(registry.MATMUL)
def matmul_rate(df: pd.DataFrame) -> pd.DataFrame:
    """Per backend (and its matmul precision, where a row's was not JAX's default): the 2048^3 float32 matmul behind
    the floor, its time (one product's) and rate. Rows timed in rounds (``round_calls``, since the f32 precision
    compiles at ``highest``) are ``highest``; older ones are at the run's ``jax_default_matmul_precision``."""
    d = query(df, registry.MATMUL)
    if d.empty:
        return d
    out = pd.DataFrame({"backend": d["backend"], "matmul_ms": d["median"] * 1e3,
                        "gflop_per_s": d["flops"] / d["median"] / 1e9})  # fmt: skip
    setting = "jax_default_matmul_precision"
    run = d[setting].astype(object).fillna("default") if setting in d else pd.Series("default", index=d.index)
    precision = run.where(d["round_calls"].isna(), "highest") if "round_calls" in d else run
    if (precision != "default").any():
        out.insert(1, "precision", precision)
    return out.reset_index(drop=True)


GEMM_UNAVAILABLE = "numpy has no bfloat16 type: no numpy bf16 rows"
"""Why a library and precision have no rows (`jaxmlp.measure.floor.unavailable` skips them)."""


def _order(values: pd.Series, order: tuple[str, ...]) -> pd.Series:
    return values.map({v: i for i, v in enumerate(order)}).fillna(len(order))


@shows(registry.GEMM)
def gemm_rates(df: pd.DataFrame) -> pd.DataFrame:
    """Per backend, shape (2048^3 first, then the MLP's layers at batch 128), precision and library: a product's
    median time (one product's) and rate; ``fastest`` marks the best library of each backend, shape
    and precision (``~fastest``: its IQR overlaps the best's); bf16's rate as times f32's of the same library."""
    d = query(df, registry.GEMM)
    columns = ["backend", "shape", "precision", "library", "gemm_ms", "gemm_iqr_ms", "gflop_per_s", "bf16_speedup",
               "best"]  # fmt: skip
    if d.empty:
        return pd.DataFrame(columns=columns)
    out = pd.DataFrame({"backend": d["backend"], "shape": d["shape"], "precision": d["precision"],
                        "library": d["library"], "gemm_ms": d["median"] * 1e3,
                        "gemm_iqr_ms": d["iqr"] * 1e3, "gflop_per_s": d["flops"] / d["median"] / 1e9,
                        "q1": d["q1"] * 1e3, "q3": d["q3"] * 1e3, "m": d["m"], "k": d["k"],
                        "n": d["n"]})  # fmt: skip
    out["best"] = ""
    for _, rows in out.groupby(["backend", "shape", "precision"]):
        out.loc[rows.index, "best"] = _mark_best(rows["gemm_ms"], rows["q1"], rows["q3"])
    f32 = out[out["precision"] == "f32"].set_index(["backend", "shape", "library"])["gflop_per_s"]
    keys = pd.MultiIndex.from_frame(out[["backend", "shape", "library"]])
    out["bf16_speedup"] = (out["gflop_per_s"].to_numpy() / f32.reindex(keys).to_numpy()).astype(float)
    out.loc[out["precision"] != "bf16", "bf16_speedup"] = float("nan")
    out["size"] = -(out["m"] * out["k"] * out["n"]).astype(float)  # the biggest (2048^3) first, then the layers
    out = out.sort_values(["backend", "size", "shape", "precision", "library"], kind="stable",
                          key=lambda c: _order(c, registry.GEMM_PRECISIONS) if c.name == "precision"
                          else _order(c, registry.GEMM_LIBRARIES) if c.name == "library" else c)  # fmt: skip
    return out.reindex(columns=columns).reset_index(drop=True)


def ceilings(df: pd.DataFrame) -> list[dict[str, Any]]:
    """Per backend, which library reached the ceiling (the best float32 2048^3 rate of `gemm_rates`) and every
    library's rate there, in GFLOP/s (``rates``, fastest first)."""
    rates = gemm_rates(df)
    square = rates[(rates["precision"] == "f32") & (rates["shape"] == "x".join(["2048"] * 3))]
    out = []
    for backend, rows in square.groupby("backend"):
        ranked = rows.sort_values("gflop_per_s", ascending=False)
        rates_of = {str(lib): float(r) for lib, r in zip(ranked["library"], ranked["gflop_per_s"])}
        out.append({"backend": backend, "library": str(ranked["library"].iloc[0]),
                    "gflop_per_s": float(ranked["gflop_per_s"].iloc[0]), "rates": rates_of})  # fmt: skip
    return out


def ceiling_line(ceiling: Mapping[str, Any]) -> str:
    """``cpu: the ceiling (the best 2048³ float32 rate) is torch's, 353 GFLOP/s (xla 266 GFLOP/s, numpy ...)``."""
    others = ", ".join(
        f"{lib} {flop_rate(r * 1e9)}" for lib, r in ceiling["rates"].items() if lib != ceiling["library"]
    )
    return (f"{ceiling['backend']}: the ceiling (the best 2048³ float32 rate) is {ceiling['library']}'s, "
            f"{flop_rate(ceiling['gflop_per_s'] * 1e9)}" + (f" ({others})" if others else ""))  # fmt: skip


FLOOR = "floor (epoch FLOPs / XLA's 2048^3 matmul rate)"
BEST_FLOOR = "best floor (epoch FLOPs / the best library's 2048^3 rate)"
FLOORS = (FLOOR, BEST_FLOOR)
STEP_GEMMS = "the step's matmuls alone"
PIPELINE_RUNG = "pipeline "


BEST_BF16_FLOOR = "best bf16 floor (epoch FLOPs / the best library's 2048^3 bf16 rate)"


def _precision(value: object) -> str:
    """A row's precision: older rows (none recorded) were float32."""
    return "f32" if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)) else str(value)


def rung_name(pipeline: object, workers: object = 0, precision: object = "f32") -> str:
    """A pipeline's rung in the epoch ladder: ``pipeline seed``, ``pipeline seed, 1 worker``, ``pipeline scan,
    bf16`` (float32 unsaid)."""
    name = f"{PIPELINE_RUNG}{pipeline}"
    if not (workers is None or workers is pd.NA or workers == 0):
        name += f", {workers} worker{'' if workers == 1 else 's'}"
    return name if _precision(precision) == "f32" else f"{name}, {_precision(precision)}"


def _floor_rows(backend: object, epochs: pd.DataFrame) -> list[dict[str, Any]]:
    """The ladder's floors: XLA's, then (in runs that measured every library) the best library's, each with the
    library and the rate behind it."""
    everything = epochs
    if "precision" in epochs:
        epochs = epochs[epochs["precision"].map(_precision) == "f32"]
        if epochs.empty:
            epochs = everything
    flops = float(epochs["flops"].median()) if "flops" in epochs else float("nan")
    floor = float(epochs["floor_seconds"].median())
    rows = [{"backend": backend, "rung": FLOOR, "epoch_s": floor, "library": "xla", "gflop_per_s": flops / floor / 1e9}]
    if "best_floor_seconds" in epochs and epochs["best_floor_seconds"].notna().any():
        best = float(epochs["best_floor_seconds"].median())
        library = epochs["best_floor_library"].dropna().mode().iloc[0]
        rows.append({"backend": backend, "rung": BEST_FLOOR, "epoch_s": best, "library": library,
                     "gflop_per_s": flops / best / 1e9})  # fmt: skip
    bf16 = everything[everything["precision"].map(_precision) == "bf16"] if "precision" in everything else None
    if bf16 is not None and "best_floor_seconds" in bf16 and bf16["best_floor_seconds"].notna().any():
        best = float(bf16["best_floor_seconds"].median())
        rows.append({"backend": backend, "rung": BEST_BF16_FLOOR, "epoch_s": best, "precision": "bf16",
                     "library": bf16["best_floor_library"].dropna().mode().iloc[0],
                     "gflop_per_s": float(bf16["flops"].median()) / best / 1e9})  # fmt: skip
    return rows


@shows(registry.EPOCH, registry.STEP_GEMMS)
def pipeline_ladder(df: pd.DataFrame) -> pd.DataFrame:
    """Per backend: the compute floor (XLA's, then the best library's where the run measured them all, with the
    library and its rate), the step's matmuls alone, then each pipeline, slowest last; each row as times XLA's floor
    (``x_floor``) and the best floor (``x_best_floor``)."""
    rows: list[dict[str, Any]] = []
    for backend, d in df.groupby("backend") if "backend" in df else ():
        epochs = query(d, registry.EPOCH)
        if epochs.empty:
            continue
        rows += _floor_rows(backend, epochs)
        rows += [{"backend": backend, "rung": STEP_GEMMS, "epoch_s": r.median, "epoch_iqr_s": r.iqr}
                 for r in query(d, registry.STEP_GEMMS).itertuples()]  # fmt: skip
        rows += [{"backend": backend, "rung": rung_name(r.pipeline, r.workers, getattr(r, "precision", "f32")),
                  "pipeline": r.pipeline, "precision": _precision(getattr(r, "precision", "f32")),
                  "epoch_s": r.median, "epoch_iqr_s": r.iqr, "samples_per_s": r.samples_per_second,
                  "compile_s": r.compile_seconds} for r in epochs.sort_values("median").itertuples()]  # fmt: skip
    columns = ["backend", "rung", "epoch_s", "epoch_iqr_s", "samples_per_s", "compile_s", "library", "gflop_per_s",
               "pipeline", "precision"]  # fmt: skip
    out = pd.DataFrame(rows, columns=columns)
    if not out.empty:
        for name, rung in (("x_floor", FLOOR), ("x_best_floor", BEST_FLOOR)):
            floors = out[out["rung"] == rung].set_index("backend")["epoch_s"]
            out.insert(4 + (name == "x_best_floor"), name, out["epoch_s"] / out["backend"].map(floors))
        out["library"] = out["library"].fillna("")
        out["precision"] = out["precision"].fillna("")
        out["pipeline"] = out["pipeline"].fillna("")
    return out


# --- the performance goals (issue 24, item 5), read from one benchmark run ---------------------------------------

GOAL_FLOOR_FACTOR = 1.3
"""Goal 1: the fastest JAX float32 pipeline within this factor of the best float32 GEMM floor."""
GOAL_BF16_SPEEDUP = 2.5
"""Goal 2: the fastest bf16 pipeline at least this many times faster an epoch than the float32 scan."""
GOAL_SEED_SPEEDUP = 50.0
"""An accelerator's goal (issue 25): its fastest pipeline at least this many times faster an epoch than the
tutorial's ``seed`` pipeline on the same device."""
GOAL_ACCELERATOR_FLOOR = 3.0
"""An accelerator's goal (issue 25): its fastest pipeline within this factor of its floor at its own precision."""


def _gemm_square(rates: pd.DataFrame, precision: str) -> tuple[str, float] | None:
    """The best library and its GFLOP/s at 2048^3 in ``precision`` among `gemm_rates` rows (None where not
    measured)."""
    if rates.empty:
        return None
    rows = rates[(rates["precision"] == precision) & (rates["shape"] == "x".join(["2048"] * 3))]
    if rows.empty:
        return None
    best = rows.sort_values("gflop_per_s", ascending=False).iloc[0]
    return str(best["library"]), float(best["gflop_per_s"])


def goals(df: pd.DataFrame, accuracy: Mapping[str, float] | None = None) -> list[dict[str, Any]]:
    """Per backend, the goals read from one run's epoch ladder and GEMMs (issue 24's; an accelerator's own too,
    `_accelerator_goals`): ``goal``, ``met`` (None: not measurable in this run), ``text`` (the numbers behind it,
    in units). ``accuracy``: test accuracy after the
    tutorial's epochs per precision, where known (the bf16 goal holds only with accuracy kept)."""
    out: list[dict[str, Any]] = []
    ladder = pipeline_ladder(df)
    gemm = gemm_rates(df)
    for backend, rungs in ladder.groupby("backend") if not ladder.empty else ():
        runs = rungs[rungs["pipeline"] != ""]
        jax_rows = runs[~runs["pipeline"].isin(registry.TORCH_PIPELINES)]
        torch_rows = runs[runs["pipeline"].isin(registry.TORCH_PIPELINES)]
        best = rungs[rungs["rung"] == BEST_FLOOR]
        f32 = jax_rows[jax_rows["precision"] == "f32"]
        if len(f32) and len(best):
            fastest, floor = f32.iloc[0], float(best["epoch_s"].iloc[0])
            x = float(fastest.epoch_s) / floor
            out.append({"backend": backend, "goal": f"fastest JAX f32 pipeline within {GOAL_FLOOR_FACTOR}x the best "
                        "f32 GEMM floor", "met": x <= GOAL_FLOOR_FACTOR,
                        "text": f"{fastest.rung} {duration(fastest.epoch_s)} an epoch = {ratio(x)} the best floor "
                        f"({duration(floor)}, {best['library'].iloc[0]})"
                        + ("" if x <= GOAL_FLOOR_FACTOR else f": missed by {ratio(x / GOAL_FLOOR_FACTOR)}"),
                        })  # fmt: skip
        scan = runs[(runs["pipeline"] == "scan") & (runs["precision"] == "f32")]
        bf16 = runs[runs["precision"] == "bf16"]
        if len(scan) and len(bf16):
            fastest, base = bf16.iloc[0], float(scan["epoch_s"].iloc[0])
            speedup = base / float(fastest.epoch_s)
            kept = None if not accuracy or not {"f32", "bf16"} <= set(accuracy) else (
                abs(accuracy["bf16"] - accuracy["f32"]) <= 0.003)  # fmt: skip
            on = gemm[(gemm["backend"] == backend) & (gemm["shape"] == "x".join(["2048"] * 3))]
            xla = on[(on["library"] == "xla") & (on["precision"] == "bf16")]["bf16_speedup"]
            f32_best, bf16_best = _gemm_square(on, "f32"), _gemm_square(on, "bf16")
            machine = f"; this machine's 2048³ GEMM: bf16 {ratio(float(xla.iloc[0]))} f32 in XLA" if len(xla) else ""
            if f32_best and bf16_best:
                machine += (
                    f", best bf16 {flop_rate(bf16_best[1] * 1e9)} ({bf16_best[0]}) against best f32 "
                    f"{flop_rate(f32_best[1] * 1e9)} ({f32_best[0]}) = {ratio(bf16_best[1] / f32_best[1])}"
                )
            acc = ("; accuracy: no 8-epoch scan training run of each precision here (`jaxmlp train --pipeline scan "
                   "--precision bf16 --json reports`; tests/test_precision.py holds it within 0.3 point)"
                   if kept is None or accuracy is None else f"; accuracy after 8 epochs f32 "
                   f"{percent(accuracy['f32'])}, bf16 {percent(accuracy['bf16'])} "
                   f"({'kept' if kept else 'not kept'})")  # fmt: skip
            met = speedup >= GOAL_BF16_SPEEDUP and kept is not False
            out.append({"backend": backend, "goal": f"fastest bf16 pipeline >= {GOAL_BF16_SPEEDUP}x faster than f32 "
                        "scan, accuracy kept", "met": met,
                        "text": f"{fastest.rung} {duration(fastest.epoch_s)} against scan f32 {duration(base)}: "
                        f"{ratio(speedup)}" + ("" if met else f": missed by {ratio(GOAL_BF16_SPEEDUP / speedup)}")
                        + acc + machine})  # fmt: skip
        if backend != "cpu" and len(runs):
            out += _accelerator_goals(str(backend), runs, rungs, accelerator_floor(df[df["backend"] == backend]))
        for precision in ("f32", "bf16"):
            mine, theirs = (r[r["precision"] == precision] for r in (jax_rows, torch_rows))
            if len(mine) and len(theirs):
                a, b = mine.iloc[0], theirs.iloc[0]
                x = float(a.epoch_s) / float(b.epoch_s)
                out.append({"backend": backend, "goal": f"fastest JAX pipeline faster than the fastest PyTorch rung "
                            f"({precision})", "met": x < 1,
                            "text": f"{a.rung} {duration(a.epoch_s)} against {b.rung} {duration(b.epoch_s)}: "
                            f"{ratio(x)}" + ("" if x < 1 else f": missed by {ratio(x)}")})  # fmt: skip
    return out


def _accelerator_goals(backend: str, runs: pd.DataFrame, rungs: pd.DataFrame,
                       floors: pd.DataFrame) -> list[dict[str, Any]]:  # fmt: skip
    """An accelerator's two goals (issue 25) from its own run: its fastest pipeline against the tutorial's ``seed``
    on the same device, and against its floor at its own precision (`accelerator_floor`'s row); a miss says by how
    much, and which part holds it back as far as the run's rows tell: the step's matrix products alone in one
    program (compute), or the rest of the epoch (host loop, input, launches; the pipeline's trace, `jaxmlp
    profile`, splits it)."""
    out: list[dict[str, Any]] = []
    fastest = runs.iloc[0]
    seed = runs[runs["rung"] == rung_name("seed")]  # the tutorial's own: float32, no loader workers
    goal = f"fastest pipeline >= {GOAL_SEED_SPEEDUP:g}x faster an epoch than the tutorial's seed on this device"
    if len(seed):
        speedup = float(seed["epoch_s"].iloc[0]) / float(fastest.epoch_s)
        met = speedup >= GOAL_SEED_SPEEDUP
        out.append({"backend": backend, "goal": goal, "met": met,
                    "text": f"{fastest.rung} {duration(fastest.epoch_s)} against {seed['rung'].iloc[0]} "
                    f"{duration(seed['epoch_s'].iloc[0])}: {ratio(speedup)}"
                    + ("" if met else f": missed by {ratio(GOAL_SEED_SPEEDUP / speedup)}")})  # fmt: skip
    else:
        out.append({"backend": backend, "goal": goal, "met": None,
                    "text": "no seed epoch in this run (its DataLoader needs torch and torchvision: the bench "
                    "skips it, saying why, where they are missing, as on a TPU host)"})  # fmt: skip
    precision = str(fastest.precision) or "f32"
    goal = f"fastest pipeline within {GOAL_ACCELERATOR_FLOOR:g}x this device's floor at its precision"
    if floors.empty or precision not in set(floors["precision"]):
        out.append({"backend": backend, "goal": goal, "met": None,
                    "text": f"no 2048³ {precision} GEMM in this run to set the floor"})  # fmt: skip
        return out
    at: dict[str, Any] = floors[floors["precision"] == precision].iloc[0].to_dict()  # type: ignore[assignment]
    floor = float(at["floor_s"])
    x = float(fastest.epoch_s) / floor
    text = (f"{fastest.rung} {duration(fastest.epoch_s)} = {ratio(x)} the {precision} floor ({duration(floor)} at "
            f"{flop_rate(float(at['gflop_per_s']) * 1e9)}, {at['library']})")  # fmt: skip
    if x > GOAL_ACCELERATOR_FLOOR:
        text += f": missed by {ratio(x / GOAL_ACCELERATOR_FLOOR)}"
        alone = rungs[rungs["rung"] == STEP_GEMMS]
        if len(alone) and precision == "f32":
            matmuls = float(alone["epoch_s"].iloc[0])
            part = "compute" if matmuls / floor > GOAL_ACCELERATOR_FLOOR else "the rest of the epoch"
            text += (f"; the step's matrix products alone take {duration(matmuls)} ({ratio(matmuls / floor)} the "
                     f"floor), the rest of the epoch {duration(max(0.0, float(fastest.epoch_s) - matmuls))}: "
                     f"{part} holds it back")  # fmt: skip
        else:
            text += ("; which part holds it back: this run has the step's products alone in f32 only; the "
                     "pipeline's trace (`jaxmlp profile`) splits its epoch")  # fmt: skip
    out.append({"backend": backend, "goal": goal, "met": x <= GOAL_ACCELERATOR_FLOOR, "text": text})
    return out


def goal_line(goal: Mapping[str, Any]) -> str:
    """``cpu: goal ...: met|MISSED|not measured: the numbers``."""
    state = "not measured" if goal["met"] is None else "met" if goal["met"] else "MISSED"
    return f"{goal['backend']}: {goal['goal']}: {state}: {goal['text']}"


# --- time to accuracy (`jaxmlp tta`) --------------------------------------------------------------------------


def tta_table(tta: pd.DataFrame) -> pd.DataFrame:
    """Per file, pipeline and precision: how many runs reached the target, the median time to it (start to
    target, data preparation and compile included) with its min and max, and the median of each part (data,
    compile, training, evaluation) and of the epochs it took, over the runs that reached it."""
    columns = ["file", "target", "pipeline", "precision", "runs", "reached", "tta_s", "tta_min_s", "tta_max_s",
               "data_s", "compile_s", "train_s", "eval_s", "epochs", "best_accuracy"]  # fmt: skip
    if tta.empty:
        return pd.DataFrame(columns=columns)
    rows = []
    for (file, pipeline, precision), runs in tta.groupby(["file", "pipeline", "precision"], sort=False):
        ok = runs[runs["reached"].astype(bool)]
        part = ok if len(ok) else runs
        rows.append({"file": file, "target": float(runs["target"].iloc[0]), "pipeline": pipeline,
                     "precision": precision, "runs": len(runs), "reached": len(ok),
                     "tta_s": ok["seconds"].median() if len(ok) else float("nan"),
                     "tta_min_s": ok["seconds"].min() if len(ok) else float("nan"),
                     "tta_max_s": ok["seconds"].max() if len(ok) else float("nan"),
                     "data_s": part["data_seconds"].median(), "compile_s": part["compile_seconds"].median(),
                     "train_s": part["train_seconds"].median(), "eval_s": part["eval_seconds"].median(),
                     "epochs": part["epochs"].median(), "best_accuracy": runs["best_accuracy"].max()})  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


def tta_line(row: Any) -> str:
    """``scan f32: 97% in 4.1 s median (3.9-4.4 s), 5 of 5 runs (data 0.2 s, compile 1.1 s, 3 epochs)`` or that
    it was never reached."""
    head = f"{row.pipeline} {row.precision}: "
    if not row.reached:
        return (head + f"never reached {percent(row.target)} in {row.runs} run(s) (best test accuracy "
                f"{percent(row.best_accuracy)} after {row.epochs:g} epochs)")  # fmt: skip
    return (head + f"{percent(row.target)} in {duration(row.tta_s)} median ({duration(row.tta_min_s)} to "
            f"{duration(row.tta_max_s)}), {row.reached} of {row.runs} runs reached it (data {duration(row.data_s)}, "
            f"compile {duration(row.compile_s)}, training {duration(row.train_s)}, evaluation "
            f"{duration(row.eval_s)}; {row.epochs:g} epochs)")  # fmt: skip


def ladder_headlines(ladder: pd.DataFrame) -> list[dict[str, Any]]:
    """Per backend: the fastest pipeline and the tutorial's seed pipeline, against the floor; the floors' rows
    (``floor``: XLA's; ``best_floor``: the best library's, None in runs that did not measure it) and that library."""
    out = []
    for backend, rungs in ladder.groupby("backend"):
        pipelines = rungs[rungs["rung"].str.startswith(PIPELINE_RUNG)]
        if len(pipelines):
            seed = pipelines[pipelines["rung"] == rung_name("seed")]
            floor, best = (rungs[rungs["rung"] == rung] for rung in FLOORS)
            out.append({"backend": backend, "fastest": pipelines.iloc[0], "seed": seed.iloc[0] if len(seed) else None,
                        "floor": floor.iloc[0] if len(floor) else None,
                        "best_floor": best.iloc[0] if len(best) else None,
                        "best_library": best["library"].iloc[0] if len(best) else None})  # fmt: skip
    return out


ENVIRONMENT = ("host", "cpu_model", "jax", "jaxlib", "torch", "python", "xla_flags")


def _joined(run: pd.DataFrame, column: str) -> str:
    return ", ".join(sorted(str(x) for x in run.get(column, pd.Series(dtype=object)).dropna().unique()))


def environment(run: pd.DataFrame) -> dict[str, Any]:
    """What one run (one file's rows) was measured on and with."""
    first = run.iloc[0]
    env = {key: first.get(key) for key in ENVIRONMENT}
    env.update(timestamp=first.get("timestamp"), commit=str(first.get("commit"))[:12], backends=_joined(run, "backend"),
               devices=_joined(run, "device_kind"), dataset=_joined(run, "dataset"), size=first.get("size"),
               file=Path(str(first.get("file"))).name)  # fmt: skip
    return env


def benchmark_runs(runs: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Benchmark rows (not training epochs) by file, newest first."""
    if "test" not in runs:
        return {}
    bench = runs[runs["test"] != registry.TRAIN_EPOCH.id]
    by_file = {str(name): rows for name, rows in bench.groupby("file")}
    return dict(sorted(by_file.items(), key=lambda item: str(item[1]["timestamp"].iloc[0]), reverse=True))


ACCELERATOR_DIFFER = ("file", "host", "jax", "jaxlib", "torch", "python")
SIDE_BY_SIDE = (registry.UPDATE, registry.PREDICT, registry.MATMUL, registry.GEMM)
"""The benchmarks besides the epoch ladder that run on a backend, set side by side per backend."""


def newest_by_backend(runs_by_file: Mapping[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """The newest run (``runs_by_file`` is newest first) of each backend that has an epoch ladder."""
    newest: dict[str, pd.DataFrame] = {}
    for rows in runs_by_file.values():
        for backend, part in rows.groupby("backend") if "backend" in rows else ():
            if not pipeline_ladder(part).empty:
                newest.setdefault(str(backend), part)
    return newest


def benchmark_medians(run: pd.DataFrame) -> pd.Series:
    """One backend's run as medians (s) by benchmark: the epoch ladder's rungs (floors, the step's matmuls, each
    pipeline), then every `SIDE_BY_SIDE` benchmark by its parameters (``update: batch_size 128, variant jit``)."""
    medians = pipeline_ladder(run).set_index("rung")["epoch_s"].to_dict()
    for bench in SIDE_BY_SIDE:
        shown = [p for p in bench.params if p != "backend"]
        for r in query(run, bench).itertuples():
            label = ", ".join(f"{p} {getattr(r, p)}" for p in shown if hasattr(r, p))
            medians[f"{bench.id.removeprefix('test_')}{': ' if label else ''}{label}"] = r.median
    return pd.Series(medians, dtype=float)


def cpu_vs_accelerator(
    runs_by_file: Mapping[str, pd.DataFrame], accelerator: str
) -> tuple[pd.DataFrame, dict[str, tuple[Any, Any]] | None]:
    """The newest CPU run and the newest ``accelerator`` run (`registry.ACCELERATORS`) side by side: per benchmark
    the CPU's median, the accelerator's and CPU / accelerator; and what differs between the two runs (None: not
    both)."""
    newest = newest_by_backend(runs_by_file)
    if not {"cpu", accelerator} <= set(newest):
        return pd.DataFrame(), None
    table = pd.DataFrame({"cpu_s": benchmark_medians(newest["cpu"]),
                          "accelerator_s": benchmark_medians(newest[accelerator])})  # fmt: skip
    table["cpu_over_accelerator"] = table["cpu_s"] / table["accelerator_s"]
    cpu, other = environment(newest["cpu"]), environment(newest[accelerator])
    differ = {key: (cpu[key], other[key]) for key in ACCELERATOR_DIFFER if cpu[key] != other[key]}
    return table.rename_axis("benchmark").reset_index(), differ


def accelerator_floor(run: pd.DataFrame) -> pd.DataFrame:
    """One backend's floor per precision from its own run: the best library's 2048^3 rate at each precision
    (`registry.GEMM_PRECISIONS`, `gemm_rates`), the epoch's FLOPs at that rate, and the fastest pipeline of that
    precision against it (an epoch row without a precision is f32's; a precision with no epoch row: its floor
    alone). The accelerator's goal reads the same rows."""
    epochs = query(run, registry.EPOCH).dropna(subset=["median"])
    rates = gemm_rates(run)
    if epochs.empty or rates.empty or "flops" not in epochs:
        return pd.DataFrame()
    precisions = epochs["precision"].fillna("f32") if "precision" in epochs else pd.Series("f32", index=epochs.index)
    rows = []
    for precision in registry.GEMM_PRECISIONS:
        if (best := _gemm_square(rates, precision)) is None:
            continue
        library, gflop_per_s = best
        same = epochs[precisions == precision].sort_values("median")
        # the epoch's FLOPs as XLA counts them in this precision (bf16's counts its casts: 0.4% more), else f32's
        flops = float((same if len(same) else epochs)["flops"].median())
        floor = flops / (gflop_per_s * 1e9)
        row: dict[str, Any] = {"precision": precision, "library": library, "gflop_per_s": gflop_per_s,
                               "floor_s": floor}  # fmt: skip
        if len(same):
            fastest = same.iloc[0]
            row.update(pipeline=rung_name(str(fastest["pipeline"]), int(fastest.get("workers") or 0)),
                       epoch_s=float(fastest["median"]), x_floor=float(fastest["median"]) / floor)  # fmt: skip
        rows.append(row)
    return pd.DataFrame(rows)


def is_scaling(run: pd.DataFrame) -> bool:
    """Whether one file's rows are a `jaxmlp scaling` run."""
    return bool(len(run)) and bool(run["test"].isin([b.id for b in registry.SCALING]).all())


@shows(registry.SCALING_EPOCH, registry.SCALING_STEP)
def scaling_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per backend, device count N and process count P: the sharded epoch and step (median, IQR), the epoch's
    compile time, the speed-up over N = 1, P = 1 of the same run and the efficiency (speed-up / N), the all-reduce's
    share of a traced epoch's operations (N > 1), and the params' largest relative difference from the one-device
    scan epoch."""
    epochs, steps = query(df, registry.SCALING_EPOCH), query(df, registry.SCALING_STEP)
    if epochs.empty:
        return pd.DataFrame()
    keys = ["backend", "devices", "processes"]
    epochs, steps = (rows.assign(processes=_one_process(rows)) for rows in (epochs, steps))
    e = epochs.set_index(keys).sort_index()
    out = pd.DataFrame({"epoch_s": e["median"], "epoch_iqr_s": e["iqr"], "compile_s": e["compile_seconds"]})
    if len(steps):
        st = steps.set_index(keys)
        out = out.join(pd.DataFrame({"step_ms": st["median"] * 1e3, "step_iqr_ms": st["iqr"] * 1e3}))
    share = e["all_reduce_share"] if "all_reduce_share" in e else pd.Series(float("nan"), index=e.index)
    out["all_reduce_share"] = pd.to_numeric(share, errors="coerce")
    out["max_rel_diff"] = e["max_relative_difference"]
    out = out.reset_index()
    base = out[(out["devices"] == 1) & (out["processes"] == 1)].set_index("backend")["epoch_s"].to_dict()
    if base:
        at = list(out.columns).index("compile_s") + 1
        out.insert(at, "speedup", out["backend"].map(base) / out["epoch_s"])
        out.insert(at + 1, "efficiency", out["speedup"] / out["devices"].astype(float))
    if out["all_reduce_share"].isna().all():
        out = out.drop(columns="all_reduce_share")
    return out


def _one_process(rows: pd.DataFrame) -> pd.Series:
    """The rows' process counts as integers, 1 where a row does not say (one process)."""
    if "processes" not in rows:
        return pd.Series(1, index=rows.index, dtype="int64")
    return rows["processes"].fillna(1).astype("int64")


# --- training runs --------------------------------------------------------------------------------------------


@shows(registry.TRAIN_EPOCH)
def training_table(runs: pd.DataFrame) -> pd.DataFrame:
    """A row per `jaxmlp train --json` file: its steady epoch (epochs after the first), compile and accuracies."""
    train = query(runs, registry.TRAIN_EPOCH)
    rows = []
    for file, epochs in train.groupby("file") if len(train) else ():
        epochs = epochs.sort_values("epoch")
        last = epochs.iloc[-1]
        steady = epochs["epoch_seconds"].iloc[1:] if len(epochs) > 1 else epochs["epoch_seconds"]
        rows.append({"file": Path(str(file)).name, "dataset": last.get("dataset"), "pipeline": last.get("pipeline"),
                     "backend": last.get("backend"), "epochs": len(epochs), "epoch_s_median": float(steady.median()),
                     "compile_s": float(epochs["compile_seconds"].sum()), "train_accuracy": last.get("train_accuracy"),
                     "test_accuracy": last.get("test_accuracy"), "jax": last.get("jax"),
                     "host": last.get("host"), "precision": _precision(last.get("precision")),
                     "timestamp": last.get("timestamp")})  # fmt: skip
    return pd.DataFrame(rows)


def tutorial_accuracy(runs: pd.DataFrame, pipeline: str = "scan") -> dict[str, float]:
    """Per precision, the test accuracy of the newest complete 8-epoch (the tutorial's) training run of
    ``pipeline`` on MNIST: what the bf16 goal's "accuracy kept" reads."""
    table = training_table(runs)
    if table.empty:
        return {}
    done = table[(table["pipeline"] == pipeline) & (table["epochs"] == 8) & (table["dataset"] == "mnist")]
    done = done.sort_values("timestamp", na_position="first")
    return {str(p): float(rows["test_accuracy"].iloc[-1]) for p, rows in done.groupby("precision")}


# --- two sets of samples --------------------------------------------------------------------------------------


def compare_samples(baseline: Mapping[str, list[float]], new: Mapping[str, list[float]], threshold: float = THRESHOLD,
                    alpha: float = ALPHA) -> pd.DataFrame:  # fmt: skip
    """`jaxmlp.stats.compare` for every benchmark present on both sides, a row each."""
    rows = []
    for name in sorted(set(baseline) & set(new)):
        comparison = compare(baseline[name], new[name], threshold, alpha)
        rows.append({"benchmark": name, **comparison._asdict(), "verdict": comparison.describe(),
                     "valid": comparison.verdict != INVALID})  # fmt: skip
    return pd.DataFrame(rows)


def memory_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Each benchmark's median time beside its peak memory (host resident set, and the device's peak where the
    backend keeps one): empty for runs written before benchmarks recorded memory."""
    if "peak_rss_bytes" not in runs or runs["peak_rss_bytes"].isna().all():
        return pd.DataFrame()
    rows = runs[runs["peak_rss_bytes"].notna()]
    out = pd.DataFrame(
        {"benchmark": rows["name"], "median_s": rows["median"], "peak_rss_bytes": rows["peak_rss_bytes"]}
    )
    if "device_peak_bytes" in rows and rows["device_peak_bytes"].notna().any():
        out["device_peak_bytes"] = rows["device_peak_bytes"]
    return out.sort_values("peak_rss_bytes", ascending=False).reset_index(drop=True)


def compare_memory(baseline: Mapping[str, float], new: Mapping[str, float],
                   threshold: float = MEMORY_THRESHOLD) -> pd.DataFrame:  # fmt: skip
    """Peak memory, benchmark by benchmark on both sides: the ratio new / baseline, flagged ``memory regression``
    beyond 1 + ``threshold`` (``memory improvement`` below 1 / (1 + threshold)), else ``no change``."""
    rows = []
    for name in sorted(set(baseline) & set(new)):
        a, b = float(baseline[name]), float(new[name])
        r = b / a if a > 0 else float("nan")
        verdict = ("memory regression" if r > 1 + threshold else
                   "memory improvement" if r < 1 / (1 + threshold) else "no change")  # fmt: skip
        rows.append({"benchmark": name, "baseline_bytes": a, "new_bytes": b, "ratio": r, "verdict": verdict})
    return pd.DataFrame(rows, columns=["benchmark", "baseline_bytes", "new_bytes", "ratio", "verdict"])


def verdict_counts(table: pd.DataFrame) -> dict[str, int]:
    counts = {verdict: int((table["verdict"] == verdict).sum())
              for verdict in ("regression", "improvement", "insufficient data")}  # fmt: skip
    return {**counts, INVALID: int((~table["valid"]).sum()) if "valid" in table else 0}


# --- profiler captures ----------------------------------------------------------------------------------------


def step_stats(steps: pd.DataFrame) -> pd.DataFrame:
    """Mean, median, min and max of each column of a capture's step breakdown (ms)."""
    return steps.drop(columns="step").agg(["mean", "median", "min", "max"]).reset_index(names="stat")


@shows(registry.BANDWIDTH)
def bandwidth_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per backend and STREAM kernel: the memory bandwidth (bytes it must move over the median time of one call)."""
    d = query(df, registry.BANDWIDTH)
    if d.empty:
        return pd.DataFrame(columns=["backend", "kernel", "array_mib", "call_ms", "gb_per_s"])
    return pd.DataFrame({"backend": d["backend"], "kernel": d["kernel"], "array_mib": d["elements"] * 4 / 2**20,
                         "call_ms": d["median"] * 1e3,
                         "gb_per_s": d["bytes"] / d["median"] / 1e9}).reset_index(drop=True)  # fmt: skip


@shows(registry.BF16_STEP)
def bf16_step_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per backend and form of the bf16 step: the scan epoch's median time, and whether it is the form that backend
    trains with."""
    d = query(df, registry.BF16_STEP)
    if d.empty:
        return pd.DataFrame(columns=["backend", "bf16_step", "epoch_ms", "trains_with"])
    return pd.DataFrame({"backend": d["backend"], "bf16_step": d["variant"], "epoch_ms": d["median"] * 1e3,
                         "trains_with": d["chosen"].map({True: "yes", False: ""})}).reset_index(drop=True)  # fmt: skip
