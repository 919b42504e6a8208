"""What tracking found, in words: each tracked comparison as one sentence, as the site and the message say it."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from jaxmlp import registry, units
from jaxmlp.stats import FASTER, INCONCLUSIVE, RESULTS_DIFFER, SAME, SLOWER

PINNED = "pinned"
PREVIOUS = "previous"
AGAINST = {PINNED: "pinned", PREVIOUS: "tracked before it"}
"""How a baseline is named after its release: ``0.7.0 (pinned)``."""
VERDICTS = (SLOWER, FASTER, SAME, INCONCLUSIVE)
Row = Mapping[Any, Any]
"""A row of the frame, as a mapping of its columns."""
CHANGED = (SLOWER, FASTER, INCONCLUSIVE, RESULTS_DIFFER)
"""The verdicts a message names: "the same" was shown to be no change."""


def _number(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def release_order(releases: Any) -> list[str]:
    """Releases once each, oldest first by their numbers (0.4.30 < 0.10.2; a nightly before its release)."""
    return sorted({str(r) for r in releases}, key=registry.version_key)


def in_order(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame``'s rows by machine, workload, release (version order) and baseline (pinned first)."""
    if frame.empty:
        return frame
    key = frame.assign(
        _release=frame["release"].map(lambda r: registry.version_key(str(r))),
        _against=frame["against"].map(lambda a: (a != PINNED, str(a))),
    )
    return key.sort_values(["machine", "workload", "_release", "_against"]).drop(columns=["_release", "_against"])


def series(frame: pd.DataFrame) -> dict[tuple[str, str], pd.DataFrame]:
    """Each (machine, workload)'s rows in version order, machines and workloads by name."""
    ordered = in_order(frame)
    return {(str(m), str(w)): part for (m, w), part in ordered.groupby(["machine", "workload"], sort=True)}


def newest(rows: pd.DataFrame, against: str = PINNED) -> Row | None:
    """The newest release's row against ``against`` among ``rows`` (one machine and workload), or None."""
    mine = rows[rows["against"] == against]
    if mine.empty:
        return None
    at = max(mine.index, key=lambda i: registry.version_key(str(mine.at[i, "release"])))
    row: dict[Any, Any] = mine.loc[at].to_dict()
    return row


def when(measured_at: object) -> str:
    """A time of measurement as read (``2026-12-01 02:10 UTC``); as given where it is not ISO-8601."""
    import datetime as dt

    try:
        stamp = dt.datetime.fromisoformat(str(measured_at))
    except ValueError:
        return str(measured_at)
    if stamp.tzinfo is not None:
        stamp = stamp.astimezone(dt.UTC)
    return stamp.strftime("%Y-%m-%d %H:%M UTC")


def within(threshold: float) -> str:
    """The threshold both ways, as said: ``±5%``."""
    return f"±{100 * threshold:g}%"


def band(row: Row, threshold: float = registry.THRESHOLD) -> float:
    """The ± band a row's verdict was given with (its call's ``--threshold``), else ``threshold``."""
    given = _number(row.get("threshold"))
    return given if math.isfinite(given) and given > 0 else threshold


def rows_band(rows: pd.DataFrame, threshold: float = registry.THRESHOLD) -> float:
    """The ± band of ``rows``' verdicts: the newest call's, else ``threshold``."""
    if rows.empty or "threshold" not in rows:
        return threshold
    return band(rows.sort_values("measured_at").iloc[-1].to_dict(), threshold)


def bands(rows: pd.DataFrame, threshold: float = registry.THRESHOLD) -> str:
    """The ± bands ``rows``' verdicts were given with, as said: ``±5%``; ``±2% and ±5%`` where calls differed."""
    found = sorted({band(r, threshold) for r in rows.to_dict("records")}) or [threshold]
    return " and ".join(within(b) for b in found)


def baseline_name(row: Row) -> str:
    """The release a row is compared with, as said: ``0.7.0 (pinned)``."""
    return f"{row['baseline']} ({AGAINST.get(str(row['against']), str(row['against']))})"


