"""Tracking's message (`jaxmlp track --message FILE`): Markdown of what changed only."""

from __future__ import annotations

import os
from collections.abc import Collection
from pathlib import Path
from typing import Any

import pandas as pd

from jaxmlp import registry, units
from jaxmlp.report.escape import markdown, markdown_frame
from jaxmlp.results.store import confined, layout
from jaxmlp.results.store.replacing import replace_file
from jaxmlp.results.sweep.track_answers import (
    CHANGED,
    Row,
    answered_first,
    bands,
    explanation_page,
    in_order,
    page_names,
    release_order,
    series,
    short_sentence,
    when,
)
from jaxmlp.stats import FASTER, SAME, SLOWER

NOTHING_MEASURED = "jaxmlp track: nothing new was measured (no release newer than the last one tracked)."


def text_of(value: object) -> str:
    """A frame's text cell: "" where it is empty (None, NaN)."""
    return "" if value is None or (isinstance(value, float) and pd.isna(value)) else str(value)


def link(explanation: object, link_base: str = "") -> str:
    """An explanation's link: ``link_base`` + its folder + ``explain.txt``; "" where there is none."""
    text = confined.relative(text_of(explanation).rstrip("/")) or ""  # never a scheme, an absolute path or a way up
    return f"{link_base}{text}/{layout.EXPLAIN_TEXT}" if text else ""


def why_link(row: Row, link_base: str = "", site_url: str = "") -> str:
    """After a changed comparison's sentence: its explanation's link, or why it was not explained."""
    folder = text_of(row.get("explanation"))
    where = f"{site_url}{explanation_page(folder)}" if site_url and folder else link(folder, link_base)
    if where:
        return f" ([why]({where}))"
    unexplained = text_of(row.get("unexplained"))
    return f" ({unexplained})" if unexplained and str(row.get("verdict")) in (SLOWER, FASTER) else ""


def distinct(rows: pd.DataFrame) -> pd.DataFrame:
    """Each comparison once: a pinned release that was also the one before is one comparison (the pinned row kept)."""
    keys = [k for k in ("folder", "machine", "workload", "release", "baseline") if k in rows]
    return in_order(rows).drop_duplicates(keys)


def _counted(rows: pd.DataFrame) -> str:
    """The message's title: per verdict that changed, its releases (once each), workloads and baselines."""
    said = []
    for verdict in CHANGED:
        mine = rows[rows["verdict"] == verdict]
        releases = release_order(mine["release"])
        if not releases:
            continue
        where = []
        for release in releases:
            part = mine[mine["release"].astype(str) == release]
            workloads = ", ".join(dict.fromkeys(part["workload"].astype(str)))
            baselines = " and ".join(release_order(part["baseline"]))
            where.append(f"{release} (on {workloads} against {baselines})")
        said.append(f"{units.count(len(releases), 'release')} {verdict}: {', '.join(where)}")
    return "; ".join(said)


def _no_change(rows: pd.DataFrame, threshold: float) -> str:
    """The one line of a call whose every comparison was the same: what was shown to be no change, and where."""
    releases = ", ".join(dict.fromkeys(in_order(rows)["release"].astype(str)))
    workloads = ", ".join(sorted(rows["workload"].astype(str).unique()))
    machines = ", ".join(sorted(rows["machine"].astype(str).unique()))
    comparisons = units.count(len(distinct(rows)), "comparison")
    return (
        f"jaxmlp track: no change: {releases} the same as {'their' if ', ' in releases else 'its'} "
        f"baseline{'s' if len(rows) > 1 else ''} within "
        f"{bands(rows, threshold)} ({comparisons}: {workloads} on {machines})."
    )


def message(
    frame: pd.DataFrame,
    *,
    folders: Collection[str] | None = None,
    threshold: float = registry.THRESHOLD,
    link_base: str = "",
    site_url: str = "",
    started: str = "",
) -> str:
    """The Markdown message of ``frame``'s comparisons (in ``folders``, where given); ``site_url``: absolute links."""
    site_url = site_url.rstrip("/") + "/" if site_url else ""
    rows = frame if folders is None else frame[frame["folder"].astype(str).isin(set(folders))]
    rows = markdown_frame(rows)  # names and free text from the results folder: never markup (`escape.markdown`)
    if rows.empty:
        said = f"jaxmlp track: {started}" if started else NOTHING_MEASURED
        return said + (f" [The site]({site_url})" if site_url else "") + "\n"
    changed = distinct(rows[rows["verdict"].isin(CHANGED)])
    if changed.empty:
        return _no_change(rows, threshold) + "\n"
    same = int((distinct(rows)["verdict"] == SAME).sum())
    title = f"**jaxmlp track: {_counted(changed)}**" + (
        f" (and {units.count(same, 'comparison')} the same within {bands(rows, threshold)})" if same else ""
    )
    out = [title, "", *([started, ""] if started else [])]
    pages = {(markdown(m), markdown(w)): name for (m, w), name in page_names(frame).items()}  # as `rows` names them
    found = series(changed)
    for machine, workload in answered_first(found):
        part = found[(machine, workload)]
        page = f" ([page]({site_url}{pages[(machine, workload)]}))" if site_url else ""
        out.append(f"#### {workload} on {machine}{page}")
        out.append("")
        for row in part.to_dict("records"):
            out.append(f"- {short_sentence(row, threshold)}{why_link(row, link_base, site_url)}")
        out.append("")
    times = sorted(rows["measured_at"].astype(str))
    out.append(
        f"Measured {when(times[0])}"
        + (f" to {when(times[-1])}" if when(times[-1]) != when(times[0]) else "")
        + (f"; [the site]({site_url})" if site_url else "")
    )
    return "\n".join(out) + "\n"


def write_message(frame: pd.DataFrame, path: str | os.PathLike[str], **keywords: Any) -> Path:
    """`message` (given its ``keywords``) written as ``path``, replacing the last one whole (never half a message)."""
    return replace_file(path, message(frame, **keywords))
