"""The findings model: for each question jaxmlp answers, the answer, the run(s) it rests on, the machine and the
tables, computed once per results folder (or file). `jaxmlp summary`, the report's overview, its sections and
summary.md only render it. Which run answers: `jaxmlp.results.findings.select`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from jaxmlp.results import history, tables
from jaxmlp.results.findings import bench, checks, releases, runs
from jaxmlp.results.findings.model import Finding, Table
from jaxmlp.results.findings.select import evidence
from jaxmlp.results.store.frames import Results, without_sweeps
from jaxmlp.results.store.index import IndexMemo
from jaxmlp.results.tables.traces import CaptureSummary

__all__ = ["Finding", "Table", "findings", "run_findings"]


def findings(
    results: Results,
    traces: Sequence[CaptureSummary] = (),
    folder: Path | None = None,
    past: history.RunHistory | None = None,
    memo: IndexMemo | None = None,
) -> tuple[Finding, ...]:
    """Every question's finding, in the order the README asks them (a benchmark question from its machine's merged
    evidence, `select.evidence`); paths shown relative to ``folder``; ``past``: `history.of` the same results, where
    the caller has it (the report draws it too), else computed here, once; ``memo``: the folder's index, where what
    is dear to compute again is kept (a sweep's comparisons, a timeline's changes)."""
    past = history.of(results, memo) if past is None else past
    runs_by_file = tables.benchmark_runs(without_sweeps(results.runs))
    merged = evidence(runs_by_file)  # per machine, its newest environment's runs as one
    accuracy = tables.tutorial_accuracy(results.runs)
    return (
        *bench.jit(merged, folder),
        *bench.vmap(merged, folder),
        *bench.loaders(merged, folder),
        *bench.floor(merged, folder),
        *bench.cpu_vs_accelerator(merged, folder),
        *runs.operations(runs_by_file, folder),
        *releases.answers(results, folder, memo),
        *runs.scaling(runs_by_file, folder),
        runs.trace(traces, folder),
        *runs.changes_across_runs(past),
        *runs.training(results, folder),
        *checks.goals(merged, accuracy, folder),
        *runs.time_to_accuracy(results, folder),
        *checks.memory(merged, folder),
        *checks.results_folder(runs_by_file, folder),
    )


def run_findings(run: pd.DataFrame, accuracy: Mapping[str, float] | None = None) -> tuple[Finding, ...]:
    """One benchmark or scaling file's findings (asked for by name: a smoke run answers too, and says so)."""
    by_file = tables.benchmark_runs(run)
    return (
        *bench.jit(by_file, None, False),
        *bench.vmap(by_file, None, False),
        *bench.loaders(by_file, None, False),
        *bench.floor(by_file, None, False),
        *runs.operations(by_file, None, False),
        *(runs.scaling(by_file, None, True) if any(tables.is_scaling(r) for r in by_file.values()) else ()),
        *checks.goals(by_file, accuracy or {}, None, False),
        *checks.memory(by_file, None, False),
        *checks.results_folder(by_file, None, False),
    )
