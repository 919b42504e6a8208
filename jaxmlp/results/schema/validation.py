"""`jaxmlp sweep validate`'s file: each detector's recall and false alarms on synthetic histories, per case."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jaxmlp import jsonio
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
        return jsonio.from_json(cls, doc)

    def to_json(self) -> JSON:
        return {**header(VALIDATION), **jsonio.to_json(self)}
