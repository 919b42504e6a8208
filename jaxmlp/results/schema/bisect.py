"""`jaxmlp sweep bisect`'s answer: its settings, every probe (its cells in ``probe-N`` beside it), the answer line."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jaxmlp.measure.bisection import Bisection
from jaxmlp.measure.sweep.settings import Bisect, Detector, Matrix, Measuring
from jaxmlp.results.schema.common import BISECT, JSON, ResultFile, header


def recorded(settings: Bisect, workload: str, measuring: Measuring, matrix: Matrix, detector: Detector) -> JSON:
    """What a bisection's settings store: its ends, the workload bisected and how it was measured."""
    return {
        "good": settings.good,
        "bad": settings.bad,
        "workload": workload,
        "quantity": "steady state",
        "processes": matrix.processes,
        "threshold": detector.threshold,
        "alpha": detector.alpha,
        "xla_flags": matrix.xla_flags[0] if matrix.xla_flags else "",
        "dataset": measuring.dataset,
        "limit": measuring.limit,
        "epochs": measuring.epochs,
        "calls": measuring.calls,
        "pin_cpu": measuring.pin_cpu,
    }


@dataclass(frozen=True)
class BisectDocument(ResultFile, kind=BISECT):
    metadata: Mapping[str, Any]
    settings: Mapping[str, Any]  # workload, quantity, processes, threshold, alpha, flags, data
    bisection: Bisection
    line: str
    seconds: float

    def to_json(self) -> JSON:
        return {
            **header(BISECT),
            "metadata": dict(self.metadata),
            "settings": dict(self.settings),
            **self.bisection.to_json(),
            "line": self.line,
            "seconds": self.seconds,
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> BisectDocument:
        return cls(
            dict(doc["metadata"]),
            dict(doc["settings"]),
            Bisection.from_json(doc),
            str(doc["line"]),
            float(doc["seconds"]),
        )
