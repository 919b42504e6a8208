"""Tracking's message: Markdown of what changed only, for a pull-request comment or a chat post (`jaxmlp track
--message FILE`). Each release slower or faster than its baseline, and each inconclusive one with what would settle
it, under its machine and workload; where nothing changed, exactly one line."""

from __future__ import annotations

import os
from collections.abc import Collection
from pathlib import Path

import pandas as pd

from jaxmlp import registry, units
from jaxmlp.report.track_answers import CHANGED, SAME, in_order, sentence, series, when, within
from jaxmlp.results.store.replacing import replace_file

NOTHING_MEASURED = "jaxmlp track: nothing new was measured (no release newer than the last one tracked)."


def link(explanation: object, link_base: str = "") -> str:
    """An explanation's link as the reader follows it: ``link_base`` (the results folder's address, ending in
    ``/``) before the link the frame holds (relative to the results folder); "" where there is none."""
    text = "" if explanation is None or (isinstance(explanation, float) and pd.isna(explanation)) else str(explanation)
    return f"{link_base}{text}" if text else ""


def _counted(rows: pd.DataFrame) -> str:
    """``2 slower, 1 inconclusive``: how many comparisons had each verdict that changed."""
    counts = rows["verdict"].value_counts()
    return ", ".join(f"{int(counts[v])} {v}" for v in CHANGED if v in counts)


def _no_change(rows: pd.DataFrame, threshold: float) -> str:
    """The one line of a call whose every comparison was the same: what was shown to be no change, and where."""
    releases = ", ".join(dict.fromkeys(in_order(rows)["release"].astype(str)))
    workloads = ", ".join(sorted(rows["workload"].astype(str).unique()))
    machines = ", ".join(sorted(rows["machine"].astype(str).unique()))
    comparisons = units.count(len(rows), "comparison")
    return (
        f"jaxmlp track: no change: {releases} the same as {'their' if ', ' in releases else 'its'} "
        f"baseline{'s' if len(rows) > 1 else ''} within "
        f"{within(threshold)} ({comparisons}: {workloads} on {machines})."
    )


def message(
    frame: pd.DataFrame,
    *,
    folders: Collection[str] | None = None,
    threshold: float = registry.THRESHOLD,
    link_base: str = "",
) -> str:
    """The Markdown message of ``frame``'s comparisons (those measured in ``folders``, where given: this call's):
    a title counting what changed, then per machine and workload each slower, faster or inconclusive comparison in
    one sentence (`track_answers.sentence`) with its explanation's link. Where none changed, one line."""
    rows = frame if folders is None else frame[frame["folder"].astype(str).isin(set(folders))]
    if rows.empty:
        return NOTHING_MEASURED + "\n"
    changed = rows[rows["verdict"].isin(CHANGED)]
    if changed.empty:
        return _no_change(rows, threshold) + "\n"
    same = int((rows["verdict"] == SAME).sum())
    title = f"**jaxmlp track: {_counted(changed)}**" + (
        f" (and {units.count(same, 'comparison')} the same within {within(threshold)})" if same else ""
    )
    out = [title, ""]
    for (machine, workload), part in series(changed).items():
        out.append(f"#### {workload} on {machine}")
        out.append("")
        for row in part.to_dict("records"):
            where = link(row.get("explanation"), link_base)
            said = sentence(row, threshold)
            out.append(f"- {said}" + (f" ([why]({where}))" if where else ""))
        out.append("")
    times = sorted(rows["measured_at"].astype(str))
    out.append(f"Measured {when(times[0])}" + (f" to {when(times[-1])}" if when(times[-1]) != when(times[0]) else ""))
    return "\n".join(out) + "\n"


def write_message(
    frame: pd.DataFrame,
    path: str | os.PathLike[str],
    *,
    folders: Collection[str] | None = None,
    threshold: float = registry.THRESHOLD,
    link_base: str = "",
) -> Path:
    """`message` written as ``path``, replacing the last one whole (never half a message)."""
    return replace_file(path, message(frame, folders=folders, threshold=threshold, link_base=link_base))
