"""`jaxmlp sweep trials`: how often the regression detector caught a known slowdown, and how often it cried wolf."""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jaxmlp.measure.sweep.settings import Detector, Measuring, Trials
from jaxmlp.measure.sweep.trials import Trial
from jaxmlp.results.schema.common import JSON, TRIALS, ResultFile, header

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
    noise: str = "none"
    budget_minutes: float | None = None  # processes added while it lasted; None: a fixed count a side (older files)

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
            noise=settings.noise,
            budget_minutes=settings.budget,
        )


def wilson(found: int, of: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson's 95% interval of a rate ``found`` in ``of`` (NaN, NaN where ``of`` is 0)."""
    if of == 0:
        return math.nan, math.nan
    p = found / of
    centre = (p + z * z / (2 * of)) / (1 + z * z / of)
    half = z * math.sqrt(p * (1 - p) / of + z * z / (4 * of * of)) / (1 + z * z / of)
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class TrialsDocument(ResultFile, kind=TRIALS):
    metadata: Mapping[str, Any]
    settings: TrialSettings
    trials: tuple[Trial, ...]

    @property
    def injected_flagged(self) -> int:
        return sum(t.injected.verdict == "regression" for t in self.trials)

    @property
    def aa_flagged(self) -> int:
        return sum(t.aa.verdict in FLAGGED for t in self.trials)

    def rates(self) -> dict[str, dict[str, float]]:
        """The found rates with their 95% intervals (Wilson's): the injected slowdown called slower, A/A called the
        same and called slower; each ``found``, ``of``, ``low``, ``high``."""
        n = len(self.trials)
        counts = {
            "injected_slower": sum(t.injected.word == "slower" for t in self.trials),
            "aa_same": sum(t.aa.word == "the same" for t in self.trials),
            "aa_slower": sum(t.aa.word == "slower" for t in self.trials),
        }
        return {k: {"found": k_, "of": n, **dict(zip(("low", "high"), wilson(k_, n)))} for k, k_ in counts.items()}

    def seconds(self, side: str) -> list[float]:
        """Each trial's seconds until its ``aa`` or ``injected`` comparison settled or the trial ended ([] in older
        files)."""
        return [t.seconds[side] for t in self.trials if t.seconds and side in t.seconds]

    def median_ratio(self, side: str) -> float:
        """The median ratio of medians of the trials' ``injected`` or ``aa`` comparisons."""
        return float(statistics.median(getattr(t, side).ratio for t in self.trials))

    def to_json(self) -> JSON:
        return {
            **header(TRIALS),
            "metadata": dict(self.metadata),
            "settings": vars(self.settings).copy(),
            "injected_flagged": self.injected_flagged,
            "aa_flagged": self.aa_flagged,
            "rates": self.rates(),
            "trials": [t.to_json() for t in self.trials],
        }
