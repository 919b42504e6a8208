"""`jaxmlp train --json`: one flat record per epoch, each with the settings, the data's origin and metadata."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import jaxmlp.results.schema.fields as fields
from jaxmlp.results.schema.common import TRAIN, ResultFile


@dataclass(frozen=True)
class TrainDocument(ResultFile, kind=TRAIN):
    records: tuple[Mapping[str, Any], ...]

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> TrainDocument:
        """The file's epochs, each field the type the tables read (`fields`), or a `JaxmlpError` naming it."""
        records = fields.field(doc, "records", "", fields.LIST)
        return cls(tuple(_record(r, f"records[{i}]") for i, r in enumerate(records)))


def _record(doc: object, where: str) -> dict[str, Any]:
    """One epoch's record, checked: its epoch, its time, its numbers (`fields.ROW_FIELDS`)."""
    record = fields.scalars(doc, where, {"process_ids": fields.LIST})
    fields.field(record, "epoch", f"{where}.", fields.WHOLE)
    fields.field(record, "epoch_seconds", f"{where}.", fields.NUMBER, null=True)
    return record
