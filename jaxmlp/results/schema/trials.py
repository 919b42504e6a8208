"""`jaxmlp sweep trials`: how often the regression detector caught a known slowdown, and how often it cried wolf."""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jaxmlp.measure.sweep.settings import Detector, Measuring, Trials
from jaxmlp.measure.sweep.trials import Trial
from jaxmlp.results.schema.common import JSON, TRIALS, header

FLAGGED = ("regression", "improvement")


@dataclass(frozen=True)
class TrialSettings:
    """What the trials were run with (as stored)."""

    workload: str
    processes_per_side: int
    trials: int
    inject_slowdown: float
    threshold: float
    alpha: float
    limit: int | None
    epochs: int
    dataset: str

    @classmethod
    def of(cls, settings: Trials, measuring: Measuring, detector: Detector) -> TrialSettings:
        """What a command's settings store."""
        return cls(
            workload=measuring.names[0],
            processes_per_side=settings.processes,
            trials=settings.trials,
            inject_slowdown=settings.inject_slowdown,
            threshold=detector.threshold,
            alpha=detector.alpha,
            limit=measuring.limit,
            epochs=measuring.epochs,
            dataset=measuring.dataset,
        )


@dataclass(frozen=True)
class TrialsDocument:
    metadata: Mapping[str, Any]
    settings: TrialSettings
    trials: tuple[Trial, ...]

    @property
    def injected_flagged(self) -> int:
        return sum(t.injected.verdict == "regression" for t in self.trials)

    @property
    def aa_flagged(self) -> int:
        return sum(t.aa.verdict in FLAGGED for t in self.trials)

    def median_ratio(self, side: str) -> float:
        """The median ratio of medians of the trials' ``injected`` or ``aa`` comparisons."""
        return float(statistics.median(getattr(t, side).ratio for t in self.trials))

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> TrialsDocument:
        trials = tuple(Trial.from_json(t) for t in doc["trials"])
        return cls(dict(doc["metadata"]), TrialSettings(**doc["settings"]), trials)

    def to_json(self) -> JSON:
        return {
            **header(TRIALS),
            "metadata": dict(self.metadata),
            "settings": vars(self.settings).copy(),
            "injected_flagged": self.injected_flagged,
            "aa_flagged": self.aa_flagged,
            "trials": [t.to_json() for t in self.trials],
        }
