"""Bisection, pure over a ``measure(releases) -> {release: samples}`` function (docs/questions/releases.md)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from jaxmlp.jsonio import Plain, to_json
from jaxmlp.registry import ALPHA, THRESHOLD
from jaxmlp.stats import INVALID, RESULTS_DIFFER, Comparison, compare, verdict_line
from jaxmlp.stats import WORDS as WORDS  # re-exported: the report reads it here too
from jaxmlp.units import interval, p_value, ratio


@dataclass(frozen=True)
class Step:
    """One release against an earlier one (``from_`` is the baseline)."""

    from_: str
    to: str
    comparison: Comparison

    def to_json(self) -> dict[str, Any]:
        return {"from": self.from_, "to": self.to, **self.comparison.to_json()}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Step:
        return cls(str(doc["from"]), str(doc["to"]), Comparison.from_json(doc))


@dataclass(frozen=True)
class BisectProbe(Plain):
    """One probe: the ends and their midpoint, each one's median, each neighbour pair compared, and what it decided."""

    number: int
    releases: tuple[str, ...]
    medians: Mapping[str, float]
    steps: tuple[Step, ...]
    ends: Step
    decision: str


@dataclass(frozen=True)
class Bisection(Plain):
    """Where a bisection ended: ``found``, ``fails`` (``first`` fails, ``after`` the last that runs), ``no change``,
    ``results differ`` or ``inconclusive`` (``reason`` says why)."""

    candidates: tuple[str, ...]  # the good end, the releases between, the bad end
    status: str
    direction: str | None  # "regression" or "improvement"
    probes: tuple[BisectProbe, ...]
    reason: str = ""
    first: str | None = None
    after: str | None = None
    comparison: Comparison | None = None
    failure: str = ""
    checked: Mapping[str, str] = field(default_factory=dict)

    @property
    def answered(self) -> bool:
        """Whether it names a release: the first that changed, or the first that fails."""
        return self.status in ("found", "fails") and self.first is not None

    @property
    def measured(self) -> tuple[str, ...]:
        """The distinct releases the probes measured, oldest first."""
        seen = {r for p in self.probes for r in p.releases}
        return tuple(r for r in self.candidates if r in seen)

    def to_json(self) -> dict[str, Any]:  # the reason before the probes, and the releases measured, as written
        doc = to_json(self)
        probes, failure, checked = doc.pop("probes"), doc.pop("failure"), doc.pop("checked")
        return {**doc, "probes": probes, "measured": list(self.measured), "failure": failure, "checked": checked}


def expected_releases(k: int) -> int:
    """How many releases a bisection over ``k`` releases between the ends measures when every probe is conclusive."""
    return 2 + math.ceil(math.log2(k + 1)) if k else 2


def no_change_line(good: str, bad: str, c: Comparison) -> str:
    """What a bisection whose ends agree answers: no change found, the ends' verdict, and why none between is shown."""
    return (
        f"no change found between {good} and {bad} ({bad} against {good}: {verdict_line(c)}): "
        "nothing to bisect. Bisection assumes a monotone history: a release that got slower and was fixed before "
        f"{bad} is invisible to it; `jaxmlp sweep timeline {good} {bad}` measures every release between and shows "
        "transients"
    )


def answer_line(b: Bisection) -> str:
    """The bisection's last line: its answer, or why there is none."""
    if b.status == "found" and b.comparison is not None:
        c = b.comparison
        p = c.p_slower if b.direction == "regression" else c.p_faster
        return (
            f"first {WORDS[b.direction or '']} release: {b.first} (ratio {ratio(c.ratio)}, 95% interval "
            f"{interval(c.ci_low, c.ci_high)}, p {p_value(p)}) after {b.after}"
        )
    if b.status == "fails":
        return f"first release that fails: {b.first} ({b.failure}); the last that runs: {b.after}"
    return b.reason


RUNS = "runs"
"""What `Bisection.checked` says of a release whose probe ran."""


def checked_line(b: Bisection) -> str:
    """The releases a search for the first that fails checked, in order, and what each did ("" if none)."""
    said = [f"{r} {'runs' if b.checked[r] == RUNS else 'fails'}" for r in b.candidates if r in b.checked]
    return f"checked for the failure, oldest of the range first: {', '.join(said)}" if said else ""


