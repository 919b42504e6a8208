"""The findings of the release sweeps (the version matrix, the timeline, bisection), each from the newest decisive."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from jaxmlp import registry
from jaxmlp.measure.bisection import answer_line
from jaxmlp.results.findings.model import ANCHOR, Finding
from jaxmlp.results.findings.questions import ACROSS_RELEASES, SLOWER_RELEASE, WHICH_RELEASE
from jaxmlp.results.findings.select import machine
from jaxmlp.results.schema.bisect import BisectDocument
from jaxmlp.results.schema.sweep import CellsDocument
from jaxmlp.results.store import layout
from jaxmlp.results.store.frames import Results
from jaxmlp.results.store.memo import IndexMemo
from jaxmlp.results.sweep.cells import ignored_cells, ignored_words
from jaxmlp.results.sweep.compared import TimelineColumn, column_said, timeline_columns
from jaxmlp.results.sweep.views import is_timeline, sweep_steps, sweeps
from jaxmlp.stats import FASTER, INCONCLUSIVE, RESULTS_DIFFER, SAME, SLOWER
from jaxmlp.units import interval, p_value, ratio

UNDECIDED = "insufficient data"
FLAGGED = (SLOWER, FASTER, RESULTS_DIFFER)


def _unsettled(steps: pd.DataFrame) -> str:
    """How many of a sweep's steps show the same time and how many are inconclusive, the widest of those named."""
    same = int((steps["verdict"] == SAME).sum())
    open_ = steps[steps["verdict"] == INCONCLUSIVE]
    said = f"{same} of {len(steps)} comparisons {SAME}, {len(open_)} {INCONCLUSIVE}"
    if open_.empty:
        return said
    widest = open_.assign(width=open_["ci_high"] / open_["ci_low"]).sort_values("width", na_position="first").iloc[-1]
    return (
        f"{said}: the widest {widest['benchmark']} {widest['from']} → {widest['to']} "
        f"{ratio(widest['ratio'])} ({interval(widest['ci_low'], widest['ci_high'])}); more processes settle them"
    )


def _ignored(row: pd.Series, ignored: set[tuple[str, str]]) -> str:
    said = ignored_words(row, ignored)
    return f"; {said}" if said else ""


def _step_words(row: pd.Series, ignored: set[tuple[str, str]]) -> str:
    flagged = isinstance(row.get("xla_flags"), str) and bool(row["xla_flags"])
    flags = f" [XLA_FLAGS {row['xla_flags']}]" if flagged else ""
    if row["verdict"] == RESULTS_DIFFER:  # nothing on time
        return f"{row['benchmark']}{flags} {row['from']} → {row['to']} (not compared on time{_ignored(row, ignored)})"
    p = min(row["p_slower"], row["p_faster"])
    return (
        f"{row['benchmark']}{flags} {row['from']} → {row['to']} {ratio(row['ratio'])} "
        f"({interval(row['ci_low'], row['ci_high'])}, p {p_value(p)}{_ignored(row, ignored)})"
    )


def sweep_verdict(rows: pd.DataFrame, steps: pd.DataFrame, cells: CellsDocument | None = None) -> str | None:
    """A version matrix's one-line verdict from its steps; None where every comparison has insufficient data."""
    ignored = ignored_cells(cells)
    if steps.empty or (steps["p_slower"].isna().all() and not (steps["verdict"] == RESULTS_DIFFER).any()):
        return None
    span = f"releases {', '.join(sorted(rows['release'].unique(), key=registry.version_key))}"
    flagged = steps[steps["verdict"].isin(FLAGGED)]
    if flagged.empty:
        return f"No release is slower or faster than the previous one ({_unsettled(steps)}), in {span}."
    return (
        ". ".join(
            f"{v}: " + "; ".join(_step_words(r, ignored) for _, r in part.iterrows())
            for v, part in flagged.groupby("verdict", sort=False)
        )
        + f"; in {span}."
    )


UNDECIDED_LINE = (
    f"Undecided: every comparison is {INCONCLUSIVE}, its processes too few to test (one a release decides nothing; "
    "`jaxmlp sweep --processes 8`)."
)


