"""One run's tables besides the floor and the ladders: jit, vmap, memory, environment, samples compared."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from jaxmlp import registry
from jaxmlp.registry import ALPHA, MEMORY_THRESHOLD, THRESHOLD, Benchmark
from jaxmlp.results.schema.bench import own_peaks
from jaxmlp.results.schema.machines import machine
from jaxmlp.results.store.frames import query
from jaxmlp.results.tables.base import shows
from jaxmlp.stats import INVALID, VERDICT_WORDS, beyond_reach, compare, processes_to_settle, settle_words
from jaxmlp.units import MISSING


def _by_variant(df: pd.DataFrame, benchmark: Benchmark, value: str = "median") -> pd.DataFrame | None:
    """``value`` of each of ``benchmark``'s variants per backend and batch size; None without rows."""
    d = query(df, benchmark)
    if d.empty:
        return None
    t = d.pivot_table(index=["backend", "batch_size"], columns="variant", values=value, aggfunc="median")
    return t.reindex(columns=list(benchmark.variants))  # a file without one variant shows it empty


def _variant_table(
    df: pd.DataFrame, benchmark: Benchmark, stems: Mapping[str, str], speedups: Mapping[str, tuple[str, str]]
) -> pd.DataFrame:
    """A row per backend and batch size: each variant's median and IQR in ms (``stems``: variant -> its columns'
    stem, in their order), then each of ``speedups`` (column -> the slower variant and the faster)."""
    t, iqr = _by_variant(df, benchmark), _by_variant(df, benchmark, "iqr")
    if t is None or iqr is None:
        return pd.DataFrame()
    columns: dict[str, Any] = {}
    for variant, stem in stems.items():
        columns |= {f"{stem}_ms": t[variant] * 1e3, f"{stem}_iqr_ms": iqr[variant] * 1e3}
    columns |= {column: t[slow] / t[fast] for column, (slow, fast) in speedups.items()}
    return pd.DataFrame(columns).reset_index()


@shows(registry.UPDATE)
def jit_vs_eager(df: pd.DataFrame) -> pd.DataFrame:
    """Median step time per variant and batch size, with eager/jit and dispatch/jit ratios."""
    jit, dispatch, eager = registry.UPDATE.variants
    stems = {jit: "jit", dispatch: "dispatch", eager: "eager"}
    return _variant_table(df, registry.UPDATE, stems, {"jit_speedup": (eager, jit)})


@shows(registry.PREDICT)
def vmap_vs_loop(df: pd.DataFrame) -> pd.DataFrame:
    """Median predict time per variant and batch size, with loop/vmap and loop/jit(vmap) ratios."""
    vmap, loop, jit_vmap = registry.PREDICT.variants
    stems = {loop: "loop", vmap: "vmap", jit_vmap: "jit_vmap"}
    return _variant_table(
        df, registry.PREDICT, stems, {"vmap_speedup": (loop, vmap), "jit_vmap_speedup": (loop, jit_vmap)}
    )


SHOWN_METADATA = (registry.HOST, registry.CPU_MODEL, "jax", "jaxlib", "torch", "python", "xla_flags")


def _joined(run: pd.DataFrame, column: str) -> str:
    return ", ".join(sorted(str(x) for x in run.get(column, pd.Series(dtype=object)).dropna().unique()))


def _known(value: Any) -> bool:
    return value is not None and not (pd.api.types.is_scalar(value) and bool(pd.isna(value)))


def shown_metadata(run: pd.DataFrame) -> dict[str, Any]:
    """What one run was measured on and with; what its file does not say is `units.MISSING`."""
    first = run.iloc[0]
    said = {key: first.get(key) for key in (*SHOWN_METADATA, "timestamp", "commit", "size")}
    env = {key: value if _known(value) else MISSING for key, value in said.items()}
    env.update(
        xla_flags=env["xla_flags"] if _known(said["xla_flags"]) else "",
        commit=str(env["commit"])[:12],
        backends=_joined(run, "backend"),
        devices=_joined(run, "device_kind"),
        dataset=_joined(run, "dataset"),
        file=Path(str(first.get("file"))).name,
        machine=machine(first),
    )
    return env