def probes_line(b: Bisection) -> str:
    """How far the probes went: the releases measured in them, and the probe that met a failure."""
    met = f"probe {len(b.probes) + 1} met the failure at its probe processes; no rounds"
    if b.status == "fails" and not b.probes:
        return met
    line = f"{len(b.measured)} of {len(b.candidates)} releases measured in {len(b.probes)} probe(s)"
    if b.status == RESULTS_DIFFER:
        return f"{line}; probe {len(b.probes) + 1}'s releases computed different values: not compared on time"
    return f"{line}; {met}" if b.status == "fails" else line


class ReleasesFailed(Exception):
    """Raised by a bisection's ``measure``: releases of the probe that failed (``failed``: each one's line)."""

    def __init__(self, failed: Mapping[str, str]) -> None:
        super().__init__("; ".join(f"{r} ({why})" for r, why in failed.items()))
        self.failed = dict(failed)


class ResultsDiffer(Exception):
    """Raised by a bisection's ``measure`` where releases'
    values of ``workload`` differ (``pairs``: why): no verdict."""

    def __init__(self, workload: str, pairs: Mapping[tuple[str, str], str]) -> None:
        said = "; ".join(f"{b} on {workload}: {why}" for (_, b), why in pairs.items())
        super().__init__(
            f"{RESULTS_DIFFER}: {said}: not compared on time, so not bisected (a larger --tolerance accepts the "
            "difference)"
        )
        self.pairs = dict(pairs)


def first_failing(
    candidates: Sequence[str], ran: str, failed: str, failure: str, fails: Callable[[str], str]
) -> tuple[str, str, str, dict[str, str]]:
    """The first release between ``ran`` and ``failed`` that
    fails, by midpoints, the last that runs and each checked."""
    lo, hi = candidates.index(ran), candidates.index(failed)
    checked = {ran: RUNS, failed: failure}
    while hi - lo > 1:
        mid = (lo + hi) // 2
        why = fails(candidates[mid])
        checked[candidates[mid]] = why or RUNS
        lo, hi, failure = (lo, mid, why) if why else (mid, hi, failure)
    return candidates[hi], candidates[lo], failure, checked


@dataclass(frozen=True)
class _Judged:
    """What one probe decided: its line, and the half it keeps (``left``) or how the bisection ends."""

    decision: str
    left: bool = False
    status: str = ""
    reason: str = ""
    step: Step | None = None


def _compared(
    names: Sequence[str], samples: Mapping[str, Sequence[float]], threshold: float, alpha: float
) -> tuple[tuple[Step, ...], Step, dict[str, float]]:
    """A probe's neighbour steps, its ends' step and each release's median."""
    steps = tuple(Step(a, b, compare(samples[a], samples[b], threshold, alpha)) for a, b in zip(names, names[1:]))
    ends = Step(names[0], names[-1], compare(samples[names[0]], samples[names[-1]], threshold, alpha))
    return steps, ends, {name: statistics.median(samples[name]) for name in names}


def _no_change(names: Sequence[str], c: Comparison, alpha: float) -> _Judged:
    """The first probe, whose ends show no change: no change, or inconclusive and why."""
    good, bad = names[0], names[-1]
    decision = "no change between the ends"
    if c.verdict == INVALID:
        why = f"inconclusive: {c.describe()} between {good} and {bad}: a time that is not a number; rerun"
        return _Judged(decision, status="inconclusive", reason=why)
    if c.verdict == "insufficient data":
        why = f"too few processes for p < {alpha} between {good} and {bad} ({c.n_baseline} and {c.n_new})"
        return _Judged(decision, status="inconclusive", reason=f"inconclusive: {why}: give more --processes")
    return _Judged(decision, status="no change", reason=no_change_line(good, bad, c))


def _adjacent(ends: Step, direction: str) -> _Judged:
    """A probe of two neighbouring releases: the change found between them, or no longer shown."""
    word, verdict = WORDS[direction], ends.comparison.verdict
    if verdict == direction:
        return _Judged(f"{ends.to} is {word} than {ends.from_}", status="found", step=ends)
    why = f"inconclusive: {ends.to} against {ends.from_} no longer {word} ({verdict}); stopping rather than guessing"
    return _Judged("the change did not show again", status="inconclusive", reason=why)


