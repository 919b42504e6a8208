"""The finding of tracking: is the newest release safe to take? From the folder's ``track.json`` files."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from jaxmlp.registry import version_key
from jaxmlp.results.findings.model import ANCHOR, Finding, Table
from jaxmlp.results.findings.questions import TRACKED
from jaxmlp.results.store import layout
from jaxmlp.results.sweep import tracked
from jaxmlp.results.sweep.track_answers import (
    PINNED,
    Row,
    newest,
    sentence,
)
from jaxmlp.results.sweep.track_answers import series as by_series
from jaxmlp.stats import FASTER, RESULTS_DIFFER, SAME, SLOWER

NOT_TRACKED = "No release tracked yet: `jaxmlp track --pinned VERSION` (the release you run today) starts a series."
CAPTION = "The newest release tracked against the pinned release, per workload"
COLUMNS = ["workload", "release", "baseline", "verdict", "ratio", "low", "high", "explanation", "unexplained"]


def _why(row: Row) -> str:
    """After a changed workload's sentence: where its explanation is (in the results folder), or why there is none."""
    if where := str(row.get("explanation") or ""):
        return f" (why: {where.rstrip('/')}/{layout.EXPLAIN_TEXT})"
    unexplained = str(row.get("unexplained") or "")
    return f" ({unexplained})" if unexplained and row.get("verdict") in (SLOWER, FASTER) else ""


def _head(release: str, pinned: str, rows: Sequence[Row]) -> str:
    """The direct answer: no (slower on a workload), yes (the same or faster on every one), or not shown yet."""
    verdicts = {str(r["workload"]): str(r["verdict"]) for r in rows}
    if slower := [w for w, v in verdicts.items() if v == SLOWER]:
        return f"No: jax {release} is slower than the pinned {pinned} on {', '.join(slower)}"
    if differ := [w for w, v in verdicts.items() if v == RESULTS_DIFFER]:
        return f"Not shown: jax {release}'s results differ from the pinned {pinned}'s on {', '.join(differ)}"
    if all(v in (SAME, FASTER) for v in verdicts.values()):
        return f"Yes: jax {release} is the same as or faster than the pinned {pinned} on {', '.join(verdicts)}"
    open_ = [w for w, v in verdicts.items() if v not in (SAME, FASTER)]
    return f"Not shown yet: jax {release} against the pinned {pinned} is inconclusive on {', '.join(open_)}"


def newest_safe(folder: Path | None) -> list[Finding]:
    """Per machine, its newest tracked release against the pinned one per workload; unanswered without track.json."""
    documents, _ = tracked.history(folder) if folder is not None else ([], [])
    frame = tracked.frame_of(documents, folder) if folder is not None else pd.DataFrame()
    if frame.empty:
        return [Finding(TRACKED.text, NOT_TRACKED, TRACKED.anchor, False)]
    sites = {doc.machine: str(doc.settings.get("site") or "") for _, doc in documents}
    out = []
    for machine in sorted(frame["machine"].astype(str).unique()):
        mine = by_series(frame[frame["machine"].astype(str) == machine])
        rows = [r for r in (newest(part, PINNED) for part in mine.values()) if r is not None]
        if not rows:
            continue
        release = max((str(r["release"]) for r in rows), key=version_key)
        rows = [dict(r) for r in rows if str(r["release"]) == release]
        said = "; ".join(f"{r['workload']}: {sentence(r)}{_why(r)}" for r in rows)
        site = sites.get(machine, "")
        at = f" The site: {site.rstrip('/')}/index.html." if site else ""
        folders = ", ".join(dict.fromkeys(str(r["folder"]) for r in rows))
        table = pd.DataFrame(rows)[COLUMNS]
        out.append(
            Finding(
                TRACKED.text,
                f"{_head(release, str(rows[0]['baseline']), rows)}. {said}.{at}",
                ANCHOR.tracking,
                True,
                folders,
                machine,
                (Table(CAPTION, table),),
            )
        )
    return out or [Finding(TRACKED.text, NOT_TRACKED, TRACKED.anchor, False)]
