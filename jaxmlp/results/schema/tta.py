"""`jaxmlp tta`'s file: the settings, the metadata, and every run (pipeline, precision, seed) with its time to the
target accuracy (None where it never reached it), its parts (data preparation, compilation, training, evaluation)
and every evaluation."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jaxmlp.results.schema.common import JSON, TTA, header


@dataclass(frozen=True)
class TtaDocument:
    settings: Mapping[str, Any]  # target, runs, pipelines, precisions, eval_every, max_epochs, batch size, data
    metadata: Mapping[str, Any]  # `jaxmlp.measure.environment.metadata` of the device
    runs: tuple[Mapping[str, Any], ...]  # `jaxmlp.measure.tta.TtaRun.to_json` each

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> TtaDocument:
        if not isinstance(doc.get("runs"), list):
            raise TypeError("'runs' is not a list")
        for run in doc["runs"]:
            for key in ("pipeline", "precision", "seed", "reached", "seconds"):
                if key not in run:
                    raise KeyError(key)
        return cls(
            dict(doc.get("settings") or {}), dict(doc.get("metadata") or {}), tuple(dict(r) for r in doc["runs"])
        )

    def to_json(self) -> JSON:
        return {
            **header(TTA),
            "settings": dict(self.settings),
            "metadata": dict(self.metadata),
            "runs": [dict(r) for r in self.runs],
        }
