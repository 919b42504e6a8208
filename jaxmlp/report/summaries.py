"""A folder's results as summaries: every result, the newest of each kind, and the folder's findings."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from jaxmlp.registry import TRAIN_EPOCH
from jaxmlp.report.run_summaries import bench_summary, train_summary, tta_summary
from jaxmlp.report.summary_base import Summary
from jaxmlp.report.sweep_summaries import (
    bisect_summary,
    corpus_summary,
    sweep_summary,
    timeline_summary,
    trials_summary,
    validation_summary,
)
from jaxmlp.results import tables
from jaxmlp.results.findings import Finding
from jaxmlp.results.findings.tracking import newest_safe
from jaxmlp.results.schema.sweep import CellsDocument
from jaxmlp.results.store import layout
from jaxmlp.results.store.frames import Results, benchmark_rows, load, query, without_sweeps
from jaxmlp.results.store.reading import read_benchmarks
from jaxmlp.results.store.writing import ResultsStore
from jaxmlp.results.sweep import tracked
from jaxmlp.results.sweep.compared import timeline_columns
from jaxmlp.results.sweep.views import is_timeline, pythons_of, sweeps

KINDS = (
    "tracking",
    "known regressions",
    "timeline",
    "bisection",
    "sweep",
    "benchmarks",
    "scaling",
    "training",
    "time to accuracy",
    "detector trials",
    "detector validation",
)
"""The kinds of answer, in the order a folder's summary shows them."""


class Listed(NamedTuple):
    kind: str  # one of KINDS
    path: Path  # the result's file or folder
    when: str  # its UTC time as `layout.stamp` writes it ("" when unknown): the newest is the largest
    make: Callable[[], Summary]  # its answer, computed when asked: a folder's summary shows the newest of each kind

    @property
    def summary(self) -> Summary:
        return self.make()


def _when(value: Any) -> str:
    stamp = layout.stamp(str(value)) if isinstance(value, str) and value else "undated"
    return "" if stamp == "undated" else stamp


def summaries(results: Results, folder: Path | None = None, tracking: bool = False) -> list[Listed]:
    """Every result in ``results`` as its answer, in `KINDS` order, and with ``tracking`` the tracked series too."""
    found = []
    calls, _ = tracked.history(folder) if tracking and folder is not None and folder.is_dir() else ([], [])
    if calls and folder is not None:
        when = max(layout.stamp_in(path) for path, _ in calls)
        found.append(Listed("tracking", folder, when, partial(track_summary, folder)))
    for corpus_path, corpus in results.corpora:
        where = layout.shown(corpus_path.parent, folder)
        when = _when(corpus.metadata.get("timestamp"))
        found.append(Listed("known regressions", corpus_path.parent, when, partial(corpus_summary, corpus, where)))
    probes = [path.parent for path, _ in results.bisections]
    for path, doc in results.bisections:
        where = layout.shown(path.parent, folder)
        found.append(
            Listed("bisection", path.parent, _when(doc.metadata.get("timestamp")), partial(bisect_summary, doc, where))
        )
    found += _sweeps_listed(results, folder, probes)
    for file, run in tables.benchmark_runs(without_sweeps(results.runs)).items():
        kind = "scaling" if tables.is_scaling(run) else "benchmarks"
        title = f"{kind.capitalize()}: {layout.shown(file, folder)}"
        found.append(Listed(kind, Path(file), _when(run["timestamp"].iloc[0]), partial(bench_summary, run, title)))
    for sweep in results.older_sweeps:
        answer = partial(_read_sweep, sweep.kind, sweep.folder, folder)
        found.append(Listed(sweep.kind, sweep.folder, sweep.stamp, answer))
    for older in results.older.drop_duplicates("file").itertuples() if len(results.older) else ():
        named = "scaling" if older.kind == "scaling" else "benchmarks"
        title = f"{named.capitalize()}: {layout.shown(str(older.file), folder)}"
        path = Path(str(older.file))
        found.append(Listed(named, path, _when(older.timestamp), partial(_read_summary, path, title)))
    train = query(results.runs, TRAIN_EPOCH)
    for train_file, epochs in train.groupby("file") if len(train) else ():
        when = _when(epochs["timestamp"].iloc[0]) if "timestamp" in epochs else ""
        title = f"Training: {layout.shown(str(train_file), folder)}"
        found.append(Listed("training", Path(str(train_file)), when, partial(train_summary, epochs, title)))
    for validation_path, validation in results.validations:
        title = f"Change-point detector validation: {layout.shown(validation_path.parent, folder)}"
        when = _when(validation.metadata.get("timestamp"))
        found.append(
            Listed("detector validation", validation_path.parent, when, partial(validation_summary, validation, title))
        )
    for tta_path, tta in results.tta_documents:
        title = f"Time to accuracy: {layout.shown(tta_path, folder)}"
        found.append(
            Listed("time to accuracy", tta_path, _when(tta.metadata.get("timestamp")), partial(tta_summary, tta, title))
        )
    for trials_path, trials in results.trials:
        title = f"Detector trials: {layout.shown(trials_path.parent, folder)}"
        when = _when(trials.metadata.get("timestamp"))
        found.append(Listed("detector trials", trials_path.parent, when, partial(trials_summary, trials, title)))
    return sorted(found, key=lambda f: KINDS.index(f.kind))


