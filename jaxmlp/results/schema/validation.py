"""`jaxmlp sweep validate`'s file: each detector's recall and false alarms on synthetic histories, per case."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jaxmlp.measure.sweep.peer import PeerRow
from jaxmlp.measure.sweep.validation import Row
from jaxmlp.results.schema.common import JSON, VALIDATION, header


@dataclass(frozen=True)
class ValidationDocument:
    """The validation's settings, chosen detector and rows; ``peer``: each detector on Otava's suite (or None)."""

    metadata: Mapping[str, Any]
    settings: Mapping[str, Any]
    chosen: str
    rows: tuple[Row, ...]
    peer: tuple[PeerRow, ...] = ()

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> ValidationDocument:
        rows = tuple(
            Row(
                str(r["detector"]),
                str(r["case"]),
                int(r["histories"]),
                float("nan") if r.get("recall") is None else float(r["recall"]),
                float(r["false_alarms"]),
            )
            for r in doc["rows"]
        )
        peer = tuple(PeerRow.from_json(r) for r in doc.get("peer", ()))
        return cls(dict(doc["metadata"]), dict(doc["settings"]), str(doc["chosen"]), rows, peer)

    def to_json(self) -> JSON:
        return {
            **header(VALIDATION),
            "metadata": dict(self.metadata),
            "settings": dict(self.settings),
            "chosen": self.chosen,
            "rows": [r.to_json() for r in self.rows],
            "peer": [r.to_json() for r in self.peer],
        }
