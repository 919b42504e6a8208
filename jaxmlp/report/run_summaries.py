"""The summaries of a benchmark or scaling run, of training runs and of a time-to-accuracy file."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from jaxmlp import registry
from jaxmlp.report.summary_base import Summary
from jaxmlp.results import tables
from jaxmlp.results.findings import run_findings
from jaxmlp.results.schema.machines import machine
from jaxmlp.results.schema.tta import TtaDocument
from jaxmlp.results.store.frames import tta_rows
from jaxmlp.units import count, duration, percent


def bench_summary(df: pd.DataFrame, title: str = "") -> Summary:
    """A benchmark (or scaling) run's findings, what it ran on, then the findings' tables, the long ones apart."""
    found = [f for f in run_findings(df) if f.answered]
    lines = [f"{f.asked}: {f.answer}" for f in found]
    if not df.empty:
        first = df.iloc[0]
        datasets = ", ".join(sorted(str(x) for x in df["dataset"].dropna().unique())) if "dataset" in df else ""
        if "size" in df and df["size"].isin(["smoke"]).any():
            lines.insert(
                0,
                "size smoke: every step ran once to check it works; its times are too short to answer "
                "how fast (a report leaves it out of its answers)",
            )
        lines.append(
            f"measured with jax {first.jax}, jaxlib {first.jaxlib}, torch {first.torch}, python {first.python}; "
            f"{machine(first)}; commit {str(first.commit)[:12]}; "
            + (f"size {first['size']}; " if pd.notna(first.get("size")) else "")
            + f"data: {registry.dataset_label(datasets or '?')}"
        )
    shown = tuple((t.caption, t.frame) for f in found for t in f.tables if not t.long and not t.frame.empty)
    long = tuple((t.caption, t.frame) for f in found for t in f.tables if t.long and not t.frame.empty)
    return Summary(title, tuple(lines), shown, (), long)


TTA_HEADERS = (
    "pipeline",
    "precision",
    "reached",
    "time to target (median)",
    "min",
    "max",
    "data",
    "compile",
    "training",
    "evaluation",
    "epochs",
    "best accuracy",
)


def tta_summary(doc: TtaDocument, title: str = "Time to accuracy") -> Summary:
    """A `jaxmlp tta` file: per pipeline and precision, how many runs reached the target and how fast."""
    table = tables.tta_table(tta_rows(doc))
    rows = [
        (
            r.pipeline,
            r.precision,
            f"{r.reached} of {r.runs}",
            duration(r.tta_s),
            duration(r.tta_min_s),
            duration(r.tta_max_s),
            duration(r.data_s),
            duration(r.compile_s),
            duration(r.train_s),
            duration(r.eval_s),
            f"{r.epochs:g}",
            percent(r.best_accuracy),
        )
        for r in table.itertuples()
    ]
    meta, settings = doc.metadata, doc.settings
    every = f"every {settings['eval_every']} steps" if settings.get("eval_every") else "after every epoch"
    runs = f", {count(settings['runs'], 'run')} each (seeds)" if settings.get("runs") is not None else ""
    line = "; ".join(
        part
        for part in (
            f"target {percent(settings.get('target'))} test accuracy{runs}, evaluated {every}",
            registry.dataset_label(settings["dataset"]) if settings.get("dataset") else "",
            _measured_on(meta),
            f"commit {str(meta['commit'])[:12]}" if meta.get("commit") else "",
        )
        if part
    )
    closing = tuple(tables.tta_line(r) for r in table.itertuples())
    return Summary(
        title,
        (line,),
        (("Time to accuracy, per pipeline and precision", pd.DataFrame(rows, columns=list(TTA_HEADERS))),),
        closing,
    )


def _measured_on(meta: Mapping[str, Any]) -> str:
    """``jax 0.10.2, torch 2.14.1, Intel Xeon, 2 cores``: what of it the metadata holds."""
    parts = [f"{name} {meta[name]}" for name in ("jax", "torch") if meta.get(name) is not None]
    return ", ".join([*parts, machine(meta)])


TRAIN_HEADERS = (
    "file",
    "data",
    "pipeline",
    "backend",
    "epochs",
    "epoch (median after the first)",
    "compile",
    "train accuracy",
    "test accuracy",
    "jax",
)


def train_summary(runs: pd.DataFrame, title: str = "Training") -> Summary:
    """A row per `jaxmlp train --json` file: its steady epoch, its compile time, its accuracies."""
    table = tables.training_table(runs)
    rows = [
        (
            r.file,
            r.dataset,
            r.pipeline,
            r.backend,
            str(r.epochs) + (f" (partial: {r.partial})" if isinstance(getattr(r, "partial", None), str) else ""),
            duration(r.epoch_s_median),
            duration(r.compile_s),
            percent(r.train_accuracy),
            percent(r.test_accuracy),
            r.jax,
        )
        for r in table.itertuples()
    ]
    return Summary(title, (), (("One row per training run", pd.DataFrame(rows, columns=list(TRAIN_HEADERS))),))
