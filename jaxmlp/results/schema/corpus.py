"""`jaxmlp sweep corpus`'s scorecard (``scorecard.json``): whether the suite found each known regression."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from jaxmlp.jsonio import Plain
from jaxmlp.measure.sweep.corpus import Case
from jaxmlp.measure.sweep.slowdown import SlowdownTrials
from jaxmlp.results.schema.common import CORPUS, ResultFile
from jaxmlp.results.schema.fields import LIST, NUMBER, OBJECT, record, scalars, typed
from jaxmlp.results.schema.fields import field as checked


@dataclass(frozen=True)
class CaseScore(Plain):
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


@dataclass(frozen=True)
class CorpusDocument(ResultFile, kind=CORPUS):
    """A corpus run: its settings, each case's score, its seconds and the disk it took."""

    metadata: Mapping[str, Any]
    settings: Mapping[str, Any]
    scores: tuple[CaseScore, ...]
    seconds: float
    disk: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> CorpusDocument:
        """The scorecard, each field checked (`record`): its settings' and disk's numbers too."""
        settings = scalars(checked(doc, "settings", "", OBJECT), "settings", {"detector": OBJECT, "cases": LIST})
        for key in ("processes", "limit", "epochs", "calls", "timeout"):
            typed(settings.get(key), f"settings.{key}", NUMBER, null=True)
        for key, value in scalars(settings.get("detector") or {}, "settings.detector").items():
            typed(value, f"settings.detector.{key}", NUMBER)
        disk = scalars(checked(doc, "disk", "", OBJECT), "disk")
        for key in ("envs", "envs_bytes", "envs_root_bytes", "results_bytes"):
            typed(disk.get(key), f"disk.{key}", NUMBER, null=True)
        return record(cls, doc)
