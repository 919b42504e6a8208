"""`jaxmlp sweep validate`'s file: each detector's recall and false alarms on synthetic histories, per case."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jaxmlp.measure.sweep.peer import PeerRow
from jaxmlp.measure.sweep.validation import Row
from jaxmlp.results.schema.common import VALIDATION, ResultFile


@dataclass(frozen=True)
class ValidationDocument(ResultFile, kind=VALIDATION):
    """The validation's settings, chosen detector and rows; ``peer``: each detector on Otava's suite (or None)."""

    metadata: Mapping[str, Any]
    settings: Mapping[str, Any]
    chosen: str
    rows: tuple[Row, ...]
    peer: tuple[PeerRow, ...] = ()
