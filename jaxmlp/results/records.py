"""Typed records of what jaxmlp measures and writes, and their JSON forms.

Every result file is one of these documents:

- `BenchmarkDocument`: a pytest-benchmark file (``nox -s bench``, or one version of a sweep), a
  `BenchmarkRow` per benchmark with its raw round times (`Stats.data`);
- `SweepDocument`: one jax/jaxlib version of a sweep, a `ProcessResult` per worker process; stored as a
  `BenchmarkDocument` whose raw samples are the processes' values, so `jaxmlp compare` reads it like any;
- `TrainDocument`: `jaxmlp train --json`, a record per epoch;
- `TrialsDocument`: the regression detector's trials (`jaxmlp.measure.sweep trials`).

`parse` tells them apart. No pandas here: the sweep's worker processes build these records too.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from jaxmlp import registry
from jaxmlp.errors import JaxmlpError
from jaxmlp.stats import Comparison

if TYPE_CHECKING:
    import pandas as pd

METADATA_KEY = "jaxmlp"
"""pytest-benchmark files carry jaxmlp's metadata (`jaxmlp.measure.environment.metadata`) in
``machine_info[METADATA_KEY]``; jaxmlp's own documents name their kind under this key (``{"jaxmlp": "train", ...}``)."""
TRAIN_KIND = "train"
TRIALS_KIND = "detector-trials"

JSON = dict[str, Any]


def _float(value: object) -> float:
    """A JSON number as a float; null (how NaN is stored) as NaN."""
    return math.nan if value is None else float(value)  # type: ignore[arg-type]


def _json_float(value: float) -> float | None:
    """A float as JSON allows it: NaN as null."""
    return None if math.isnan(value) else value


# --- pytest-benchmark files ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stats:
    """One benchmark's statistics over its rounds, and the rounds' raw times (seconds)."""

    min: float
    max: float
    mean: float
    stddev: float
    median: float
    q1: float
    q3: float
    iqr: float
    rounds: int  # how many samples (pytest-benchmark's word)
    outliers: str
    data: tuple[float, ...]  # the raw samples; empty where the file was written without --benchmark-save-data

    @classmethod
    def of(cls, data: Sequence[float]) -> Stats:
        """The statistics of ``data``, quartiles by linear interpolation (as numpy's and pytest-benchmark's)."""
        values = [float(x) for x in data]
        if not values:
            raise ValueError("no samples")
        q1, median, q3 = (_quantile(sorted(values), q) for q in (0.25, 0.5, 0.75))
        return cls(min=min(values), max=max(values), mean=statistics.fmean(values),
                   stddev=statistics.stdev(values) if len(values) > 1 else 0.0, median=median, q1=q1, q3=q3,
                   iqr=q3 - q1, rounds=len(values), outliers="", data=tuple(values))  # fmt: skip

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Stats:
        number = {key: _float(doc.get(key)) for key in ("min", "max", "mean", "stddev", "median", "q1", "q3", "iqr")}
        return cls(**number, rounds=int(doc.get("rounds") or 0), outliers=str(doc.get("outliers") or ""),
                   data=tuple(float(x) for x in doc.get("data") or ()))  # fmt: skip

    def to_json(self) -> JSON:
        out: JSON = {key: getattr(self, key) for key in ("min", "max", "mean", "stddev", "median", "q1", "q3", "iqr")}
        return {**out, "rounds": self.rounds, "iterations": 1, "outliers": self.outliers, "data": list(self.data)}


def _quantile(ordered: Sequence[float], q: float) -> float:
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@dataclass(frozen=True)
class BenchmarkRow:
    """One benchmark of a pytest-benchmark file: its full name, parameters, extra facts and statistics."""

    name: str  # as pytest writes it: test_epoch[cpu-scan-0]
    group: str | None
    params: Mapping[str, Any]
    extra_info: Mapping[str, Any]
    stats: Stats | None

    @property
    def id(self) -> str:
        """The benchmark's id (`jaxmlp.registry`): the name without its parameters."""
        return registry.benchmark_id(self.name)

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> BenchmarkRow:
        stats = doc.get("stats")
        name, params = _current_name(str(doc.get("name", "")), dict(doc.get("params") or {}))
        return cls(name=name, group=doc.get("group"), params=params, extra_info=dict(doc.get("extra_info") or {}),
                   stats=Stats.from_json(stats) if isinstance(stats, Mapping) else None)  # fmt: skip

    def to_json(self) -> JSON:
        bench = registry.BY_ID.get(self.id)
        fullname = f"{bench.source}::{self.name}" if bench else self.name
        return {"name": self.name, "fullname": fullname, "group": self.group,
                "params": dict(self.params), "extra_info": dict(self.extra_info),
                "stats": None if self.stats is None else self.stats.to_json()}  # fmt: skip


