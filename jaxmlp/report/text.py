"""The terminal's words: a benchmark run's summary, and `jaxmlp compare`'s table."""

from __future__ import annotations

import pandas as pd

from jaxmlp import registry
from jaxmlp.report.display import readable
from jaxmlp.report.sections import LOADER_CAPTION, SCALING_CAPTION
from jaxmlp.results import tables
from jaxmlp.stats import INVALID
from jaxmlp.units import duration, ratio


def text_summary(df: pd.DataFrame) -> str:
    """A benchmark run's summary as short plain text, for a terminal."""
    parts = []
    if not df.empty:
        first = df.iloc[0]
        datasets = ", ".join(sorted(str(x) for x in df["dataset"].dropna().unique())) if "dataset" in df else "?"
        parts.append(
            f"jax {first.jax}, jaxlib {first.jaxlib}, torch {first.torch}, python {first.python}; "
            f"{first.cpu_model}, {first.cpu_affinity} cores; commit {str(first.commit)[:12]}; "
            + (f"size {first['size']}; " if pd.notna(first.get("size")) else "")
            + f"data: {registry.dataset_label(datasets)}"
        )
    ladder = tables.pipeline_ladder(df)
    for title, table in (
        ("Update step: jit against eager (median and IQR)", tables.jit_vs_eager(df)),
        ("Prediction: vmap against a Python loop (median and IQR)", tables.vmap_vs_loop(df)),
        (LOADER_CAPTION, tables.loader_ladder(df)),
        ("The floor's matmul (2048³ of float32 arrays)", tables.matmul_rate(df)),
        ("Epoch ladder: each pipeline's epoch against the compute floor (median and IQR)", ladder),
        (SCALING_CAPTION, tables.scaling_table(df)),
    ):
        if not table.empty:
            parts.append(f"{title}\n{readable(table).to_string(index=False)}")
    best = tables.best_workers(df)
    if best:
        parts.append("Fastest worker count for input alone: " + ", ".join(f"{p} {w}" for p, w in best.items()))
    for line in tables.ladder_headlines(ladder):
        fastest, seed = line["fastest"], line["seed"]
        text = f"{line['backend']}: fastest {fastest.rung} at {ratio(fastest.x_floor)} the floor "
        text += f"({duration(fastest.epoch_s)} an epoch)"
        if seed is not None:
            text += f"; the tutorial's seed pipeline at {ratio(seed.x_floor)} ({duration(seed.epoch_s)})"
        parts.append(text)
    return "\n\n".join(parts)


def compare_text(table: pd.DataFrame, threshold: float, alpha: float) -> str:
    """`jaxmlp compare`'s output: a row per benchmark, then the counts."""
    shown = table.assign(
        n=table["n_baseline"].astype(str) + "/" + table["n_new"].astype(str),
        ci=[f"{lo:.3f}-{hi:.3f}" if lo == lo else "-" for lo, hi in zip(table["ci_low"], table["ci_high"])],
    )[["benchmark", "n", "baseline_median", "new_median", "ratio", "ci", "p_slower", "p_faster", "verdict"]]
    counts = tables.verdict_counts(table)
    return (
        shown.to_string(index=False, float_format=lambda x: f"{x:.4g}", na_rep="-")
        + f"\n\n{counts['regression']} regression(s), {counts['improvement']} improvement(s), "
        f"{counts['insufficient data']} with insufficient data, "
        + (
            f"{counts[INVALID]} with invalid samples (NaN or inf: fix the timing before trusting any verdict), "
            if counts[INVALID]
            else ""
        )
        + f"of {len(table)} benchmarks "
        f"(threshold {threshold:.0%}, alpha {alpha})"
    )
