"""The corpus's totals from its cases' scores and the tables a face shows. Pure."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import pandas as pd

from jaxmlp.measure.sweep.corpus import Case
from jaxmlp.results.schema.corpus import CaseScore
from jaxmlp.results.schema.trials import wilson
from jaxmlp.stats import SAME
from jaxmlp.units import interval, minutes, percent, ratio


def _tally(values: Sequence[bool | None]) -> tuple[int, int]:
    """How many of the values scored (not None) are true, and of how many."""
    scored = [v for v in values if v is not None]
    return sum(scored), len(scored)


def totals(scores: Sequence[CaseScore]) -> dict[str, Any]:
    """The corpus's total, then one a kind: passes over the cases each score applies to, trials and failures."""
    kinds = list(dict.fromkeys(s.case.kind for s in scores))
    return {
        "cases": len(scores),
        "failed": [s.case.name for s in scores if s.failed],
        "kinds": {k: kind_total([s for s in scores if s.case.kind == k]) for k in kinds},
    }


def kind_total(scores: Sequence[CaseScore]) -> dict[str, Any]:
    """The total of one kind's cases (`totals`)."""
    found = [s for s in scores if s.found]
    injected: dict[float, tuple[int, int]] = {}
    for s in scores:
        for factor, hits, trials in s.injected:
            before = injected.get(factor, (0, 0))
            injected[factor] = (before[0] + hits, before[1] + trials)
    return {
        "cases": len(scores),
        "found": _tally([s.found for s in scores]),
        "in_band": _tally([s.in_band for s in found]),
        "bands": sum(s.case.expect.ratio is not None for s in scores),
        "bisected": _tally([s.bisect_found for s in scores]),
        "explained": _tally([s.explained for s in found]),
        "clean": _tally([s.clean for s in scores]),
        "failed": [s.case.name for s in scores if s.failed],
        "injected": dict(sorted(injected.items())),
        "trialled": sum(bool(s.injected) for s in scores),
    }


def injected_rates(scores: Sequence[CaseScore]) -> dict[float, dict[str, Any]]:
    """Of each injected slowdown over every case: trials that found it, cases, and Wilson's 95% interval."""
    rates: dict[float, dict[str, Any]] = {}
    for s in scores:
        for factor, hits, trials in s.injected:
            rate = rates.setdefault(factor, {"found": 0, "trials": 0, "cases": 0})
            rate["found"] += hits
            rate["trials"] += trials
            rate["cases"] += 1
    for rate in rates.values():
        rate["low"], rate["high"] = wilson(rate["found"], rate["trials"])
    return dict(sorted(rates.items()))


def injected_line(scores: Sequence[CaseScore]) -> str:
    """Each injected slowdown's found rate over the cases trialled, with its 95% interval, in a line."""
    rates = injected_rates(scores)
    if not rates:
        return "Injected slowdowns: no case was trialled"
    said = "; ".join(
        f"{ratio(f)} found in {r['found']} of {r['trials']} trials over {r['cases']} case(s), "
        f"{percent(r['found'] / r['trials']) if r['trials'] else '-'} (95% interval "
        f"{percent(r['low'])}–{percent(r['high'])})"
        for f, r in rates.items()
    )
    unslowed = {bool(s.slowdown.unslowed_from) for s in scores if s.slowdown is not None}
    how = (
        "the unslowed group taken from each case's timeline, measured before the trials"
        if unslowed == {True}
        else "the unslowed group measured with them, one process of each group a round"
        if unslowed == {False}
        else "the unslowed group measured with them in some cases, taken from the timeline in others"
    )
    return f"Injected slowdowns, over the cases trialled: {said} ({how})"


def controls_line(scores: Sequence[CaseScore]) -> str:
    """How many controls were shown "the same", and the verdict of the others, in a line."""
    controls = [s for s in scores if s.case.is_control]
    if not controls:
        return "Controls: none in this run"
    words = Counter(s.verdict or "no verdict" for s in controls)
    others = ", ".join(f"{n} {w}" for w, n in words.items() if w != SAME)
    return f"Controls: {words.get(SAME, 0)} of {len(controls)} shown the same" + (f" ({others})" if others else "")


KIND_WORDS = {
    "step": "slower, and later releases stay so (step)",
    "transient": "slower, then undone by a later release (transient)",
    "flag": "slower, undone by an XLA flag (flag)",
    "failure": "a release fails on the workload (failure)",
    "compile": "compile time (compile)",
    "memory": "memory (memory)",
    "control": "nothing should be found (control)",
}
"""What each kind of case is, in words; a kind not here is shown by its name."""