def _current_name(name: str, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """An older file's benchmark under its name and parameters now (`registry.RENAMED`, `Benchmark.defaults`):
    ``test_arrays`` is ``test_loader[batched-0]``, ``test_loader[2]`` is ``test_loader[seed-2]``."""
    was = registry.benchmark_id(name)
    bench, fixed = registry.RENAMED.get(was) or (registry.BY_ID.get(was), {})
    if bench is None:
        return name, params
    missing = {key: value for key, value in {**bench.defaults, **fixed}.items() if key not in params}
    if not missing:
        return name, params
    params = {**params, **missing}
    if not set(bench.params) <= set(params):  # not a row as pytest writes them: left as it is
        return name, params
    return bench.name(*(params[key] for key in bench.params)), params


MACHINE = ("host", "cpu_model", "cpu_affinity")
"""The metadata that names the machine a benchmark ran on (the versions are what a comparison may vary)."""


@dataclass(frozen=True)
class BenchmarkDocument:
    """A pytest-benchmark JSON file: its benchmarks and the metadata that makes them comparable."""

    benchmarks: tuple[BenchmarkRow, ...]
    metadata: Mapping[str, Any]  # machine_info["jaxmlp"]: versions, machine, flags, size, commit
    datetime: str | None
    commit: str | None
    source: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)  # the file as read

    @property
    def is_sweep(self) -> bool:
        return bool(self.metadata.get("sweep"))

    @property
    def is_scaling(self) -> bool:
        """Written by `jaxmlp scaling` (`jaxmlp.measure.scaling`)."""
        return bool(self.metadata.get("scaling"))

    @property
    def backends(self) -> tuple[str, ...]:
        return tuple(sorted({str(b.extra_info["backend"]) for b in self.benchmarks if b.extra_info.get("backend")}))

    @staticmethod
    def recognises(doc: object) -> bool:
        return isinstance(doc, Mapping) and isinstance(doc.get("benchmarks"), list) and "machine_info" in doc

    @classmethod
    def from_json(cls, doc: object) -> BenchmarkDocument:
        if not cls.recognises(doc):
            raise JaxmlpError("not a pytest-benchmark results file (no 'benchmarks' and 'machine_info')")
        assert isinstance(doc, Mapping)
        machine = doc["machine_info"] if isinstance(doc["machine_info"], Mapping) else {}
        meta = dict(machine.get(METADATA_KEY) or {})
        commit = meta.get("commit") or (doc.get("commit_info") or {}).get("id")
        rows = tuple(BenchmarkRow.from_json(b) for b in doc["benchmarks"] if isinstance(b, Mapping))
        return cls(rows, meta, doc.get("datetime"), commit, dict(doc))

    def to_json(self) -> JSON:
        """The file as it was read (a copy keeps everything pytest-benchmark wrote), or as built here."""
        if self.source:
            return dict(self.source)
        return {"machine_info": {"node": self.metadata.get("host"), METADATA_KEY: dict(self.metadata)},
                "commit_info": {"id": self.commit}, "benchmarks": [b.to_json() for b in self.benchmarks],
                "datetime": self.datetime, "version": "jaxmlp"}  # fmt: skip

    @property
    def machine(self) -> tuple[str, ...]:
        """What the numbers were measured on (`MACHINE`): two documents whose machines differ compare them too."""
        return tuple(f"{key} {self.metadata.get(key)}" for key in MACHINE)

    def samples(self) -> dict[str, list[float]]:
        """Raw samples by full benchmark name; a benchmark without them is a `JaxmlpError` saying how to get them."""
        out: dict[str, list[float]] = {}
        for bench in self.benchmarks:
            if bench.stats is None or not bench.stats.data:
                raise JaxmlpError(f"benchmark {bench.name} has no raw samples (stats.data): "
                                  "rerun pytest with --benchmark-save-data (nox -s bench does)")  # fmt: skip
            out.setdefault(bench.name, []).extend(bench.stats.data)
        return out


