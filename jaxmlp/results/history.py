"""The history of benchmark runs: every benchmark seen in more than one comparable run, and its changes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import pandas as pd
from pandas.api.types import union_categoricals

from jaxmlp import changepoints, registry
from jaxmlp.registry import CHANGE_ALPHA, CHANGE_THRESHOLD
from jaxmlp.results.schema.machines import machine
from jaxmlp.results.store import index
from jaxmlp.results.store.frames import Results, without_sweeps
from jaxmlp.results.store.memo import IndexMemo, samples_key
from jaxmlp.results.store.rows import COMPARABLE, POINT_FIELDS
from jaxmlp.results.sweep.compared import result_of
from jaxmlp.stats import FASTER, RESULT_FIELDS, SLOWER

POINT_COLUMNS = [
    "benchmark",
    "group",
    "test",
    "machine",
    "setting",
    "file",
    "timestamp",
    "commit",
    "jax",
    "median",
    "q1",
    "q3",
    "rounds",
]
CHANGE_COLUMNS = [
    "benchmark",
    "machine",
    "setting",
    "kind",
    "from",
    "to",
    "from_file",
    "to_file",
    *RESULT_FIELDS,
]


def setting(row: pd.Series) -> str:
    """The machine and settings of a run as one label (``AMD EPYC, 2 cores · size quick``)."""
    parts = [machine(row)]
    if pd.notna(row.get("size")):
        parts.append(f"size {row['size']}")
    for key, label in (("xla_flags", "XLA_FLAGS"), ("jax_default_matmul_precision", "precision")):
        value = row.get(key)
        if isinstance(value, str) and value and value != "default":
            parts.append(f"{label} {value}")
    return " · ".join(parts)


def run_label(point: Any) -> str:
    """A run on a history's x axis: its date, commit and jax version (``12-03 08:42 3600a678 jax 0.10.2``)."""
    stamp = pd.Timestamp(point.timestamp)
    return f"{stamp:%m-%d %H:%M} {str(point.commit)[:8]} jax {point.jax}"


