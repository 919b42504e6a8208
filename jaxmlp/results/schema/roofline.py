"""The roofline's files: this machine's ceilings (``ceilings-<time>.json``, measured once per environment and kept)
and a roofline run (``roofline-<time>.json``: the ceilings it used and each workload's point)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jaxmlp.results.schema.common import CEILINGS, JSON, ROOFLINE, header

ENVIRONMENT_KEYS = ("host", "cpu_model", "cpu_affinity", "jax", "jaxlib", "backend", "device_kind")
"""What makes two environments the same for their ceilings: the machine, its cores, the release and the device."""


def environment_of(metadata: Mapping[str, Any]) -> dict[str, Any]:
    return {key: metadata.get(key) for key in ENVIRONMENT_KEYS}


@dataclass(frozen=True)
class CeilingsDocument:
    metadata: Mapping[str, Any]
    ceilings: Mapping[str, Any]  # flops_per_second, bytes_per_second and what each was the best of

    def to_json(self) -> JSON:
        return {**header(CEILINGS), "metadata": dict(self.metadata), "ceilings": dict(self.ceilings)}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> CeilingsDocument:
        return cls(dict(doc["metadata"]), dict(doc["ceilings"]))


@dataclass(frozen=True)
class RooflineDocument:
    metadata: Mapping[str, Any]
    ceilings: Mapping[str, Any]
    ceilings_file: str  # where the ceilings were kept (measured by this run, or an earlier one here)
    points: Mapping[str, Mapping[str, Any]]  # by workload: `jaxmlp.results.roofline.point`
    settings: Mapping[str, Any]

    def to_json(self) -> JSON:
        return {
            **header(ROOFLINE),
            "metadata": dict(self.metadata),
            "ceilings": dict(self.ceilings),
            "ceilings_file": self.ceilings_file,
            "points": {k: dict(v) for k, v in self.points.items()},
            "settings": dict(self.settings),
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> RooflineDocument:
        return cls(
            dict(doc["metadata"]),
            dict(doc["ceilings"]),
            str(doc["ceilings_file"]),
            {k: dict(v) for k, v in doc["points"].items()},
            dict(doc.get("settings") or {}),
        )
