"""What a measuring process reports: typed records and their JSON form. No pandas, no jax here."""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from jaxmlp.jsonio import Plain, from_json, to_json

JSON = dict[str, Any]


@dataclass(frozen=True)
class Leaf:
    """One array a workload returned, in brief: its shape and dtype, a few of its values, its sum and size."""

    shape: tuple[int, ...]
    dtype: str
    sample: tuple[float, ...]  # up to SAMPLED evenly spaced elements of the flattened array
    total: float  # the sum of all elements (float64)
    magnitude: float  # the sum of their absolute values

    SAMPLED = 16


@dataclass(frozen=True)
class Output:
    """What one call of a workload returned, enough to tell whether two releases computed the same."""

    leaves: tuple[Leaf, ...]

    def differs(self, other: Output, rtol: float) -> str | None:
        """Why ``other`` is not the same result within ``rtol`` (relative to each leaf's magnitude), or None."""
        if len(self.leaves) != len(other.leaves):
            return f"{len(other.leaves)} arrays returned instead of {len(self.leaves)}"
        worst = 0.0
        for i, (a, b) in enumerate(zip(self.leaves, other.leaves)):
            if (a.shape, a.dtype) != (b.shape, b.dtype):
                return f"array {i} is {b.dtype}{list(b.shape)} instead of {a.dtype}{list(a.shape)}"
            scale = max(a.magnitude / max(1, math.prod(a.shape)), max(map(abs, a.sample), default=0.0), 1e-30)
            gaps = [abs(x - y) / scale for x, y in zip(a.sample, b.sample)]
            gaps.append(abs(a.total - b.total) / max(a.magnitude, b.magnitude, 1e-30))
            if any(math.isnan(g) for g in gaps) or any(math.isnan(x) for x in (*a.sample, *b.sample)):
                return f"array {i} holds NaN on one side"
            worst = max(worst, *gaps)
        return f"values differ by {worst:.2g} relative (tolerance {rtol:g})" if worst > rtol else None

    @classmethod
    def from_json(cls, doc: Sequence[Mapping[str, Any]]) -> Output:
        return cls(tuple(from_json(Leaf, leaf) for leaf in doc))

    def to_json(self) -> list[JSON]:  # a list of its leaves, not an object
        return [to_json(leaf) for leaf in self.leaves]


@dataclass(frozen=True)
class WorkloadTimes(Plain):
    """One worker process's measurement of one workload in seconds: its compile and calls."""

    compile_seconds: float  # the median of compiles_seconds
    first_seconds: float  # the first call after compiling
    call_seconds: tuple[float, ...]  # the calls after the first
    steady_seconds: float  # their median
    output: Output | None = None  # what the last call returned, for the check across releases
    program: Mapping[str, Any] | None = None  # what it compiled (`jaxmlp.measure.programs`), in the process asked
    compiles_seconds: tuple[float, ...] = ()  # each compile, in order (the first before the calls); () as one
    call_cpu_seconds: tuple[float, ...] = ()  # the process's CPU time (all threads) in each call after the first
    steady_cpu_seconds: float = math.nan  # their median; NaN where not recorded (schema version 8 and older)

    @property
    def compiles(self) -> int:
        """How many compiles its compile time is the median of."""
        return max(1, len(self.compiles_seconds))

    @property
    def has_cpu(self) -> bool:
        """Whether each call's CPU time was recorded (schema version 9 on)."""
        return bool(self.call_cpu_seconds) and math.isfinite(self.steady_cpu_seconds)

    @classmethod
    def of(
        cls,
        compiles: float | Sequence[float],
        calls: Sequence[float],
        output: Output | None = None,
        cpu: Sequence[float] = (),
    ) -> WorkloadTimes:
        """From each compile's seconds (their median), each call's wall seconds and, where given, CPU seconds."""
        if len(calls) < 2:
            raise ValueError("a workload needs at least 2 timed calls: the first, then the steady state")
        each = (float(compiles),) if isinstance(compiles, (int, float)) else tuple(map(float, compiles))
        if not each:
            raise ValueError("a workload is compiled at least once")
        steady_cpu = statistics.median(cpu[1:]) if len(cpu) == len(calls) else math.nan
        return cls(
            statistics.median(each),
            calls[0],
            tuple(calls[1:]),
            statistics.median(calls[1:]),
            output,
            None,
            each,
            tuple(cpu[1:]) if len(cpu) == len(calls) else (),
            steady_cpu,
        )

    def to_json(self) -> JSON:
        doc = to_json(self)  # the newer fields only where recorded (schema versions 8 and 9), the program last
        program = doc.pop("program")
        if not self.compiles_seconds:
            del doc["compiles_seconds"]
        if not self.has_cpu:
            del doc["call_cpu_seconds"], doc["steady_cpu_seconds"]
        return doc if program is None else {**doc, "program": program}


FAILED = "workloads_failed"
"""A process's metadata naming each workload that failed in it and why (the others are measured)."""


@dataclass(frozen=True)
class ProcessResult(Plain):
    """What one worker process measured, with its metadata (versions, flags, settings, the test hook)."""

    metadata: Mapping[str, Any]
    workloads: Mapping[str, WorkloadTimes]

    @property
    def failed(self) -> dict[str, str]:
        """The workloads that failed in this process (`FAILED`), and why; it measured the others."""
        failed = self.metadata.get(FAILED) or {}
        return {str(k): str(v) for k, v in failed.items()} if isinstance(failed, Mapping) else {}
