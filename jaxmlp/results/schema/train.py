"""`jaxmlp train --json`: one flat record per epoch, each with the settings, the data's origin and metadata."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jaxmlp.results.schema.common import JSON, TRAIN, header


@dataclass(frozen=True)
class TrainDocument:
    records: tuple[Mapping[str, Any], ...]

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> TrainDocument:
        if not isinstance(doc.get("records"), list):
            raise TypeError("'records' is not a list")
        return cls(tuple(dict(r) for r in doc["records"]))

    def to_json(self) -> JSON:
        return {**header(TRAIN), "records": [dict(r) for r in self.records]}
