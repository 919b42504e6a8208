"""`jaxmlp track`'s history and answers from every call's ``track.json`` under a results folder."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import pandas as pd

from jaxmlp.errors import JaxmlpError
from jaxmlp.measure.sweep.track import PINNED, PREVIOUS
from jaxmlp.registry import ALPHA, THRESHOLD, version_key
from jaxmlp.results.schema.track import TrackDocument, Tracked
from jaxmlp.results.store import layout
from jaxmlp.results.store.reading import Skipped, read_document
from jaxmlp.stats import (
    FASTER,
    INCONCLUSIVE,
    RESULTS_DIFFER,
    SAME,
    SLOWER,
    Comparison,
    compare,
    processes_to_settle,
    settle_words,
)

FRAME_COLUMNS = (
    "machine",
    "workload",
    "release",
    "python",
    "against",
    "baseline",
    "ratio",
    "low",
    "high",
    "verdict",
    "median_s",
    "baseline_median_s",
    "explanation",
    "unexplained",
    "measured_at",
    "folder",
    "settle",
    "settle_words",
    "threshold",
)
"""The tidy frame of tracked comparisons (`tracked_frame`): one row per release, baseline and workload."""


# --- the history: every call's file --------------------------------------------------------------------------------


def history(folder: Path) -> tuple[list[tuple[Path, TrackDocument]], list[Skipped]]:
    """Every ``track-*/track.json`` under ``folder``, oldest first, and the files that could not be read (why)."""
    found: list[tuple[Path, TrackDocument]] = []
    skipped: list[Skipped] = []
    if not folder.is_dir():
        return found, skipped
    for path in sorted(folder.glob(f"{layout.TRACK}-*/{layout.TRACK_FILE}"), key=lambda p: (layout.stamp_in(p), p)):
        try:
            document = read_document(path)
        except JaxmlpError as e:
            skipped.append(Skipped(path, str(e).removeprefix(f"{path}: ")))
            continue
        if isinstance(document, TrackDocument):
            found.append((path, document))
    return found, skipped


def series_of(machine: str, workloads: Iterable[str]) -> dict[str, object]:
    """A series: one machine's label and its workloads' names, sorted."""
    return {"machine": machine, "workloads": sorted(workloads)}


def same_series(document: TrackDocument, machine: str, workloads: Iterable[str]) -> bool:
    return document.machine == machine and sorted(document.workloads) == sorted(workloads)


def last_tracked(documents: Iterable[TrackDocument], machine: str, workloads: Iterable[str]) -> str | None:
    """The newest release the series tracked, or None where it has no history."""
    names = sorted(workloads)
    releases = [v for d in documents if same_series(d, machine, names) for v in d.tracked]
    return max(releases, key=version_key) if releases else None


def series_start(documents: Iterable[TrackDocument], machine: str, workloads: Iterable[str]) -> str | None:
    """The release the series started at, or None: a call without ``--pinned`` compares with it."""
    names = sorted(workloads)
    return next((d.last for d in documents if d.start and same_series(d, machine, names)), None)


def folder_name(fields: Mapping[str, object], pid: int, when: str | None = None) -> str:
    """A call's folder, ``track-<UTC time>-<machine>-<pid>``, so runners never share a name."""
    given = fields.get("machine_name")
    words = str(given) if given else f"{fields.get('machine_cpu') or 'cpu'} {fields.get('machine_cores') or ''}c"
    slug = re.sub(r"[^a-z0-9]+", "-", words.lower()).strip("-")[:40].strip("-") or "machine"
    return layout.name(layout.TRACK, when, slug, pid)


# --- comparisons -----------------------------------------------------------------------------------------------


def compared(
    samples: Mapping[str, Mapping[str, Sequence[float]]],
    pairs: Iterable[tuple[str, str, str]],
    workloads: Sequence[str],
    threshold: float = THRESHOLD,
    alpha: float = ALPHA,
    differs: Mapping[str, Mapping[str, str]] | None = None,
) -> list[Tracked]:
    """Each pair compared on each workload's steady state; one ``differs`` names is ``results differ``."""
    out = []
    differs = differs or {}
    for release, baseline, against in pairs:
        for workload in workloads:
            if why := differs.get(release, {}).get(workload) or differs.get(baseline, {}).get(workload):
                out.append(Tracked(workload, release, baseline, against, compare([], []), RESULTS_DIFFER, differs=why))
                continue
            a = list(samples.get(baseline, {}).get(workload, ()))
            b = list(samples.get(release, {}).get(workload, ()))
            comparison = compare(a, b, threshold, alpha)
            settle = processes_to_settle(comparison, threshold)
            out.append(Tracked(workload, release, baseline, against, comparison, comparison.word, settle or 0))
    return out


