"""`jaxmlp sweep explain A B`'s answer (``explain.json``), beside ``hlo.diff``, ``hlo/`` and ``traces/``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from jaxmlp.jsonio import number
from jaxmlp.results.schema.common import EXPLAIN, JSON, header


def json_number(value: float | None) -> float | None:
    """A figure as JSON holds it: None or NaN (not had) as null."""
    return None if value is None or value != value else value


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
class ExplainDocument:
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
        return {
            **header(EXPLAIN),
            "metadata": dict(self.metadata),
            "workload": self.workload,
            "a": self.a,
            "b": self.b,
            "fingerprints": dict(self.fingerprints),
            "same_hlo": self.same_hlo,
            "steady": {k: [json_number(x) for x in v] for k, v in self.steady.items()},
            "changes": [{**asdict(c), "a": json_number(c.a), "b": json_number(c.b)} for c in self.changes],
            "operations": [list(o) for o in self.operations],
            "op_times": [
                {**asdict(o), "a_seconds": json_number(o.a_seconds), "b_seconds": json_number(o.b_seconds)}
                for o in self.op_times
            ],
            "diff_file": self.diff_file,
            "diff_lines": self.diff_lines,
            "notes": list(self.notes),
            "settings": dict(self.settings),
            "same_instructions": self.same_instructions,
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> ExplainDocument:
        def maybe(x: Any) -> float | None:
            return None if x is None else number(x)

        return cls(
            dict(doc["metadata"]),
            str(doc["workload"]),
            str(doc["a"]),
            str(doc["b"]),
            dict(doc["fingerprints"]),
            {k: tuple(map(number, v)) for k, v in doc["steady"].items()},
            tuple(Change(c["quantity"], maybe(c["a"]), maybe(c["b"])) for c in doc.get("changes", ())),
            tuple((str(o[0]), int(o[1]), int(o[2])) for o in doc.get("operations", ())),
            tuple(
                OpTime(o["op"], o["name_a"], o["name_b"], maybe(o["a_seconds"]), maybe(o["b_seconds"]))
                for o in doc.get("op_times", ())
            ),
            doc.get("diff_file"),
            int(doc.get("diff_lines", 0)),
            tuple(doc.get("notes", ())),
            dict(doc.get("settings") or {}),
            None if doc.get("same_instructions") is None else bool(doc["same_instructions"]),
        )
