"""`jaxmlp sweep corpus`'s scorecard (``scorecard.json``): whether the suite found each known regression."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from jaxmlp import jsonio
from jaxmlp.measure.sweep.corpus import Case
from jaxmlp.measure.sweep.slowdown import SlowdownTrials
from jaxmlp.results.schema.common import CORPUS, JSON, header
from jaxmlp.results.schema.fields import FLAG, LIST, NUMBER, OBJECT, TEXT, scalars, typed, wrong
from jaxmlp.results.schema.fields import field as checked


@dataclass(frozen=True)
class CaseScore:
    """One case scored: what the timeline flagged, whether the expected change was found (None: not scored, ``why``
    says) and within the band, the bisection's and explanation's answers, failures, folders, seconds, its
    injected-slowdown trials and a control's verdict."""

    case: Case
    flagged: tuple[str, ...] = ()
    found: bool | None = None
    direction: str | None = None
    ratio: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    in_band: bool | None = None
    bisected: str | None = None
    bisect_found: bool | None = None
    explanation: str | None = None
    explained: bool | None = None
    clean: bool | None = None
    failures: tuple[str, ...] = ()
    error: str = ""
    why: tuple[str, ...] = ()
    folders: tuple[str, ...] = ()
    seconds: float = 0.0
    expected_failure: bool = False  # its failures are what the case expects (a `failure` case found)
    verdict: str | None = None
    slowdown: SlowdownTrials | None = None  # slowdown and injected last in its JSON form, as files hold them
    injected: tuple[tuple[float, int, int], ...] = ()

    @property
    def failed(self) -> bool:
        """Whether the case failed: a release failed or hung that it does not expect to, or its command raised."""
        return bool(self.error) or (bool(self.failures) and not self.expected_failure)

    def to_json(self) -> JSON:
        return jsonio.to_json(self)

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], where: str) -> CaseScore:
        def maybe(key: str, wanted: str) -> Any:
            return checked(doc, key, where, wanted, null=True)

        def texts(key: str) -> tuple[str, ...]:
            return tuple(str(x) for x in checked(doc, key, where, LIST))

        return cls(
            _case(checked(doc, "case", where, OBJECT), f"{where}case."),
            texts("flagged"),
            maybe("found", FLAG),
            maybe("direction", TEXT),
            maybe("ratio", NUMBER),
            maybe("ci_low", NUMBER),
            maybe("ci_high", NUMBER),
            maybe("in_band", FLAG),
            maybe("bisected", TEXT),
            maybe("bisect_found", FLAG),
            maybe("explanation", TEXT),
            maybe("explained", FLAG),
            maybe("clean", FLAG),
            texts("failures"),
            str(checked(doc, "error", where, TEXT)),
            texts("why"),
            texts("folders"),
            float(checked(doc, "seconds", where, NUMBER)),
            bool(doc.get("expected_failure", False)),
            typed(doc.get("verdict"), f"{where}verdict", TEXT, null=True),
            _slowdown(doc.get("slowdown"), f"{where}slowdown."),
            tuple((float(f), int(n), int(m)) for f, n, m in doc.get("injected") or ()),
        )


def _slowdown(doc: Any, where: str) -> SlowdownTrials | None:
    """A case's injected-slowdown trials as the scorecard holds them (None: none ran; older scorecards)."""
    if doc is None:
        return None
    typed(doc, where.rstrip("."), OBJECT)
    checked(doc, "release", where, TEXT)
    for key in ("processes", "calls"):
        checked(doc, key, where, NUMBER)
    if "unslowed_from" in doc:
        checked(doc, "unslowed_from", where, TEXT)
    for i, trial in enumerate(checked(doc, "values", where, LIST)):
        for k, v in typed(trial, f"{where}values[{i}]", OBJECT).items():
            for x in typed(v, f"{where}values[{i}].{k}", LIST):
                typed(x, f"{where}values[{i}].{k}[]", NUMBER)
    return SlowdownTrials.from_json(doc)


def _case(doc: Mapping[str, Any], where: str) -> Case:
    """A case as the scorecard holds it, each field of its type (`Case.from_json` then reads it)."""
    for key in ("name", "workload", "kind", "metric"):
        checked(doc, key, where, TEXT)
    for key in ("source", "summary"):
        checked(doc, key, where, TEXT, null=True)
    for i, v in enumerate(checked(doc, "releases", where, LIST)):
        typed(v, f"{where}releases[{i}]", TEXT)
    for i, v in enumerate(checked(doc, "bisect", where, LIST, null=True) or ()):
        typed(v, f"{where}bisect[{i}]", TEXT)
    expect = checked(doc, "expect", where, OBJECT)
    inner = f"{where}expect."
    checked(expect, "direction", inner, TEXT)
    for key in ("release", "cause", "flag"):
        checked(expect, key, inner, TEXT, null=True)
    if "flag_undoes" in expect:
        checked(expect, "flag_undoes", inner, FLAG)
    band = checked(expect, "ratio", inner, LIST, null=True) or ()
    if band and len(band) != 2:
        raise wrong(f"{inner}ratio", band, "a list of two numbers")
    for i, v in enumerate(band):
        typed(v, f"{inner}ratio[{i}]", NUMBER)
    for i, v in enumerate((checked(expect, "origins", inner, LIST, null=True) or ()) if "origins" in expect else ()):
        typed(v, f"{inner}origins[{i}]", TEXT)
    for key, value in ((checked(doc, "runs", where, OBJECT, null=True) or {}) if "runs" in doc else {}).items():
        typed(value, f"{where}runs.{key}", NUMBER, null=True)
    return Case.from_json(doc)


@dataclass(frozen=True)
class CorpusDocument:
    """A corpus run: its settings, each case's score, its seconds and the disk it took."""

    metadata: Mapping[str, Any]
    settings: Mapping[str, Any]
    scores: tuple[CaseScore, ...]
    seconds: float
    disk: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> JSON:
        return {**header(CORPUS), **jsonio.to_json(self)}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> CorpusDocument:
        rows = checked(doc, "scores", "", LIST)
        settings = dict(checked(doc, "settings", "", OBJECT))
        scalars(settings, "settings", {"detector": OBJECT, "cases": LIST})
        scalars(settings.get("detector") or {}, "settings.detector")
        for key in ("processes", "limit", "epochs", "calls", "timeout"):
            typed(settings.get(key), f"settings.{key}", NUMBER, null=True)
        for key, value in (settings.get("detector") or {}).items():
            typed(value, f"settings.detector.{key}", NUMBER)
        disk = dict(checked(doc, "disk", "", OBJECT))
        scalars(disk, "disk")
        for key in ("envs", "envs_bytes", "envs_root_bytes", "results_bytes"):
            typed(disk.get(key), f"disk.{key}", NUMBER, null=True)
        return cls(
            dict(checked(doc, "metadata", "", OBJECT)),
            settings,
            tuple(CaseScore.from_json(typed(r, f"scores[{i}]", OBJECT), f"scores[{i}].") for i, r in enumerate(rows)),
            float(checked(doc, "seconds", "", NUMBER)),
            disk,
        )