# --- the lines a call ends with ------------------------------------------------------------------------------------


def shown_ratio(c: Comparison) -> str:
    interval = f" ({c.ci_low:.3g}x to {c.ci_high:.3g}x)" if math.isfinite(c.ci_low) and math.isfinite(c.ci_high) else ""
    return f"x{c.ratio:.3g}{interval}, {c.n_baseline} and {c.n_new} processes"


def verdict_line(t: Tracked, pinned: str = "", threshold: float = THRESHOLD) -> str:
    """One comparison as a sentence (``jax 0.7.1 is slower than 0.7.0 (the previous release) on scan: ...``)."""
    what = "the pinned release" if t.against == PINNED else "the previous release"
    if t.against == PREVIOUS and t.baseline == pinned:
        what = "the previous and pinned release"
    said = {SLOWER: "is slower than", FASTER: "is faster than", SAME: "is the same as"}.get(t.verdict)
    if t.verdict == RESULTS_DIFFER:
        return (
            f"jax {t.release} against {t.baseline} ({what}) on {t.workload}: results differ ({t.differs}): not "
            "compared on time (a larger --tolerance accepts the difference)"
        )
    if said is None:
        more = f"; {settle_words(t.comparison, threshold)}" if math.isfinite(t.comparison.ci_low) else ""
        return (
            f"jax {t.release} against {t.baseline} ({what}) on {t.workload}: inconclusive, "
            f"{shown_ratio(t.comparison)}{more}{on(t)}"
        )
    return f"jax {t.release} {said} {t.baseline} ({what}) on {t.workload}: {shown_ratio(t.comparison)}{on(t)}"


def on(t: Tracked) -> str:
    """After a comparison's numbers, the time it rests on and why; "" for wall time."""
    return f"; on {t.metric}: {t.metric_why}" if t.metric else ""


def closing_lines(comparisons: Sequence[Tracked], pinned: str = "", threshold: float = THRESHOLD) -> list[str]:
    """The lines a call ends with, its verdicts ordered so the last lines name what fails the gate."""
    order = {SAME: 0, FASTER: 1, INCONCLUSIVE: 2, RESULTS_DIFFER: 3, SLOWER: 4}
    return [verdict_line(t, pinned, threshold) for t in sorted(comparisons, key=lambda t: order.get(t.verdict, 4))]


# --- the tidy frame --------------------------------------------------------------------------------------------


def frame_of(documents: Iterable[tuple[Path, TrackDocument]], folder: Path) -> pd.DataFrame:
    """Every tracked comparison of ``documents`` as one row (`FRAME_COLUMNS`), oldest call first."""
    rows: list[dict[str, object]] = []
    for path, doc in documents:
        pythons = doc.settings.get("pythons") or {}
        given = doc.settings.get("threshold")  # the ± band of its verdicts (a file before the option: the default's)
        threshold = (
            float(given) if isinstance(given, (int, float)) and math.isfinite(given) and given > 0 else THRESHOLD
        )
        for t in doc.comparisons:
            c = t.comparison
            both = (PREVIOUS, PINNED) if t.against == PREVIOUS and t.baseline == doc.pinned else (t.against,)
            rows.extend(
                {
                    "machine": doc.machine,
                    "workload": t.workload,
                    "release": t.release,
                    "python": str(pythons.get(t.release, "")) if isinstance(pythons, Mapping) else "",
                    "against": against,
                    "baseline": t.baseline,
                    "ratio": c.ratio,
                    "low": c.ci_low,
                    "high": c.ci_high,
                    "verdict": t.verdict,
                    "median_s": c.new_median,
                    "baseline_median_s": c.baseline_median,
                    "explanation": t.explanation,
                    "unexplained": t.unexplained,
                    "measured_at": doc.timestamp,
                    "folder": layout.shown(path.parent, folder),
                    "settle": t.settle if t.settle else math.nan,
                    "settle_words": settle_words(t.comparison, threshold) if t.verdict == INCONCLUSIVE else "",
                    "threshold": threshold,
                }
                for against in both
            )
    frame = pd.DataFrame(rows, columns=list(FRAME_COLUMNS))
    return frame.drop_duplicates(["folder", "workload", "release", "against"], ignore_index=True)


def tracked_frame(folder: Path) -> pd.DataFrame:
    """Every tracked comparison under ``folder`` as one tidy frame (`FRAME_COLUMNS`)."""
    documents, _ = history(folder)
    return frame_of(documents, folder)
