"""`jaxmlp tta`'s file: the settings, the metadata, and every run with its time to target and its parts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import jaxmlp.results.schema.fields as fields
from jaxmlp.results.schema.bench import METADATA_NESTED
from jaxmlp.results.schema.common import TTA, ResultFile

SETTING_FIELDS = {**fields.ROW_FIELDS, "runs": fields.WHOLE, "eval_every": fields.WHOLE, "max_epochs": fields.WHOLE}
SETTING_LISTS = {"pipelines": fields.LIST, "precisions": fields.LIST}
RUN = {**fields.ROW_FIELDS, "epochs": fields.NUMBER}  # a run's epochs: steps over an epoch's steps
REQUIRED = {
    "pipeline": fields.TEXT,
    "precision": fields.TEXT,
    "seed": fields.WHOLE,
    "reached": fields.FLAG,
    "target": fields.NUMBER,
}
"""What each run must hold (its ``seconds``, the time to the target, is null where it never reached it)."""


@dataclass(frozen=True)
class TtaDocument(ResultFile, kind=TTA):
    settings: Mapping[str, Any]  # target, runs, pipelines, precisions, eval_every, max_epochs, batch size, data
    metadata: Mapping[str, Any]  # `jaxmlp.measure.environment.metadata` of the device
    runs: tuple[Mapping[str, Any], ...]  # `jaxmlp.measure.tta.TtaRun.to_json` each

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> TtaDocument:
        """The file's document, each field the type the tables read (`fields`), or a `JaxmlpError` naming it."""
        runs = fields.field(doc, "runs", "", fields.LIST)
        return cls(
            fields.scalars(doc.get("settings") or {}, "settings", SETTING_LISTS, SETTING_FIELDS),
            fields.scalars(doc.get("metadata") or {}, "metadata", METADATA_NESTED),
            tuple(_run(run, f"runs[{i}]") for i, run in enumerate(runs)),
        )


def _run(doc: object, where: str) -> dict[str, Any]:
    """One run, checked: its required fields, its numbers, its evaluations (each its steps, seconds, accuracy)."""
    run = fields.scalars(doc, where, {"evaluations": fields.LIST}, RUN)
    for key, wanted in REQUIRED.items():
        fields.field(run, key, f"{where}.", wanted)
    fields.field(run, "seconds", f"{where}.", fields.NUMBER, null=True)
    for i, evaluation in enumerate(run.get("evaluations") or ()):
        fields.scalars(evaluation, f"{where}.evaluations[{i}]", types={"steps": fields.WHOLE})
    return run