def timeline_verdict(columns: Sequence[TimelineColumn]) -> str:
    """A release timeline's one-line verdict: per workload, its changes or none."""
    releases = sorted({r for c in columns for r in c.releases}, key=registry.version_key)
    if not releases:
        return "No release was measured."
    parts = [f"{c.workload}{f' [{c.xla_flags}]' if c.xla_flags else ''}: " + column_said(c) for c in columns]
    return f"{'. '.join(parts)}; over {len(releases)} releases, {releases[0]} to {releases[-1]}."


def answers(
    results: Results, folder: Path | None = None, memo: IndexMemo | None = None
) -> tuple[Finding, Finding, Finding]:
    """The release questions' findings from the folder's sweeps, read once (``memo``: the folder's index)."""
    bisected = bisection(results.bisections, folder)
    found = sweeps(results.runs, [path.parent for path, _ in results.bisections])
    matrices = {k: v for k, v in found.items() if not is_timeline(k)}
    timelines = {k: v for k, v in found.items() if is_timeline(k)}
    return matrix(matrices, results, folder, memo), timeline(timelines, results.samples, folder, memo), bisected


def matrix(
    found: Mapping[str, pd.DataFrame], results: Results, folder: Path | None, memo: IndexMemo | None = None
) -> Finding:
    """The newest version matrix (``found``: the sweeps that are not timelines) that decides anything: its flagged
    steps, or that none changed (``memo``: the folder's index, where its comparisons are kept, `comparisons`)."""
    question = SLOWER_RELEASE.text
    if not found:
        return Finding(question, "No version matrix yet: `jaxmlp sweep`.", ANCHOR.matrix, False)
    cells = {str(path.parent): doc for path, doc in results.cells}
    ordered = sorted(found, key=layout.stamp_in, reverse=True)
    for where in ordered:
        steps = sweep_steps(found[where], results.samples, memo=memo) if len(found[where]) else pd.DataFrame()
        if (text := sweep_verdict(found[where], steps, cells.get(where))) is not None:
            return Finding(
                question, text, ANCHOR.matrix, True, layout.cited(where, folder), machine(found[where].iloc[0])
            )
    return Finding(
        question,
        UNDECIDED_LINE,
        ANCHOR.matrix,
        True,
        layout.cited(ordered[0], folder),
        machine(found[ordered[0]].iloc[0]),
    )


def timeline(
    found: Mapping[str, pd.DataFrame], samples: pd.DataFrame, folder: Path | None, memo: IndexMemo | None = None
) -> Finding:
    """The newest release timeline (``found``: the timelines) with at least two processes a release: its changes,
    workload by workload (``memo``: the folder's index, where its columns' changes are kept, `timeline_columns`)."""
    question = ACROSS_RELEASES.text
    for where in sorted(found, key=layout.stamp_in, reverse=True):
        columns = timeline_columns(found[where], samples, memo=memo)
        if not columns or min(len(s) for c in columns for s in c.samples) < 2:
            continue
        return Finding(
            question,
            timeline_verdict(columns),
            ANCHOR.timeline,
            True,
            layout.cited(where, folder),
            machine(found[where].iloc[0]),
        )
    return Finding(
        question,
        "No release timeline with two or more processes a release yet: `jaxmlp sweep timeline A B`.",
        ANCHOR.timeline,
        False,
    )


def bisection(bisections: Sequence[tuple[Path, BisectDocument]], folder: Path | None) -> Finding:
    """The newest bisection that found a release, else the newest one's reason."""
    question = WHICH_RELEASE.text
    if not bisections:
        return Finding(question, "No bisection yet: `jaxmlp sweep bisect GOOD BAD`.", ANCHOR.bisection, False)
    ordered = sorted(bisections, key=lambda item: layout.stamp_in(item[0]), reverse=True)
    path, doc = next(((p, d) for p, d in ordered if d.bisection.answered), ordered[0])
    more = len(ordered) - 1
    also = f" ({more} other bisection(s) in the report)" if more else ""
    line = answer_line(doc.bisection) if doc.bisection.answered else doc.line  # in today's units
    return Finding(
        question,
        f"{line[0].upper()}{line[1:]}{also}.",
        ANCHOR.bisection,
        True,
        layout.cited(path.parent, folder),
        _machine(doc.metadata),
    )


def _machine(metadata: Mapping[str, Any]) -> str:
    return machine({**metadata, "backend": metadata.get("backend") or "cpu"})