def measured(row: Row) -> str:
    """The ratio and its 95% interval: ``×1.21 (95% interval ×1.15–×1.28)``."""
    return f"{units.ratio(row['ratio'])} (95% interval {units.interval(row['low'], row['high'])})"


def settle(row: Row, threshold: float = registry.THRESHOLD) -> str:
    """What an inconclusive comparison lacks, and about how many processes a side would settle it."""
    low, high = _number(row.get("low")), _number(row.get("high"))
    wide = f" ({units.percent(high / low - 1)} wide)" if low > 0 and high > 0 else ""
    more, said = _number(row.get("settle")), row.get("settle_words")
    then = (
        str(said)
        if isinstance(said, str) and said
        else f"about {units.count(math.ceil(more), 'process', 'processes')} a side would settle it"
        if math.isfinite(more) and more > 0
        else "more processes (a longer `--budget`) would settle it"
    )
    return f"its 95% interval{wide} still spans {within(band(row, threshold))}: {then}"


def sentence(row: Row, threshold: float = registry.THRESHOLD) -> str:
    """One comparison as said everywhere (``0.7.2 is the same as 0.7.0 (pinned) within ±5%: ×1.01 ...``)."""
    release, base, verdict = row["release"], baseline_name(row), str(row["verdict"])
    medians = f"{units.duration(row['median_s'])} against {units.duration(row['baseline_median_s'])}"
    if verdict == SAME:
        return f"{release} is the same as {base} within {within(band(row, threshold))}: {measured(row)}"
    if verdict in (SLOWER, FASTER):
        return f"{release} is {verdict} than {base}: {measured(row)}, {medians}"
    if verdict == INCONCLUSIVE:
        return f"{release} against {base} is inconclusive: {measured(row)}; {settle(row, threshold)}"
    if verdict == RESULTS_DIFFER:
        return f"{release} against {base}: results differ, so not compared on time"
    return f"{release} against {base}: {verdict}, {measured(row)}"


def short_sentence(row: Row, threshold: float = registry.THRESHOLD) -> str:
    """A comparison in one short line, for a message, without what would settle it."""
    release, base, verdict = row["release"], baseline_name(row), str(row["verdict"])
    if verdict == SAME:
        return f"{release} is the same as {base} within {within(band(row, threshold))}: {measured(row)}"
    if verdict in (SLOWER, FASTER):
        return f"{release} is {verdict} than {base}: {measured(row)}"
    return f"{release} against {base} is {verdict}: {measured(row)}"


ANSWER_ORDER = {SLOWER: 0, INCONCLUSIVE: 1, SAME: 2, FASTER: 3}
"""The order a page answers in: what fails the gate first, then what is not shown yet, then what is safe."""
HEAD = {SLOWER: "No", INCONCLUSIVE: "Not shown yet", SAME: "Yes", FASTER: "Yes"}


def answer_row(rows: pd.DataFrame) -> Row | None:
    """The comparison a series' question is answered by: its newest release against the pinned one."""
    return newest(rows, PINNED) or newest(rows, PREVIOUS)


def question(row: Row, workload: str, threshold: float = registry.THRESHOLD) -> str:
    """A series' question and answer in one line (``Is 0.7.1 safe to take? No: ...``)."""
    verdict = str(row["verdict"])
    said = f"the same within {within(band(row, threshold))}" if verdict == SAME else verdict
    return (
        f"Is {row['release']} safe to take? {HEAD.get(verdict, 'Not shown yet')}: {said} on {workload} against "
        f"{baseline_name(row)}, {units.ratio(row['ratio'])}"
    )


def answered_first(found: Mapping[tuple[str, str], pd.DataFrame]) -> list[tuple[str, str]]:
    """The series of ``found`` in the order a page answers them (`ANSWER_ORDER`)."""

    def key(k: tuple[str, str]) -> tuple[str, int, str]:
        row = answer_row(found[k])
        return k[0], ANSWER_ORDER.get(str(row["verdict"]) if row else "", 4), k[1]

    return sorted(found, key=key)