def _sweeps_listed(results: Results, folder: Path | None, probes: list[Path]) -> list[Listed]:
    """Each sweep and timeline folder read in full (a cells file without rows too; a bisection's probes aside)."""
    out = []
    cells = {str(path.parent): doc for path, doc in results.cells}
    swept = sweeps(results.runs, probes)
    listed = {str(s.folder) for s in results.older_sweeps}  # the index named them: below
    probed = {w for w in cells for f in probes if w == str(f) or w.startswith(f"{f}/")}
    lone = {w: pd.DataFrame() for w in cells if w not in swept and w not in listed and w not in probed}
    for where, rows in {**swept, **lone}.items():
        when = _when(str(rows["timestamp"].max())) if len(rows) else ""
        if is_timeline(where):
            answer = partial(_timeline, rows, results.samples, cells.get(where), layout.shown(where, folder), where)
            out.append(Listed("timeline", Path(where), when, answer))
            continue
        answer = partial(sweep_summary, rows, results.samples, cells.get(where), layout.shown(where, folder), where)
        out.append(Listed("sweep", Path(where), when, answer))
    return out


def track_summary(folder: Path) -> Summary:
    """The folder's tracked series: is the newest release safe to take, per machine, with its workloads."""
    found = newest_safe(folder)
    return Summary(
        f"Tracked releases: {layout.shown(folder, folder)}",
        tuple(f.line() for f in found),
        tuple((t.caption, t.frame) for f in found for t in f.tables),
    )


def _read_sweep(kind: str, where: Path, folder: Path | None) -> Summary:
    """An older sweep's or timeline's answer (the folder's index named it only): read from its folder."""
    return next(f for f in summaries(load(ResultsStore(where)), folder) if f.kind == kind).summary


def _read_summary(path: Path, title: str) -> Summary:
    """An older run's answer (the folder's index kept only its history's points): read from its file."""
    document = read_benchmarks(path)
    return bench_summary(benchmark_rows(document, str(path))[0], title)


def _timeline(
    rows: pd.DataFrame, samples: pd.DataFrame, cells: CellsDocument | None, shown_as: str, where: str
) -> Summary:
    columns = timeline_columns(rows, samples) if len(rows) else []
    return timeline_summary(columns, cells, shown_as, where, pythons_of(rows) if len(rows) else {})


OLDER_NAMED = 5
"""How many of a kind's older results a folder's summary names (the rest counted, with the oldest's date)."""


def _older_line(kind: str, older: Sequence[Listed], folder: Path | None) -> str:
    """One line naming a kind's older results: the newest few, then how many more and since when."""
    named = ", ".join(layout.shown(f.path, folder) for f in older[:OLDER_NAMED])
    if rest := older[OLDER_NAMED:]:
        since = min((f.when for f in rest if f.when), default="")
        named += f" and {len(rest)} more" + (f" back to {layout.shown_stamp(since)}" if since else "")
    return f"{len(older)} older {kind} result(s): {named} (`jaxmlp summary PATH` for one)"


def newest_of_each(found: Sequence[Listed], folder: Path | None = None) -> list[Summary]:
    """A folder's answers kept short: of each kind, the newest result's answer, and the others named in a line."""
    if len(found) == 1:
        return [found[0].summary]
    out = []
    for kind in KINDS:
        mine = sorted((f for f in found if f.kind == kind), key=lambda f: (f.when, str(f.path)), reverse=True)
        if not mine:
            continue
        newest, older = mine[0], mine[1:]
        summary = newest.summary  # the one answer of this kind computed
        closing = summary.closing
        if older:
            closing += (_older_line(kind, older, folder),)
        out.append(summary._replace(closing=closing))
    return out


def folder_summary(found: Sequence[Finding], results: Sequence[Listed], folder: Path | None = None) -> Summary:
    """A folder of many results: each question's finding in a line, then how many results of each kind."""
    lines = tuple(f.line() for f in found if f.answered)
    counts = ", ".join(f"{n} {kind}" for kind in KINDS if (n := sum(r.kind == kind for r in results)))
    title = f"Findings: {folder.name if folder is not None else 'results'}"
    return Summary(
        title,
        lines,
        (),
        (f"Holds {counts}; `jaxmlp summary PATH` shows one in full, `--all` the newest of each kind.",),
    )