# --- the version sweep ----------------------------------------------------------------------------------------


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
    """What one call of a workload returned (its leaves, in pytree order): enough to tell whether two
    releases computed the same thing, without keeping the arrays."""

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
        return cls(tuple(Leaf(tuple(leaf["shape"]), str(leaf["dtype"]), tuple(map(_float, leaf["sample"])),
                              _float(leaf["total"]), _float(leaf["magnitude"])) for leaf in doc))  # fmt: skip

    def to_json(self) -> list[JSON]:
        return [{"shape": list(leaf.shape), "dtype": leaf.dtype, "sample": [_json_float(x) for x in leaf.sample],
                 "total": _json_float(leaf.total), "magnitude": _json_float(leaf.magnitude)}
                for leaf in self.leaves]  # fmt: skip


@dataclass(frozen=True)
class WorkloadTimes:
    """One worker process's measurement of one workload (seconds): compiled once, then called in turn.

    The steady state is the median of the calls after the first (for the built-in epochs, of the epochs after
    the first), the rule every jaxmlp epoch follows."""

    compile_seconds: float
    first_seconds: float  # the first call after compiling
    call_seconds: tuple[float, ...]  # the calls after the first
    steady_seconds: float  # their median
    output: Output | None = None  # what the last call returned, for the check across releases

    @classmethod
    def of(cls, compile_seconds: float, calls: Sequence[float], output: Output | None = None) -> WorkloadTimes:
        if len(calls) < 2:
            raise ValueError("a workload needs at least 2 timed calls: the first, then the steady state")
        return cls(compile_seconds, calls[0], tuple(calls[1:]), statistics.median(calls[1:]), output)

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> WorkloadTimes:
        output = doc.get("output")
        return cls(_float(doc["compile_seconds"]), _float(doc["first_seconds"]), tuple(doc["call_seconds"]),
                   _float(doc["steady_seconds"]), None if output is None else Output.from_json(output))  # fmt: skip

    def to_json(self) -> JSON:
        return {"compile_seconds": self.compile_seconds, "first_seconds": _json_float(self.first_seconds),
                "call_seconds": list(self.call_seconds), "steady_seconds": self.steady_seconds,
                "output": None if self.output is None else self.output.to_json()}  # fmt: skip


def _legacy_workloads(doc: Mapping[str, Any]) -> dict[str, WorkloadTimes]:
    """A process written before the workload contract (2026-12-03): ``pipelines`` of epochs and a ``step``."""
    out = {name: WorkloadTimes(p["compile_seconds"], p["first_epoch_seconds"], tuple(p["epoch_seconds"]),
                               p["steady_seconds"]) for name, p in doc["pipelines"].items()}  # fmt: skip
    if doc.get("step"):  # timed after one warm-up call that was not kept
        out["step"] = WorkloadTimes(doc["step"]["compile_seconds"], math.nan, (), doc["step"]["step_seconds"])
    return out


@dataclass(frozen=True)
class ProcessResult:
    """What one sweep worker process measured, with its metadata (versions, flags, settings, the test hook)."""

    metadata: Mapping[str, Any]
    workloads: Mapping[str, WorkloadTimes]

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> ProcessResult:
        if "workloads" not in doc and "pipelines" in doc:
            return cls(dict(doc["metadata"]), _legacy_workloads(doc))
        return cls(dict(doc["metadata"]), {name: WorkloadTimes.from_json(w) for name, w in doc["workloads"].items()})

    def to_json(self) -> JSON:
        return {"metadata": dict(self.metadata), "workloads": {n: w.to_json() for n, w in self.workloads.items()}}


SWEEP_EXTRA = ("jax", "jaxlib", "backend", "device_kind", "dataset", "injected_slowdown", "samples", "epochs",
               "xla_flags", "workload_source")  # fmt: skip
"""The metadata each sweep benchmark repeats in its ``extra_info``."""