def benchmark_runs(runs: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Benchmark rows (not training epochs) by file, newest first."""
    if "test" not in runs:
        return {}
    bench = runs[runs["test"] != registry.TRAIN_EPOCH.id]
    by_file = {str(name): rows for name, rows in bench.groupby("file")}
    return dict(sorted(by_file.items(), key=lambda item: str(item[1]["timestamp"].iloc[0]), reverse=True))


# --- two sets of samples --------------------------------------------------------------------------------------


def compare_samples(
    baseline: Mapping[str, list[float]],
    new: Mapping[str, list[float]],
    threshold: float = THRESHOLD,
    alpha: float = ALPHA,
) -> pd.DataFrame:
    """`jaxmlp.stats.compare` for every benchmark on both sides, a row each: its verdict, ``valid`` (False where a
    sample is NaN or infinite) and ``settle`` (the processes a side that would settle an inconclusive one; None beyond
    reach)."""
    rows = []
    for name in sorted(set(baseline) & set(new)):
        comparison = compare(baseline[name], new[name], threshold, alpha)
        rows.append(
            {
                "benchmark": name,
                **comparison._asdict(),
                "verdict": comparison.word,
                "valid": comparison.verdict != INVALID,
                "settle": processes_to_settle(comparison, threshold),
                "beyond_reach": beyond_reach(comparison, threshold),
                "settle_words": settle_words(comparison, threshold, "rounds"),
            }
        )
    return pd.DataFrame(rows)


def peaks_are_own(runs: pd.DataFrame) -> bool:
    """Whether every benchmark's recorded peak resident set is its own; False where any is not or none says."""
    if "peak_rss_bytes" not in runs or "peak_rss_scope" not in runs:
        return False
    return own_peaks(runs.loc[runs["peak_rss_bytes"].notna(), "peak_rss_scope"])


def memory_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Each benchmark's median time beside its peak memory, largest first where each peak is its own."""
    if "peak_rss_bytes" not in runs or runs["peak_rss_bytes"].isna().all():
        return pd.DataFrame()
    rows = runs[runs["peak_rss_bytes"].notna()]
    out = pd.DataFrame(
        {"benchmark": rows["name"], "median_s": rows["median"], "peak_rss_bytes": rows["peak_rss_bytes"]}
    )
    if "device_peak_bytes" in rows and rows["device_peak_bytes"].notna().any():
        out["device_peak_bytes"] = rows["device_peak_bytes"]
    if peaks_are_own(runs):
        out = out.sort_values("peak_rss_bytes", ascending=False, kind="stable")
    return out.reset_index(drop=True)


@shows(registry.RESULTS_FOLDER)
def results_folder_table(runs: pd.DataFrame) -> pd.DataFrame:
    """`jaxmlp summary` and `jaxmlp report` over the generated folder: times, peak memory, the store's goals."""
    rows = query(runs, registry.RESULTS_FOLDER)
    if rows.empty:
        return pd.DataFrame()
    out = []
    for row in rows.itertuples():
        warm, warm_peak = float(row.median), float(getattr(row, "command_peak_rss_bytes", math.nan))  # type: ignore[arg-type]
        cold, cold_peak = (float(getattr(row, key, math.nan)) for key in ("cold_seconds", "cold_peak_rss_bytes"))
        held = all(float(getattr(row, f"folder_{k}", math.nan)) >= n for k, n in registry.STORE_FOLDER.items())
        limit = registry.STORE_WARM_SECONDS.get(str(row.variant), math.nan)
        out.append(
            {
                "command": f"jaxmlp {row.variant}",
                "folder_runs": getattr(row, "folder_runs", None),
                "median_s": warm,
                "command_peak_bytes": warm_peak,
                "warm_goal": store_goal(warm, warm_peak, limit) if held else "",
                "cold_s": cold,
                "cold_peak_bytes": cold_peak,
                "cold_goal": store_goal(cold, cold_peak, registry.STORE_COLD_SECONDS) if held else "",
            }
        )
    return pd.DataFrame(out)


def store_goal(seconds: float, peak: float, limit: float) -> str:
    """``met: at most 20 s and 1 GiB`` (or ``MISSED: ...``): a command's time against ``limit`` and its peak against
    `registry.STORE_MEMORY`; empty where either was not measured."""
    if not all(math.isfinite(x) for x in (seconds, peak, limit)):
        return ""
    met = seconds <= limit and peak <= registry.STORE_MEMORY
    return f"{'met' if met else 'MISSED'}: at most {limit:.0f} s and {registry.STORE_MEMORY / 2**30:.0f} GiB"


RUN_PEAK = "the run's largest peak (not reset before each benchmark)"
"""The one peak `jaxmlp compare` compares where a side's peaks are each its process's so far, none a benchmark's own."""


def compare_memory(
    baseline: Mapping[str, float], new: Mapping[str, float], threshold: float = MEMORY_THRESHOLD
) -> pd.DataFrame:
    """Peak memory, benchmark by benchmark on both sides: the ratio new / baseline, flagged ``memory regression``
    beyond 1 + ``threshold`` (``memory improvement`` below 1 / (1 + threshold)), else ``no change``."""
    rows = []
    for name in sorted(set(baseline) & set(new)):
        a, b = float(baseline[name]), float(new[name])
        r = b / a if a > 0 else float("nan")
        verdict = (
            "memory regression"
            if r > 1 + threshold
            else "memory improvement"
            if r < 1 / (1 + threshold)
            else "no change"
        )
        rows.append({"benchmark": name, "baseline_bytes": a, "new_bytes": b, "ratio": r, "verdict": verdict})
    return pd.DataFrame(rows, columns=["benchmark", "baseline_bytes", "new_bytes", "ratio", "verdict"])


def verdict_counts(table: pd.DataFrame) -> dict[str, int]:
    """A `compare_samples` table's count of each verdict word, of invalid samples and of those too few to test."""
    counts = {verdict: int((table["verdict"] == verdict).sum()) for verdict in VERDICT_WORDS}
    valid = table["valid"] if "valid" in table else pd.Series(True, index=table.index)
    untested = int((valid & table["p_slower"].isna()).sum()) if "p_slower" in table else 0
    return {**counts, INVALID: int((~valid).sum()), "too few": untested}


# --- profiler captures ----------------------------------------------------------------------------------------


def step_stats(steps: pd.DataFrame) -> pd.DataFrame:
    """Mean, median, min and max of each column of a capture's step breakdown (ms)."""
    return steps.drop(columns="step").agg(["mean", "median", "min", "max"]).reset_index(names="stat")


# --- an accelerator's own ceilings and forms ---------------------------------------------------------------------


@shows(registry.BANDWIDTH)
def bandwidth_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per backend and STREAM kernel: the memory bandwidth (bytes it must move over the median time of one call)."""
    d = query(df, registry.BANDWIDTH)
    if d.empty:
        return pd.DataFrame(columns=["backend", "kernel", "array_mib", "call_ms", "gb_per_s"])
    return pd.DataFrame(
        {
            "backend": d["backend"],
            "kernel": d["kernel"],
            "array_mib": d["elements"] * 4 / 2**20,
            "call_ms": d["median"] * 1e3,
            "gb_per_s": d["bytes"] / d["median"] / 1e9,
        }
    ).reset_index(drop=True)


@shows(registry.BF16_STEP)
def bf16_step_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per backend and bf16 step form: the scan epoch's median, over the faster form's, and the form used."""
    d = query(df, registry.BF16_STEP)
    if d.empty:
        return pd.DataFrame(columns=["backend", "bf16_step", "epoch_ms", "x_faster", "trains_with"])
    return pd.DataFrame(
        {
            "backend": d["backend"],
            "bf16_step": d["variant"],
            "epoch_ms": d["median"] * 1e3,
            "x_faster": d["median"] / d.groupby("backend")["median"].transform("min"),
            "trains_with": d["chosen"].map({True: "yes", False: ""}),
        }
    ).reset_index(drop=True)