def points(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per benchmark per run, for each seen in more than one run with its setting; oldest first."""
    bench = without_sweeps(runs)
    if "test" not in bench or bench.empty:
        return pd.DataFrame(columns=POINT_COLUMNS)
    bench = bench[(bench["test"] != registry.TRAIN_EPOCH.id) & bench["median"].notna()]
    keys = [key for key in COMPARABLE if key in bench]
    labelled = bench.assign(
        setting=_labels(bench, keys, setting), machine=_labels(bench, keys, machine), benchmark=bench["name"]
    )
    labelled = labelled.reindex(columns=POINT_COLUMNS)
    runs_seen = labelled.groupby(["benchmark", "setting"])["file"].transform("nunique")
    out = labelled[runs_seen > 1].assign(timestamp=lambda d: pd.to_datetime(d["timestamp"], utc=True, format="ISO8601"))
    return out.sort_values(["benchmark", "setting", "timestamp"]).reset_index(drop=True)


RECENT_RUNS = index.RECENT_RUNS
"""How many of each machine's newest runs the history draws and searches; the older are summarised."""

OLDER_COLUMNS = ["benchmark", "machine", "setting", "runs", "first", "last", "median_s"]


def recent(history: pd.DataFrame, keep: int = RECENT_RUNS) -> tuple[pd.DataFrame, pd.DataFrame]:
    """`points` of each machine's newest ``keep`` runs and a row per benchmark summarising the older ones."""
    if history.empty:
        return history, pd.DataFrame(columns=OLDER_COLUMNS)
    runs = history.drop_duplicates("file").sort_values("timestamp")
    newest = set(runs.groupby("machine", sort=False)["file"].tail(keep))
    shown = history["file"].isin(newest)
    older = (
        history[~shown]
        .groupby(["benchmark", "machine", "setting"], sort=True)
        .agg(
            runs=("file", "nunique"),
            first=("timestamp", "min"),
            last=("timestamp", "max"),
            median_s=("median", "median"),
        )
    )
    return history[shown].reset_index(drop=True), older.reset_index().reindex(columns=OLDER_COLUMNS)


def _labels(bench: pd.DataFrame, keys: list[str], label: Any) -> pd.Series:
    """``label(row)`` of each row's ``keys``, worked out once for each machine and settings seen (not once a row)."""
    if not keys:
        return pd.Series(label(pd.Series(dtype=object)), index=bench.index, dtype=object)
    ids = bench.groupby(keys, dropna=False, sort=False).ngroup()  # numbered in order of first appearance
    named = [label(row) for _, row in bench.loc[~ids.duplicated(), keys].iterrows()]
    return ids.map(dict(enumerate(named)))


MEMO_KIND = "changes"
"""What `changes` keeps in a folder's index (`IndexMemo`): each series' changes."""


def series_key(labels: Sequence[str], samples: Sequence[Sequence[float]]) -> str:
    """A hash of all a series' changes follow from: labels, samples, thresholds and the detector."""
    return samples_key([changepoints.DETECTOR, CHANGE_THRESHOLD, CHANGE_ALPHA, list(labels)], samples)


def changes(history: pd.DataFrame, samples: pd.DataFrame, memo: IndexMemo | None = None) -> pd.DataFrame:
    """The changes in each benchmark's history, a row each; ``memo``: series searched before are kept."""
    if history.empty or changepoints.unavailable():
        return pd.DataFrame(columns=CHANGE_COLUMNS)
    mine = samples[samples["file"].isin(set(history["file"]))]  # the history's runs only, not every sample
    by_run = {key: part["seconds"].to_numpy() for key, part in mine.groupby(["file", "name"])}
    series = []
    for (name, where), part in history.groupby(["benchmark", "setting"], sort=True):
        ordered = [p for p in part.sort_values("timestamp").itertuples() if (p.file, name) in by_run]
        runs = {run_label(p): p for p in ordered}
        values = [list(by_run[(p.file, name)]) for p in runs.values()]
        series.append((name, where, part["machine"].iloc[0], runs, values, series_key(list(runs), values)))
    kept = memo.recall(MEMO_KIND, [key for *_, key in series]) if memo is not None else {}
    made: dict[str, list[dict[str, Any]]] = {}
    rows = []
    for name, where, on, runs, values, key in series:
        if key in kept:
            found = [changepoints.Change.from_json(change) for change in kept[key]]
        else:
            found = changepoints.detect(list(runs), values, threshold=CHANGE_THRESHOLD, alpha=CHANGE_ALPHA)
            made[key] = [change.to_json() for change in found]
        for change in found:
            c, old, new = change.comparison, runs[change.before], runs[change.at]
            rows.append(
                {
                    "benchmark": name,
                    "machine": on,
                    "setting": where,
                    "kind": change.kind,
                    "from": change.before,
                    "to": change.at,
                    "from_file": old.file,
                    "to_file": new.file,
                    **result_of(c),
                }
            )
    if memo is not None:
        memo.keep(MEMO_KIND, made, [key for *_, key in series])
    return pd.DataFrame(rows, columns=CHANGE_COLUMNS)


class RunHistory(NamedTuple):
    """A folder's history: its points, each machine's newest `RECENT_RUNS` runs, the older summarised, the changes."""

    every: pd.DataFrame
    points: pd.DataFrame
    older: pd.DataFrame
    changes: pd.DataFrame


def found(
    runs: pd.DataFrame,
    samples: pd.DataFrame,
    older: pd.DataFrame | None = None,
    memo: IndexMemo | None = None,
) -> RunHistory:
    """`points`, `recent` and `changes` of a folder's runs, computed once; ``memo``: the folder's index."""
    if older is not None and len(older):
        runs = _joined(runs, older)
    every = points(runs)
    shown, older = recent(every)
    return RunHistory(every, shown, older, changes(shown, samples, memo=memo))


NUMBERS = ("median", "q1", "q3", "rounds")


def _joined(runs: pd.DataFrame, older: pd.DataFrame) -> pd.DataFrame:
    """A folder's runs and older points as one table of `POINT_FIELDS`, text as categories for speed."""
    mine, theirs = runs.reindex(columns=list(POINT_FIELDS)), older.reindex(columns=list(POINT_FIELDS))
    columns: dict[str, Any] = {}
    for column in POINT_FIELDS:
        if isinstance(theirs[column].dtype, pd.CategoricalDtype):
            try:
                ours = pd.Categorical(mine[column].astype(object).where(mine[column].notna(), None))
                columns[column] = union_categoricals([ours, theirs[column].array], sort_categories=True)
                continue
            except TypeError:  # not text on both sides: as values
                pass
        columns[column] = pd.concat([mine[column], theirs[column].astype(object)], ignore_index=True)
        if column in NUMBERS:
            columns[column] = pd.to_numeric(columns[column])
    return pd.DataFrame(columns)


def of(results: Results, memo: IndexMemo | None = None) -> RunHistory:
    """`found` of a folder's results, its older runs' points included (``memo``: the folder's index, `found`)."""
    return found(results.runs, results.samples, results.older, memo)


def flagged(changes_table: pd.DataFrame) -> pd.DataFrame:
    """The changes that are slower or faster, biggest change first."""
    if changes_table.empty:
        return changes_table
    keep = changes_table["verdict"].isin([SLOWER, FASTER])
    out = changes_table[keep]
    size = (out["ratio"].astype(float) - 1).abs()
    return out.assign(_size=size).sort_values("_size", ascending=False).drop(columns="_size").reset_index(drop=True)