@dataclass(frozen=True)
class SweepDocument:
    """One cell of a sweep's matrix (a jax/jaxlib version, and the XLA flags it ran with): a worker process per
    sample, measured in that version's environment. ``differs`` names each workload whose result was not the
    same as the sweep's reference cell's (within its tolerance), and why: its times are then no comparison."""

    label: str  # the version (or the name it was given with --env LABEL=PYTHON)
    processes: tuple[ProcessResult, ...]
    datetime: str
    differs: Mapping[str, str] = field(default_factory=dict)

    def benchmark_rows(self) -> tuple[BenchmarkRow, ...]:
        """A `BenchmarkRow` per measured quantity; each raw sample is one process's value."""
        meta = self.processes[0].metadata
        extra = {key: meta.get(key) for key in SWEEP_EXTRA}
        rows: list[BenchmarkRow] = []
        quantities = ((registry.SWEEP_STEADY, "steady state", "steady_seconds"),
                      (registry.SWEEP_FIRST, "first call", "first_seconds"),
                      (registry.SWEEP_COMPILE, "compile", "compile_seconds"))  # fmt: skip
        for workload in self.processes[0].workloads:
            runs = [p.workloads[workload] for p in self.processes]
            facts = {**extra, "calls": len(runs[0].call_seconds) + 1, "results_differ": self.differs.get(workload)}
            for bench, group, attribute in quantities:
                values = [getattr(r, attribute) for r in runs]
                if all(math.isnan(v) for v in values):  # a legacy step kept no first call
                    continue
                rows.append(BenchmarkRow(bench.name(workload), f"sweep: {group}", {"workload": workload}, facts,
                                         Stats.of(values)))  # fmt: skip
        return tuple(rows)

    def to_benchmarks(self) -> BenchmarkDocument:
        meta = {**self.processes[0].metadata, "sweep": True, "sweep_label": self.label,
                "processes": len(self.processes), "results_differ": dict(self.differs)}  # fmt: skip
        plain = BenchmarkDocument(self.benchmark_rows(), meta, self.datetime, meta.get("commit"))
        raw = [p.to_json() for p in self.processes]
        return dataclasses.replace(
            plain, source={**plain.to_json(), "version": "jaxmlp.measure.sweep", "raw_processes": raw}
        )

    def to_json(self) -> JSON:
        return self.to_benchmarks().to_json()

    @classmethod
    def from_benchmarks(cls, doc: BenchmarkDocument) -> SweepDocument:
        raw = doc.source.get("raw_processes") or []
        return cls(str(doc.metadata.get("sweep_label")), tuple(ProcessResult.from_json(p) for p in raw),
                   str(doc.datetime), dict(doc.metadata.get("results_differ") or {}))  # fmt: skip


@dataclass(frozen=True)
class Cell:
    """One cell of a sweep's matrix: a release (or ``--env`` label) and the XLA flags its processes ran with,
    what became of it (``ok``, or why it was not measured) and what XLA said of the flags."""

    label: str
    xla_flags: str
    status: str  # "ok", or the reason the cell was not measured ("flag unknown to this release: ...")
    file: str | None  # its sweep document, relative to the sweep's folder
    note: str = ""  # e.g. XLA's warning that a flag is no longer supported (and ignored)


CELLS_KIND = "sweep-cells"


@dataclass(frozen=True)
class CellsDocument:
    """The matrix of one sweep, cell by cell: a cell that could not run says why here, not as a crash."""

    cells: tuple[Cell, ...]

    @staticmethod
    def recognises(doc: object) -> bool:
        return isinstance(doc, Mapping) and doc.get(METADATA_KEY) == CELLS_KIND

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> CellsDocument:
        return cls(tuple(Cell(**c) for c in doc["cells"]))

    def to_json(self) -> JSON:
        return {METADATA_KEY: CELLS_KIND, "cells": [dataclasses.asdict(c) for c in self.cells]}


# --- bisection across releases ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One release against an earlier one (``from_`` is the baseline)."""

    from_: str
    to: str
    comparison: Comparison

    def to_json(self) -> JSON:
        return {"from": self.from_, "to": self.to, **_comparison_json(self.comparison)}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Step:
        return cls(str(doc["from"]), str(doc["to"]), _comparison(doc))


