"""The tables of runs that are not a benchmark file's: scaling, training runs, time to accuracy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from jaxmlp import registry
from jaxmlp.measure.train import steady_state_seconds
from jaxmlp.measure.tta import median_stands
from jaxmlp.results.schema.machines import machine
from jaxmlp.results.store.frames import query
from jaxmlp.results.tables.base import precision_of, shows
from jaxmlp.units import count, duration, percent


def is_scaling(run: pd.DataFrame) -> bool:
    """Whether one file's rows are a `jaxmlp scaling` run."""
    return bool(len(run)) and bool(run["test"].isin([b.id for b in registry.SCALING]).all())


@shows(registry.SCALING_EPOCH, registry.SCALING_STEP)
def scaling_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per backend, N and P: the sharded epoch and step, compile time, speed-up and efficiency over N = 1, P = 1, the
    all-reduce's share of a traced epoch, and the params' largest difference from the scan epoch."""
    epochs, steps = query(df, registry.SCALING_EPOCH), query(df, registry.SCALING_STEP)
    if epochs.empty:
        return pd.DataFrame()
    keys = list(registry.SCALING_EPOCH.params)
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
    """A row per `jaxmlp train --json` file: its steady epoch (NaN for one epoch), compile and accuracies."""
    train = query(runs, registry.TRAIN_EPOCH)
    rows = []
    for file, epochs in train.groupby("file") if len(train) else ():
        epochs = epochs.sort_values("epoch")
        last = epochs.iloc[-1]
        rows.append(
            {
                "file": Path(str(file)).name,
                "dataset": last.get("dataset"),
                "pipeline": last.get("pipeline"),
                "precision": precision_of(last.get("precision")),
                "backend": last.get("backend"),
                "epochs": len(epochs),
                "epoch_s_median": steady_state_seconds(epochs["epoch_seconds"].astype(float).tolist()),
                "compile_s": float(epochs["compile_seconds"].sum()),
                "train_accuracy": last.get("train_accuracy"),
                "test_accuracy": last.get("test_accuracy"),
                "jax": last.get("jax"),
                registry.HOST: last.get(registry.HOST),
                registry.CPU_MODEL: last.get(registry.CPU_MODEL),
                "cpu_affinity": last.get("cpu_affinity"),
                "device_kind": last.get("device_kind"),
                "machine": machine(last),
                "timestamp": last.get("timestamp"),
                "partial": partial_of(epochs),
            }
        )
    return pd.DataFrame(rows)


def tutorial_accuracy(runs: pd.DataFrame, pipeline: str = "scan") -> dict[str, float]:
    """Per precision, the test accuracy of the newest full tutorial run of ``pipeline`` on MNIST."""
    table = training_table(runs)
    if table.empty:
        return {}
    done = table[
        (table["pipeline"] == pipeline)
        & (table["epochs"] == 8)
        & (table["dataset"] == "mnist")
        & table["partial"].isna()
    ]
    done = done.sort_values("timestamp", na_position="first")
    return {str(p): float(rows["test_accuracy"].iloc[-1]) for p, rows in done.groupby("precision")}


# --- time to accuracy (`jaxmlp tta`) --------------------------------------------------------------------------


def tta_table(tta: pd.DataFrame) -> pd.DataFrame:
    """Per file, pipeline and precision: the runs that reached the target, the median time to it (NaN where at most half
    reached it) with its min and max, and the median of each part and of the epochs, over the runs that reached it."""
    columns = [
        "file",
        "target",
        "pipeline",
        "precision",
        "runs",
        "reached",
        "tta_s",
        "tta_min_s",
        "tta_max_s",
        "data_s",
        "compile_s",
        "train_s",
        "eval_s",
        "epochs",
        "best_accuracy",
        "partial",
    ]
    if tta.empty:
        return pd.DataFrame(columns=columns)
    rows = []
    for (file, pipeline, precision), runs in tta.groupby(["file", "pipeline", "precision"], sort=False):
        ok = runs[runs["reached"].astype(bool)]
        part = ok if len(ok) else runs
        rows.append(
            {
                "file": file,
                "target": float(runs["target"].iloc[0]),
                "pipeline": pipeline,
                "precision": precision,
                "runs": len(runs),
                "reached": len(ok),
                "tta_s": ok["seconds"].median() if median_stands(len(ok), len(runs)) else float("nan"),
                "tta_min_s": ok["seconds"].min() if len(ok) else float("nan"),
                "tta_max_s": ok["seconds"].max() if len(ok) else float("nan"),
                "data_s": part["data_seconds"].median(),
                "compile_s": part["compile_seconds"].median(),
                "train_s": part["train_seconds"].median(),
                "eval_s": part["eval_seconds"].median(),
                "epochs": part["epochs"].median(),
                "best_accuracy": runs["best_accuracy"].max(),
                "partial": partial_of(runs),
            }
        )
    return pd.DataFrame(rows, columns=columns)


def partial_note(partial: object) -> str:
    """``; a partial run (stopped by SIGINT; kept 2 of 4 runs)`` for a run stopped before its end, else ""."""
    return f"; a partial run ({partial})" if isinstance(partial, str) else ""


def partial_of(rows: pd.DataFrame) -> str | None:
    """Why a file's rows are only some of those asked for (its metadata's ``partial``), else None."""
    said = rows["partial"].dropna() if "partial" in rows else pd.Series(dtype=object)
    return str(said.iloc[0]) if len(said) else None


def tta_line(row: Any) -> str:
    """``scan f32: 97% in 4.1 s median (3.9-4.4 s), 5 of 5 runs (...)``, or that it was never reached."""
    head = f"{row.pipeline} {row.precision}: "
    stopped = partial_note(getattr(row, "partial", None))
    if not row.reached:
        return (
            head + f"never reached {percent(row.target)} in {count(row.runs, 'run')} (best test accuracy "
            f"{percent(row.best_accuracy)} after {count(row.epochs, 'epoch')}){stopped}"
        )
    if pd.isna(row.tta_s):
        return (
            head + f"{percent(row.target)} reached by {row.reached} of {count(row.runs, 'run')}: at most half, so no "
            f"median time to it (those that did: {_range(row.tta_min_s, row.tta_max_s)}){stopped}"
        )
    return (
        head + f"{percent(row.target)} in {duration(row.tta_s)} median ({duration(row.tta_min_s)} to "
        f"{duration(row.tta_max_s)}), {row.reached} of {count(row.runs, 'run')} reached it (data "
        f"{duration(row.data_s)}, compile {duration(row.compile_s)}, training {duration(row.train_s)}, evaluation "
        f"{duration(row.eval_s)}; {count(row.epochs, 'epoch')}){stopped}"
    )


def _range(low: float, high: float) -> str:
    """``3.00 s to 5.00 s``, or one duration where both ends read the same."""
    return duration(low) if duration(low) == duration(high) else f"{duration(low)} to {duration(high)}"
