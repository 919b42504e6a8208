"""`jaxmlp track`'s history and answers: every call's ``track.json`` under a results folder (the files are the truth:
nothing else is kept), the last release each series tracked, each new release's comparisons, the lines that end a
call, and the tidy frame of every tracked comparison (`tracked_frame`) the site and the message are drawn from."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import pandas as pd

from jaxmlp.errors import JaxmlpError
from jaxmlp.measure.records import ProcessResult
from jaxmlp.registry import ALPHA, THRESHOLD, version_key
from jaxmlp.results.schema.track import TrackDocument, Tracked
from jaxmlp.results.store import layout, machines
from jaxmlp.results.store.reading import Skipped, read_document
from jaxmlp.stats import Comparison, compare

SLOWER, FASTER, SAME, INCONCLUSIVE = "slower", "faster", "the same", "inconclusive"
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
    "measured_at",
    "folder",
)
"""The tidy frame of tracked comparisons (`tracked_frame`): one row per release, baseline and workload."""


# --- the history: every call's file --------------------------------------------------------------------------------


def history(folder: Path) -> tuple[list[tuple[Path, TrackDocument]], list[Skipped]]:
    """Every ``track-*/track.json`` directly under ``folder``, oldest first (by the time in its folder's name), and
    the files that could not be read (each with why): several runners' folders side by side, none overwritten."""
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
    """A series: one machine's label and the names of its workloads, sorted (the order they are given in is not
    part of it)."""
    return {"machine": machine, "workloads": sorted(workloads)}


def same_series(document: TrackDocument, machine: str, workloads: Iterable[str]) -> bool:
    return document.machine == machine and sorted(document.workloads) == sorted(workloads)


def last_tracked(documents: Iterable[TrackDocument], machine: str, workloads: Iterable[str]) -> str | None:
    """The newest release the series of ``machine`` and ``workloads`` tracked (measured, or started at), or None
    where it has no history."""
    names = sorted(workloads)
    releases = [v for d in documents if same_series(d, machine, names) for v in d.tracked]
    return max(releases, key=version_key) if releases else None


def machine_label(fields: Mapping[str, object]) -> str:
    """The machine a series is of, as every result names it (`jaxmlp.results.store.machines.machine`)."""
    return machines.machine(fields)


def folder_name(fields: Mapping[str, object], pid: int, when: str | None = None) -> str:
    """A call's folder: ``track-<UTC time>-<machine>-<pid>``, the machine its given name (``JAXMLP_MACHINE_NAME``)
    else its CPU and cores, in letters, digits and dashes: runners appending to one history never take one
    another's name."""
    given = fields.get("machine_name")
    words = str(given) if given else f"{fields.get('machine_cpu') or 'cpu'} {fields.get('machine_cores') or ''}c"
    slug = re.sub(r"[^a-z0-9]+", "-", words.lower()).strip("-")[:40].strip("-") or "machine"
    return layout.name(layout.TRACK, when, slug, pid)


# --- comparisons -----------------------------------------------------------------------------------------------


def steady(processes: Sequence[ProcessResult], workload: str) -> list[float]:
    """Each process's steady state of ``workload`` (seconds), those that measured it."""
    return [p.workloads[workload].steady_seconds for p in processes if workload in p.workloads]


def four_words(comparison: Comparison, threshold: float = THRESHOLD) -> str:
    """The comparison's verdict in the four words: slower, faster, the same (its 95% interval within the threshold
    both ways), or inconclusive (anything else: too few processes, or an interval that spans the threshold)."""
    if comparison.verdict == "regression":
        return SLOWER
    if comparison.verdict == "improvement":
        return FASTER
    low, high = comparison.ci_low, comparison.ci_high
    if math.isfinite(low) and math.isfinite(high) and 1 / (1 + threshold) <= low and high <= 1 + threshold:
        return SAME
    return INCONCLUSIVE


def settle_estimate(comparison: Comparison, threshold: float = THRESHOLD, most: int = 64) -> int:
    """About how many processes a side would settle an inconclusive comparison: the interval's width falls as one
    over the square root of the processes, until it fits within the threshold's band (or clears it); capped at
    ``most``; 0 for a settled one."""
    if four_words(comparison, threshold) != INCONCLUSIVE:
        return 0
    n = max(2, min(comparison.n_baseline, comparison.n_new))
    low, high = comparison.ci_low, comparison.ci_high
    if not (math.isfinite(low) and math.isfinite(high) and low > 0 and high > low):
        return max(5, 2 * n)  # no interval yet: the fewest processes a verdict can rest on, or twice as many
    width = math.log(high / low)
    center = abs(math.log(max(comparison.ratio, 1e-12)))
    band = math.log(1 + threshold)
    room = abs(band - center) or band / 4  # how far the interval's half-width must shrink to clear or fit
    need = math.ceil(n * (width / 2 / room) ** 2)
    return max(n + 1, min(most, need))


def compared(
    samples: Mapping[str, Mapping[str, Sequence[float]]],
    pairs: Iterable[tuple[str, str, str]],
    workloads: Sequence[str],
    threshold: float = THRESHOLD,
    alpha: float = ALPHA,
) -> list[Tracked]:
    """Each (release, baseline, against) pair compared on each workload's steady state (``samples``: by release,
    then workload, one value a process), with its verdict and, where inconclusive, the processes that would settle
    it."""
    out = []
    for release, baseline, against in pairs:
        for workload in workloads:
            a = list(samples.get(baseline, {}).get(workload, ()))
            b = list(samples.get(release, {}).get(workload, ()))
            comparison = compare(a, b, threshold, alpha)
            words = four_words(comparison, threshold)
            out.append(
                Tracked(workload, release, baseline, against, comparison, words, settle_estimate(comparison, threshold))
            )
    return out


def unsettled(comparisons: Iterable[Tracked]) -> list[Tracked]:
    return [c for c in comparisons if c.verdict == INCONCLUSIVE]


# --- the lines a call ends with ------------------------------------------------------------------------------------


def shown_ratio(c: Comparison) -> str:
    interval = f" ({c.ci_low:.3g}x to {c.ci_high:.3g}x)" if math.isfinite(c.ci_low) and math.isfinite(c.ci_high) else ""
    return f"x{c.ratio:.3g}{interval}, {c.n_baseline} and {c.n_new} processes"


def verdict_line(t: Tracked) -> str:
    """One comparison as a sentence: ``jax 0.7.1 is slower than 0.7.0 (the previous release) on scan: x4.58
    (3.98x to 10.2x), 6 and 6 processes``."""
    what = "the previous release" if t.against == "previous" else "the pinned release"
    said = {SLOWER: "is slower than", FASTER: "is faster than", SAME: "is the same as"}.get(t.verdict)
    if said is None:
        more = f"; about {t.settle} processes a side would settle it" if t.settle else ""
        return (
            f"jax {t.release} against {t.baseline} ({what}) on {t.workload}: inconclusive, "
            f"{shown_ratio(t.comparison)}{more}"
        )
    return f"jax {t.release} {said} {t.baseline} ({what}) on {t.workload}: {shown_ratio(t.comparison)}"


def closing_lines(comparisons: Sequence[Tracked]) -> list[str]:
    """The lines a call ends with: each comparison's verdict, slower first, then inconclusive, faster, the same
    (the first lines a reader sees name what fails the gate)."""
    order = {SLOWER: 0, INCONCLUSIVE: 1, FASTER: 2, SAME: 3}
    return [verdict_line(t) for t in sorted(comparisons, key=lambda t: order.get(t.verdict, 4))]


# --- the tidy frame --------------------------------------------------------------------------------------------


def frame_of(documents: Iterable[tuple[Path, TrackDocument]], folder: Path) -> pd.DataFrame:
    """Every tracked comparison of ``documents`` as one row (`FRAME_COLUMNS`), oldest call first."""
    rows = []
    for path, doc in documents:
        pythons = doc.settings.get("pythons") or {}
        explanations = doc.settings.get("explanations") or {}
        for t in doc.comparisons:
            c = t.comparison
            rows.append(
                {
                    "machine": doc.machine,
                    "workload": t.workload,
                    "release": t.release,
                    "python": str(pythons.get(t.release, "")) if isinstance(pythons, Mapping) else "",
                    "against": t.against,
                    "baseline": t.baseline,
                    "ratio": c.ratio,
                    "low": c.ci_low,
                    "high": c.ci_high,
                    "verdict": t.verdict,
                    "median_s": c.new_median,
                    "baseline_median_s": c.baseline_median,
                    "explanation": str(explanations.get(f"{t.baseline} {t.release} {t.workload}", ""))
                    if isinstance(explanations, Mapping)
                    else "",
                    "measured_at": doc.timestamp,
                    "folder": layout.shown(path.parent, folder),
                }
            )
    return pd.DataFrame(rows, columns=list(FRAME_COLUMNS))


def tracked_frame(folder: Path) -> pd.DataFrame:
    """Every tracked comparison under ``folder`` (its calls' ``track.json`` files) as one tidy frame, one row per
    release, baseline and workload (`FRAME_COLUMNS`)."""
    documents, _ = history(folder)
    return frame_of(documents, folder)