def _halves(steps: tuple[Step, ...], direction: str, number: int, last: tuple[bool, bool]) -> _Judged:
    """A probe of the ends and midpoint: the half that holds the change, or inconclusive where both or neither do."""
    word, (left, right) = WORDS[direction], steps
    in_left, in_right = (s.comparison.verdict == direction for s in steps)
    if in_left == in_right:
        where = "both halves" if in_left else "neither half"
        why = (
            f"inconclusive: probe {number} finds the change in {where} ({left.from_}→{left.to} "
            f"{left.comparison.verdict}, {right.from_}→{right.to} {right.comparison.verdict}); stopping rather than "
            "guessing"
        )
        return _Judged(f"inconclusive: {word} in {where}", status="inconclusive", reason=why)
    kept = left if in_left else right
    found = last[0] if in_left else last[1]
    return _Judged(f"{word} between {kept.from_} and {kept.to}", in_left, "found" if found else "", step=kept)


def _failing(
    candidates: Sequence[str], names: Sequence[str], e: ReleasesFailed, fails: Callable[[str], str] | None
) -> tuple[str, str, str, dict[str, str]] | None:
    """Where a probe's releases failed, by `first_failing`; None where none of the probe is known to run."""
    failed = next((n for n in names if n in e.failed), None)
    ran = [n for n in names[: names.index(failed)] if n not in e.failed] if failed else []
    if fails is None or failed is None or not ran:
        return None
    first, after, failure, checked = first_failing(candidates, ran[-1], failed, e.failed[failed], fails)
    return first, after, failure, {**{n: e.failed.get(n, RUNS) for n in names}, **checked}  # the probe's too


def bisect(
    candidates: Sequence[str],
    measure: Callable[[list[str]], Mapping[str, Sequence[float]]],
    threshold: float = THRESHOLD,
    alpha: float = ALPHA,
    progress: Callable[[BisectProbe], None] | None = None,
    fails: Callable[[str], str] | None = None,
) -> Bisection:
    """Bisect ``candidates`` (the good end first, the bad end last); releases that fail (`ReleasesFailed`) are searched
    with ``fails``, and releases whose values differ (`ResultsDiffer`) end it as ``results differ``."""
    if len(candidates) < 2:
        raise ValueError("a bisection needs two different releases")
    lo, hi = 0, len(candidates) - 1
    direction: str | None = None
    probes: list[BisectProbe] = []
    while True:
        mid = (lo + hi) // 2  # the low end itself where the ends are neighbours
        names = [candidates[i] for i in dict.fromkeys((lo, mid, hi))]
        try:
            samples = measure(names)
        except ReleasesFailed as e:
            found = _failing(candidates, names, e, fails)
            if found is None:  # the good end fails too: no release known to run
                raise
            first, after, failure, checked = found
            return Bisection(tuple(candidates), "fails", None, tuple(probes), "", first, after, None, failure, checked)
        except ResultsDiffer as e:
            return _ended(candidates, direction, probes, _Judged("", status=RESULTS_DIFFER, reason=str(e)))
        steps, ends, medians = _compared(names, samples, threshold, alpha)
        direction = direction or (ends.comparison.verdict if ends.comparison.verdict in WORDS else None)
        if direction is None:  # the first probe: no change between the ends
            judged = _no_change(names, ends.comparison, alpha)
        elif len(names) == 2:  # the ends are adjacent releases
            judged = _adjacent(ends, direction)
        else:
            judged = _halves(steps, direction, len(probes) + 1, (mid - lo == 1, hi - mid == 1))
        probes.append(BisectProbe(len(probes) + 1, tuple(names), medians, steps, ends, judged.decision))
        if progress is not None:
            progress(probes[-1])
        if judged.status:
            return _ended(candidates, direction, probes, judged)
        lo, hi = (lo, mid) if judged.left else (mid, hi)


def _ended(
    candidates: Sequence[str], direction: str | None, probes: Sequence[BisectProbe], judged: _Judged
) -> Bisection:
    """The bisection as the probe that ends it decided."""
    step = judged.step
    first, after, comparison = (step.to, step.from_, step.comparison) if step else (None, None, None)
    return Bisection(
        tuple(candidates), judged.status, direction, tuple(probes), judged.reason, first, after, comparison
    )