@dataclass(frozen=True)
class BisectProbe:
    """One probe: the releases measured together (the ends and their midpoint), each one's median, the
    comparison of each neighbour pair and of the ends, and what the probe decided."""

    number: int
    releases: tuple[str, ...]
    medians: Mapping[str, float]
    steps: tuple[Step, ...]
    ends: Step
    decision: str

    def to_json(self) -> JSON:
        return {"number": self.number, "releases": list(self.releases), "medians": dict(self.medians),
                "steps": [s.to_json() for s in self.steps], "ends": self.ends.to_json(),
                "decision": self.decision}  # fmt: skip

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> BisectProbe:
        return cls(int(doc["number"]), tuple(doc["releases"]), {k: _float(v) for k, v in doc["medians"].items()},
                   tuple(Step.from_json(s) for s in doc["steps"]), Step.from_json(doc["ends"]),
                   str(doc["decision"]))  # fmt: skip


@dataclass(frozen=True)
class Bisection:
    """Where a bisection ended: ``found`` (``first`` is the first release flagged against ``after``, by
    ``comparison``), ``no change`` between the ends, or ``inconclusive`` (``reason`` says why)."""

    candidates: tuple[str, ...]  # the good end, the releases between, the bad end
    status: str
    direction: str | None  # "regression" or "improvement"
    probes: tuple[BisectProbe, ...]
    reason: str = ""
    first: str | None = None
    after: str | None = None
    comparison: Comparison | None = None

    @property
    def measured(self) -> tuple[str, ...]:
        """The distinct releases the probes measured, oldest first."""
        seen = {r for p in self.probes for r in p.releases}
        return tuple(r for r in self.candidates if r in seen)


BISECT_KIND = "bisect"


@dataclass(frozen=True)
class BisectDocument:
    """`jaxmlp sweep bisect`: its settings, every probe, the answer line; each probe's raw results lie in
    ``probe-N`` folders beside it (sweep documents)."""

    metadata: Mapping[str, Any]
    settings: Mapping[str, Any]  # workload, quantity, processes, threshold, alpha, flags, data
    bisection: Bisection
    line: str
    seconds: float

    @staticmethod
    def recognises(doc: object) -> bool:
        return isinstance(doc, Mapping) and doc.get(METADATA_KEY) == BISECT_KIND

    def to_json(self) -> JSON:
        b = self.bisection
        return {METADATA_KEY: BISECT_KIND, "metadata": dict(self.metadata), "settings": dict(self.settings),
                "candidates": list(b.candidates), "status": b.status, "direction": b.direction,
                "reason": b.reason, "first": b.first, "after": b.after,
                "comparison": None if b.comparison is None else _comparison_json(b.comparison),
                "probes": [p.to_json() for p in b.probes], "measured": list(b.measured),
                "line": self.line, "seconds": self.seconds}  # fmt: skip

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> BisectDocument:
        comparison = doc.get("comparison")
        b = Bisection(
            tuple(doc["candidates"]),
            str(doc["status"]),
            doc.get("direction"),
            tuple(BisectProbe.from_json(p) for p in doc["probes"]),
            str(doc.get("reason") or ""),
            doc.get("first"),
            doc.get("after"),
            None if comparison is None else _comparison(comparison),
        )
        return cls(dict(doc["metadata"]), dict(doc["settings"]), b, str(doc["line"]), float(doc["seconds"]))


# --- training runs ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TrainDocument:
    """`jaxmlp train --json`: one flat record per epoch, each with the settings, the data's origin and metadata."""

    records: tuple[Mapping[str, Any], ...]

    @staticmethod
    def recognises(doc: object) -> bool:
        return isinstance(doc, Mapping) and doc.get(METADATA_KEY) == TRAIN_KIND and isinstance(doc.get("records"), list)

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> TrainDocument:
        return cls(tuple(dict(r) for r in doc["records"]))

    def to_json(self) -> JSON:
        return {METADATA_KEY: TRAIN_KIND, "records": [dict(r) for r in self.records]}


# --- the regression detector's own check ------------------------------------------------------------------------


@dataclass(frozen=True)
class TrialSettings:
    workload: str
    processes_per_side: int
    trials: int
    inject_slowdown: float
    threshold: float
    alpha: float
    limit: int | None
    epochs: int
    dataset: str


@dataclass(frozen=True)
class Trial:
    """One trial: A against A with the test hook (``injected``), and A against A again (``aa``)."""

    trial: int
    values: Mapping[str, tuple[float, ...]]  # each side's steady epochs, a process each
    injected: Comparison
    aa: Comparison