def same_comparison(a: Row | None, b: Row | None) -> bool:
    """Whether two rows are one comparison (a pinned release that was also the one tracked before: shown once)."""
    return a is not None and b is not None and all(a.get(k) == b.get(k) for k in ("folder", "release", "baseline"))


def once(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` against the release tracked before, less those that are also against the pinned one (shown there)."""
    pinned = rows[rows["against"] == PINNED]
    keys = set(zip(pinned["folder"].astype(str), pinned["release"].astype(str), pinned["baseline"].astype(str)))
    previous = rows[rows["against"] == PREVIOUS]
    mine = zip(previous["folder"].astype(str), previous["release"].astype(str), previous["baseline"].astype(str))
    return previous[[k not in keys for k in mine]]


def why_none(row: Row, threshold: float = registry.THRESHOLD) -> str:
    """Why a comparison has no explanation: the one recorded, else that it shows no change to explain."""
    verdict = str(row.get("verdict"))
    recorded = row.get("unexplained")
    if verdict in (SLOWER, FASTER):
        return str(recorded) if isinstance(recorded, str) and recorded else "none recorded for this change"
    if verdict == INCONCLUSIVE:
        return f"none: no change shown to explain; {settle(row, threshold)}"
    return "none: no change to explain"


INDEX = "index.html"
EXPLANATIONS = "explanations"
"""The site's first page, and its folder of explanation pages."""


def page_name(machine: str, workload: str, taken: Sequence[str] = ()) -> str:
    """A series' page in the site, ``<machine>--<workload>.html``, numbered where two would share one."""
    stem = "--".join(re.sub(r"[^A-Za-z0-9._]+", "-", part).strip("-.") or "_" for part in (machine, workload))
    name, n = f"{stem}.html", 2
    while name in taken or name == INDEX:
        name, n = f"{stem}-{n}.html", n + 1
    return name


def page_names(frame: pd.DataFrame) -> dict[tuple[str, str], str]:
    """Each (machine, workload)'s page in the site of ``frame``: the site and the message link the same names."""
    pages: dict[tuple[str, str], str] = {}
    for key in series(frame):
        pages[key] = page_name(*key, taken=list(pages.values()))
    return pages


def explanation_page(folder: str) -> str:
    """An explanation's page in the site, from its folder in the results folder (``explanations/<folder>.html``)."""
    return f"{EXPLANATIONS}/{re.sub(r'[^A-Za-z0-9._]+', '-', folder.rstrip('/')).strip('-.') or '_'}.html"


def python_changes(rows: pd.DataFrame) -> list[tuple[str, str]]:
    """Where a series' Python changed: (the first release on the new one, its Python), in version order."""
    if rows.empty or "python" not in rows:
        return []
    ordered = in_order(rows[rows["python"].astype(str).str.strip() != ""]).drop_duplicates("release")
    pairs = list(zip(ordered["release"].astype(str), ordered["python"].astype(str)))
    return [(release, python) for (_, before), (release, python) in zip(pairs, pairs[1:]) if python != before]


def python_note(rows: pd.DataFrame) -> str:
    """The Python the series ran on, or each where it changed (a change of its own)."""
    if rows.empty or "python" not in rows:
        return ""
    ordered = in_order(rows[rows["python"].astype(str).str.strip() != ""])
    steps: list[tuple[str, str]] = []  # (python, last release on it)
    for release, python in zip(ordered["release"], ordered["python"]):
        if steps and steps[-1][0] == str(python):
            steps[-1] = (steps[-1][0], str(release))
        else:
            steps.append((str(python), str(release)))
    if not steps:
        return "Python not recorded"
    if len(steps) == 1:
        return f"Python {steps[0][0]}"
    parts = [f"{python} to {last}" for python, last in steps[:-1]] + [f"then {steps[-1][0]}"]
    return "Python " + ", ".join(parts)
