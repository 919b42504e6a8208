"""Compact views of benchmark results: pure functions from the tidy DataFrame to small tables."""

from __future__ import annotations

import pandas as pd


def _of(df: pd.DataFrame, test: str) -> pd.DataFrame:
    """The rows of one benchmark function, with its integer parameters as integers."""
    if "test" not in df:
        return df.iloc[0:0]
    rows = df[df["test"] == test].dropna(axis="columns", how="all")
    for column in ("batch_size", "workers"):
        if column in rows:
            rows = rows.astype({column: "Int64"})
    return rows


def jit_vs_eager(df: pd.DataFrame) -> pd.DataFrame:
    """Median step time per variant and batch size, with eager/jit and dispatch/jit ratios."""
    d = _of(df, "test_update")
    if d.empty:
        return d
    t = d.pivot_table(index=["backend", "batch_size"], columns="variant", values="median", aggfunc="median")
    out = pd.DataFrame(
        {
            "jit_ms": t["jit"] * 1e3,
            "dispatch_ms": t.get("jit-dispatch") * 1e3,
            "eager_ms": t["eager"] * 1e3,
            "jit_speedup": t["eager"] / t["jit"],
        }
    )
    return out.reset_index()


def vmap_vs_loop(df: pd.DataFrame) -> pd.DataFrame:
    """Median predict time per variant and batch size, with loop/vmap and loop/jit(vmap) ratios."""
    d = _of(df, "test_predict")
    if d.empty:
        return d
    t = d.pivot_table(index=["backend", "batch_size"], columns="variant", values="median", aggfunc="median")
    out = pd.DataFrame(
        {
            "loop_ms": t["loop"] * 1e3,
            "vmap_ms": t["vmap"] * 1e3,
            "jit_vmap_ms": t["jit-vmap"] * 1e3,
            "vmap_speedup": t["loop"] / t["vmap"],
            "jit_vmap_speedup": t["loop"] / t["jit-vmap"],
        }
    )
    return out.reset_index()


def loader_by_workers(df: pd.DataFrame) -> pd.DataFrame:
    """Median epoch of input alone per worker count (and for arrays sliced once)."""
    loader = _of(df, "test_loader")
    arrays = _of(df, "test_arrays")
    rows = [
        {
            "input": f"NumpyLoader, {int(r.workers)} workers",
            "workers": int(r.workers),
            "epoch_s": r.median,
            "first_epoch_s": r.first_epoch_seconds,
        }
        for r in loader.sort_values("workers").itertuples()
    ]
    rows += [
        {"input": "arrays sliced", "workers": None, "epoch_s": r.median, "first_epoch_s": None}
        for r in arrays.itertuples()
    ]
    return pd.DataFrame(rows, columns=["input", "workers", "epoch_s", "first_epoch_s"])


def best_workers(df: pd.DataFrame) -> int | None:
    loader = _of(df, "test_loader")
    return None if loader.empty else int(loader.loc[loader["median"].idxmin(), "workers"])


def pipeline_ladder(df: pd.DataFrame) -> pd.DataFrame:
    """Per backend: the compute floor, the step's matmuls alone, then each pipeline, slowest last."""
    rows = []
    for backend, d in df.groupby("backend"):
        epochs = _of(d, "test_epoch")
        if epochs.empty:
            continue
        floor = float(epochs["floor_seconds"].median())
        rows.append({"backend": backend, "rung": "floor (epoch FLOPs / 2048^3 matmul rate)", "epoch_s": floor})
        for r in _of(d, "test_step_gemms").itertuples():
            rows.append({"backend": backend, "rung": "the step's matmuls alone", "epoch_s": r.median})
        for r in epochs.sort_values("median").itertuples():
            rows.append(
                {
                    "backend": backend,
                    "rung": f"pipeline {r.pipeline}",
                    "epoch_s": r.median,
                    "samples_per_s": r.samples_per_second,
                    "compile_s": r.compile_seconds,
                }
            )
    out = pd.DataFrame(rows, columns=["backend", "rung", "epoch_s", "samples_per_s", "compile_s"])
    if not out.empty:
        floors = out[out["rung"].str.startswith("floor")].set_index("backend")["epoch_s"]
        out.insert(3, "x_floor", out["epoch_s"] / out["backend"].map(floors))
    return out


def text_summary(df: pd.DataFrame) -> str:
    """The whole summary as short plain text, for a terminal."""
    parts = []
    first = df.iloc[0] if not df.empty else None
    if first is not None:
        datasets = ", ".join(sorted(str(x) for x in df["dataset"].dropna().unique())) if "dataset" in df else "?"
        label = " (SYNTHETIC data, not MNIST)" if datasets == "synthetic" else ""
        parts.append(
            f"jax {first.jax}, jaxlib {first.jaxlib}, torch {first.torch}, python {first.python}; "
            f"{first.cpu_model}, {first.cpu_affinity} cores; commit {str(first.commit)[:12]}; "
            f"size {first['size']}; data: {datasets}{label}"
        )
    fmt = {"float_format": lambda x: f"{x:,.3g}", "index": False, "na_rep": "-"}
    for title, table in (
        ("Update step: jit vs eager (median ms)", jit_vs_eager(df)),
        ("Prediction: vmap vs Python loop (median ms)", vmap_vs_loop(df)),
        ("Input alone, one epoch (median s)", loader_by_workers(df)),
        ("Epoch ladder (median s; x_floor = times the compute floor)", pipeline_ladder(df)),
    ):
        if not table.empty:
            parts.append(f"{title}\n{table.to_string(**fmt)}")
    best = best_workers(df)
    if best is not None:
        parts.append(f"Best DataLoader worker count here: {best}")
    ladder = pipeline_ladder(df)
    for backend, rungs in ladder.groupby("backend"):
        pipelines = rungs[rungs["rung"].str.startswith("pipeline")]
        if len(pipelines):
            fastest, seed = pipelines.iloc[0], pipelines[pipelines["rung"] == "pipeline seed"]
            line = (
                f"{backend}: fastest {fastest.rung} at {fastest.x_floor:.2f}x the floor ({fastest.epoch_s:.3g} s/epoch)"
            )
            if len(seed):
                line += f"; the tutorial's seed pipeline at {seed.iloc[0].x_floor:.2f}x ({seed.iloc[0].epoch_s:.3g} s)"
            parts.append(line)
    return "\n\n".join(parts)
