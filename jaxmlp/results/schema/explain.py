"""`jaxmlp sweep explain A B`'s answer (``explain.json``), beside ``hlo.diff``, ``hlo/`` and ``traces/``."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from jaxmlp import jsonio
from jaxmlp.results.schema.common import EXPLAIN, JSON, ResultFile, header

SAME_HLO = "same optimized HLO: the change is below HLO, in the backend's code generation or runtime"


def _ratio(a: float | None, b: float | None) -> float | None:
    """B over A, where both are known (and A is not 0)."""
    return b / a if a and b is not None else None


@dataclass(frozen=True)
class Change:
    """One quantity of the two programs (flops, bytes, memory, compile seconds): its value in A and in B."""

    quantity: str
    a: float | None
    b: float | None

    @property
    def ratio(self) -> float | None:
        return _ratio(self.a, self.b)


@dataclass(frozen=True)
class OpTime:
    """One operation of the program, by its canonical name (the same in both releases where the HLO is the same):
    its name in each release, and its time per traced call in each (seconds; None: not in that trace)."""

    op: str
    name_a: str | None
    name_b: str | None
    a_seconds: float | None
    b_seconds: float | None

    @property
    def ratio(self) -> float | None:
        return _ratio(self.a_seconds, self.b_seconds)


@dataclass(frozen=True)
class ExplainDocument(ResultFile, kind=EXPLAIN):
    """Two releases of one workload compared: fingerprints, whether the optimized HLO (and its instructions) is the
    same, what changed, steady states, compile and operation times; ``notes`` say what could not be had and why."""

    metadata: Mapping[str, Any]
    workload: str
    a: str
    b: str
    fingerprints: Mapping[str, str | None]
    steady: Mapping[str, tuple[float, ...]]
    changes: tuple[Change, ...] = ()
    operations: tuple[tuple[str, int, int], ...] = ()  # (op or fusion kind, count in A, count in B) that differ
    op_times: tuple[OpTime, ...] = ()
    diff_file: str | None = None
    diff_lines: int = 0
    notes: tuple[str, ...] = ()
    settings: Mapping[str, Any] = field(default_factory=dict)
    same_instructions: bool | None = None  # `hlo.instruction_fingerprint`s equal; None: not compared (or not both)

    @property
    def same_hlo(self) -> bool | None:
        """Whether both compiled the same optimized HLO; None where a release gave none."""
        a, b = self.fingerprints.get(self.a), self.fingerprints.get(self.b)
        return None if a is None or b is None else a == b

    def to_json(self) -> JSON:
        """Its fields in order, ``same_hlo`` (derived) after ``fingerprints``."""
        fields = jsonio.to_json(self)
        return {**header(EXPLAIN), **dict(itertools.islice(fields.items(), 5)), "same_hlo": self.same_hlo, **fields}