def kind_line(kind: str, total: dict[str, Any]) -> str:
    """One kind's total in a line: each score over the cases it applies to, saying what it counts."""
    n = total["cases"]
    parts = []
    found, of = total["found"]
    if of:
        word = "failed first at the expected release" if kind == "failure" else "found"
        parts.append(f"{word} {found} of {of}")
    if total["bands"]:
        hit, scored = total["in_band"]
        parts.append(f"ratio in its band {hit} of the {scored} found ({total['bands']} with a band)")
    hit, scored = total["bisected"]
    if scored:
        parts.append(f"bisected {hit} of {scored}")
    hit, scored = total["explained"]
    if scored:
        parts.append(f"explained {hit} of the {scored} found that name a cause")
    hit, scored = total["clean"]
    if scored:
        parts.append(f"clean (shown the same) {hit} of {scored}")
    injected = total["injected"]
    if injected:
        said = ", ".join(f"{ratio(f)} in {h} of {t}" for f, (h, t) in injected.items())
        parts.append(f"injected slowdowns found: {said} trials ({total['trialled']} of {n} cases trialled)")
    else:
        parts.append("no injected-slowdown trials")
    if total["failed"]:
        parts.append(f"failed: {', '.join(total['failed'])}")
    return f"{KIND_WORDS.get(kind, kind)}, {n} case(s): {'; '.join(parts)}"


def kinds_table(scores: Sequence[CaseScore]) -> pd.DataFrame:
    """A row a kind: its cases and each score as N of M over what it applies to (blank where it applies to none)."""

    def of(pair: tuple[int, int]) -> str:
        return f"{pair[0]} of {pair[1]}" if pair[1] else ""

    rows = []
    for kind, t in totals(scores)["kinds"].items():
        injected = {f: f"{h} of {n}" for f, (h, n) in t["injected"].items()}
        rows.append(
            {
                "kind": kind,
                "cases": t["cases"],
                "found": of(t["found"]),
                "ratio in its band, of those found": of(t["in_band"]),
                "bisected": of(t["bisected"]),
                "explained, of those found": of(t["explained"]),
                "controls clean": of(t["clean"]),
                **{f"{ratio(f)} injected: trials found": v for f, v in injected.items()},
                "failed": ", ".join(t["failed"]),
            }
        )
    return pd.DataFrame(rows).fillna("")


def _expected(case: Case) -> str:
    """What a case expects in words: ``0.4.33 slower x14-x760``."""
    e = case.expect
    said = SAME if case.is_control else f"{e.release} {e.direction}"
    kept = f", still with {e.flag_kept}" if e.flag_kept else ""
    return said + (f" {ratio(e.ratio[0])}-{ratio(e.ratio[1])}" if e.ratio else "") + kept


def _mark(value: bool | None) -> str:
    return "-" if value is None else ("yes" if value else "NO")


def corpus_table(scores: Sequence[CaseScore]) -> pd.DataFrame:
    """A row a case: what was expected, what was flagged, and each score."""
    rows = []
    for s in scores:
        expected = _expected(s.case)
        measured = f"{ratio(s.ratio)} ({interval(s.ci_low, s.ci_high)})" if s.ratio is not None else "-"
        if s.ratio is not None and s.found and s.in_band is None:  # `_found`: a ratio that pools a bimodal release
            measured += ", pooling a bimodal release's two groups"
        rows.append(
            {
                "case": s.case.name,
                "kind": s.case.kind,
                "expected": expected,
                "found": _mark(s.found),
                "ratio": measured,
                "in band": _mark(s.in_band),
                "bisected": s.bisected or "-",
                "explained": f"{_mark(s.explained)} ({s.explanation})" if s.explanation else _mark(s.explained),
                "clean": _mark(s.clean),
                "injected: found in trials": ", ".join(f"{ratio(f)} {h} of {n}" for f, h, n in s.injected) or "-",
                "expected from": s.case.expect.said_by or "-",
                "processes x calls": f"{s.case.runs.processes} x {s.case.runs.calls}" if s.case.runs.processes else "-",
                "took": minutes(s.seconds),
                "failed": ("expected: " if s.expected_failure else "")
                + ("; ".join([*s.failures, *([s.error] if s.error else [])]) or "-"),
            }
        )
    return pd.DataFrame(rows)


def report_link(source: str) -> str:
    """A case's report as a Markdown link named like ``jax#25190`` (the address itself where it is no issue)."""
    parts = source.rstrip("/").split("/")
    if len(parts) >= 7 and parts[2] == "github.com" and parts[5] in ("issues", "pull", "discussions"):
        return f"[{parts[4]}#{parts[6]}]({source})"
    return source


def cases_table(scores: Sequence[CaseScore]) -> pd.DataFrame:
    """A row a case as a scored run holds it: its report, expectation and sources, what was found, its time."""
    rows = []
    for s in scores:
        expected = _expected(s.case)
        if s.case.is_control:
            seen = "clean" if s.clean else "not clean"
        elif s.ratio is not None:
            seen = f"{ratio(s.ratio)} ({interval(s.ci_low, s.ci_high)})"
        else:
            seen = "found" if s.found else "missed"
        rows.append(
            {
                "case": f"`{s.case.name}`",
                "kind": s.case.kind,
                "report": report_link(s.case.source),
                "releases": ", ".join(s.case.releases),
                "what the report says": s.case.summary,
                "expected": expected,
                "expected from": "; ".join(s.case.expect.origins) or "not said",
                "the scored run found": seen,
                "took": minutes(s.seconds),
            }
        )
    return pd.DataFrame(rows)
