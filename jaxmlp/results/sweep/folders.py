"""What a sweep or timeline folder's files say, read from them: the changes its commands explain, its cells' noise."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from jaxmlp import registry
from jaxmlp.errors import JaxmlpError
from jaxmlp.results.store.frames import load
from jaxmlp.results.store.writing import ResultsStore
from jaxmlp.results.sweep.compared import column_words, timeline_columns
from jaxmlp.results.sweep.views import is_timeline, release_verdicts, sweep_steps, sweeps
from jaxmlp.stats import RESULTS_DIFFER, VERDICT_WORDS


class FiledChange(NamedTuple):
    """A change a sweep flagged or a timeline found: its workload, XLA-flags value, the releases around it, its kind."""

    workload: str
    xla_flags: str
    before: str
    at: str
    kind: str


def _sweep(folder: Path) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    """The rows and samples of the sweep in ``folder`` (None if it holds none)."""
    results = load(ResultsStore(folder))
    rows = sweeps(results.runs).get(str(folder))
    return None if rows is None else (rows, results.samples)


def verdicts(folder: Path) -> pd.DataFrame:
    """The sweep in ``folder``'s verdicts (`release_verdicts`); empty where the folder holds no sweep."""
    sweep = _sweep(folder)
    return pd.DataFrame() if sweep is None else release_verdicts(*sweep)


def flagged_changes(folder: Path) -> list[FiledChange]:
    """The sweep in ``folder``'s flagged changes: each release slower or faster than the one before it (`verdicts`)."""
    table = verdicts(folder)
    if table.empty:
        return []
    found = []
    for (workload, flags), column in table.groupby(["workload", "xla_flags"], sort=False):
        releases = list(column["release"])
        for i, verdict in enumerate(column["verdict"]):
            if i and verdict in ("slower", "faster"):
                found.append(FiledChange(str(workload), str(flags), releases[i - 1], releases[i], "flagged"))
    return found


def timeline_changes(folder: Path) -> list[FiledChange]:
    """The timeline in ``folder``'s changes (steps, transients, drifts), column by column (`timeline_columns`)."""
    sweep = _sweep(folder)
    columns = [] if sweep is None else timeline_columns(*sweep)
    return [
        FiledChange(column.workload, column.xla_flags, change.before, change.at, change.kind)
        for column in columns
        for change in column.changes
    ]


def folder_verdicts(folder: Path) -> list[str]:
    """The verdicts of the sweep or timeline in ``folder``, ``results differ`` where a comparison's two sides'
    results differ (and no verdict on time for it)."""
    sweep = _sweep(folder)
    if sweep is None:
        return []
    if is_timeline(folder):
        return [word for column in timeline_columns(*sweep) for word in column_words(column)]
    return [str(word) for word in sweep_steps(*sweep)["verdict"] if word in (*VERDICT_WORDS, RESULTS_DIFFER)]


def noise_cells(folders: Sequence[Path]) -> list[list[float]]:
    """Every sweep cell's steady-state samples (one a process) under ``folders``, a list a cell and workload."""
    cells: list[list[float]] = []
    for folder in folders:
        results = load(ResultsStore(folder))
        for rows in sweeps(results.runs).values():
            steady = rows[rows["test"] == registry.SWEEP_STEADY.id]
            for file, name in zip(steady["file"], steady["name"]):
                picked = results.samples[(results.samples["file"] == file) & (results.samples["name"] == name)]
                cells.append([float(x) for x in picked["seconds"]])
    if not any(len(c) >= 4 for c in cells):
        raise JaxmlpError(
            f"no sweep cell of 4 or more processes under {', '.join(map(str, folders))}: give the "
            "folder of a sweep or timeline"
        )
    return cells
