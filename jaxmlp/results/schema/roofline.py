"""The roofline's files: this machine's ceilings (kept per environment) and a roofline run's points."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import jaxmlp.results.schema.fields as fields
from jaxmlp import registry
from jaxmlp.results.schema.common import CEILINGS, ROOFLINE, ResultFile

CEILINGS_KEYS = (registry.HOST, registry.CPU_MODEL, "cpu_affinity", "jax", "jaxlib", "backend", "device_kind")
"""What makes two environments the same for their ceilings: the machine, its cores, the release and the device."""


def ceilings_key(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of a run's metadata that its ceilings are kept and found again by (`CEILINGS_KEYS`)."""
    return {key: metadata.get(key) for key in CEILINGS_KEYS}


CEILING_FIELDS = {
    "flops_per_second": fields.NUMBER,
    "best_shape": fields.TEXT,
    "bytes_per_second": fields.NUMBER,
    "best_kernel": fields.TEXT,
}
"""What a roofline reads of its kept ceilings: the two rates and what each was the best of."""


@dataclass(frozen=True)
class CeilingsDocument(ResultFile, kind=CEILINGS):
    metadata: Mapping[str, Any]
    ceilings: Mapping[str, Any]  # flops_per_second, bytes_per_second and what each was the best of

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> CeilingsDocument:
        """The kept ceilings, each a positive number (`CEILINGS`), or a `JaxmlpError` naming the field."""
        ceilings = fields.field(doc, "ceilings", "", fields.OBJECT)
        for key, wanted in CEILING_FIELDS.items():
            value = fields.field(ceilings, key, "ceilings.", wanted)
            if wanted == fields.NUMBER and not (math.isfinite(value) and value > 0):
                raise fields.wrong(f"ceilings.{key}", value, "a positive number")
        for key in ("numpy_bytes_per_second", "matmul_flops_per_second", "xla_bytes_per_second"):
            rates = fields.optional(ceilings, key, "ceilings.", fields.OBJECT, {})
            for name, rate in rates.items():
                fields.typed(rate, f"ceilings.{key}.{name}", fields.NUMBER, null=True)
        return cls(fields.scalars(doc.get("metadata") or {}, "metadata", {"devices": fields.OBJECT}), dict(ceilings))


@dataclass(frozen=True)
class RooflineDocument(ResultFile, kind=ROOFLINE):
    metadata: Mapping[str, Any]
    ceilings: Mapping[str, Any]
    ceilings_file: str  # where the ceilings were kept (measured by this run, or an earlier one here)
    points: Mapping[str, Mapping[str, Any]]  # by workload: `jaxmlp.results.tables.roofline.point`
    settings: Mapping[str, Any] = field(default_factory=dict)