def _comparison_json(c: Comparison) -> JSON:
    return {k: _json_float(v) if isinstance(v, float) else v for k, v in c._asdict().items()}


def _comparison(doc: Mapping[str, Any]) -> Comparison:
    number = {k: _float(doc.get(k)) for k in Comparison._fields if k not in ("n_baseline", "n_new", "verdict")}
    return Comparison(n_baseline=int(doc["n_baseline"]), n_new=int(doc["n_new"]), verdict=str(doc["verdict"]), **number)


FLAGGED = ("regression", "improvement")


@dataclass(frozen=True)
class TrialsDocument:
    """The detector's trials: how often it caught a known slowdown, and how often it cried wolf."""

    metadata: Mapping[str, Any]
    settings: TrialSettings
    trials: tuple[Trial, ...]

    @property
    def injected_flagged(self) -> int:
        return sum(t.injected.verdict == "regression" for t in self.trials)

    @property
    def aa_flagged(self) -> int:
        return sum(t.aa.verdict in FLAGGED for t in self.trials)

    @staticmethod
    def recognises(doc: object) -> bool:
        return isinstance(doc, Mapping) and doc.get(METADATA_KEY) == TRIALS_KIND

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> TrialsDocument:
        settings = dict(doc["settings"])
        if "rounds" in settings:  # files written before 2026-12-03 called the trials "rounds"
            settings["trials"] = settings.pop("rounds")
        if "pipeline" in settings:  # and the workload they timed its pipeline
            settings["workload"] = settings.pop("pipeline")
        trials = tuple(Trial(t["trial"], {k: tuple(v) for k, v in t["values"].items()}, _comparison(t["injected"]),
                             _comparison(t["aa"])) for t in doc["trials"])  # fmt: skip
        return cls(dict(doc["metadata"]), TrialSettings(**settings), trials)

    def to_json(self) -> JSON:
        s = self.settings
        return {METADATA_KEY: TRIALS_KIND, "metadata": dict(self.metadata), "settings": vars(s).copy(),
                "injected_flagged": self.injected_flagged, "aa_flagged": self.aa_flagged,
                "trials": [{"trial": t.trial, "values": {k: list(v) for k, v in t.values.items()},
                            "injected": _comparison_json(t.injected), "aa": _comparison_json(t.aa)}
                           for t in self.trials]}  # fmt: skip


Document = BenchmarkDocument | TrainDocument | TrialsDocument | BisectDocument | CellsDocument


def parse(doc: object) -> Document:
    """The typed document a result file's JSON holds, or a `JaxmlpError` saying it is none."""
    try:
        if TrialsDocument.recognises(doc):
            assert isinstance(doc, Mapping)
            return TrialsDocument.from_json(doc)
        if CellsDocument.recognises(doc):
            assert isinstance(doc, Mapping)
            return CellsDocument.from_json(doc)
        if BisectDocument.recognises(doc):
            assert isinstance(doc, Mapping)
            return BisectDocument.from_json(doc)
        if TrainDocument.recognises(doc):
            assert isinstance(doc, Mapping)
            return TrainDocument.from_json(doc)
        if BenchmarkDocument.recognises(doc):
            bench = BenchmarkDocument.from_json(doc)
            if (
                bench.is_sweep
                and bench.source.get("raw_processes")
                and any(b.id not in registry.BY_ID for b in bench.benchmarks)
            ):  # a sweep file from before the workload contract: its rows again, from its raw processes
                return SweepDocument.from_benchmarks(bench).to_benchmarks()
            return bench
    except (KeyError, TypeError, ValueError) as e:
        raise JaxmlpError(
            f"a jaxmlp results file with a missing or malformed field ({type(e).__name__}: {e})"
        ) from None
    raise JaxmlpError("neither a pytest-benchmark file nor a jaxmlp train --json file")


# --- the report ------------------------------------------------------------------------------------------------


class Table(NamedTuple):
    caption: str
    frame: pd.DataFrame


class Plot(NamedTuple):
    alt: str
    png: str  # base64-encoded PNG


@dataclass(frozen=True)
class ReportSection:
    """One section of a report: a title, a line saying where its numbers come from, its tables and plots."""

    title: str
    note: str
    tables: tuple[Table, ...] = ()
    plots: tuple[Plot, ...] = ()
