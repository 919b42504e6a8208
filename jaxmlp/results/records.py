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

    name: str  # as pytest writes it: test_epoch[cpu-scan]
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
        return cls(name=str(doc.get("name", "")), group=doc.get("group"), params=dict(doc.get("params") or {}),
                   extra_info=dict(doc.get("extra_info") or {}),
                   stats=Stats.from_json(stats) if isinstance(stats, Mapping) else None)  # fmt: skip

    def to_json(self) -> JSON:
        bench = registry.BY_ID.get(self.id)
        fullname = f"{bench.source}::{self.name}" if bench else self.name
        return {"name": self.name, "fullname": fullname, "group": self.group,
                "params": dict(self.params), "extra_info": dict(self.extra_info),
                "stats": None if self.stats is None else self.stats.to_json()}  # fmt: skip


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
class PipelineTimes:
    """One worker process's epochs of one pipeline (seconds)."""

    compile_seconds: float
    first_epoch_seconds: float
    epoch_seconds: tuple[float, ...]  # the epochs after the first
    steady_seconds: float  # their median: the steady state

    @classmethod
    def of(cls, compile_seconds: float, epochs: Sequence[float]) -> PipelineTimes:
        return cls(compile_seconds, epochs[0], tuple(epochs[1:]), statistics.median(epochs[1:]))


@dataclass(frozen=True)
class StepTimes:
    compile_seconds: float
    step_seconds: float  # median of the timed steps


@dataclass(frozen=True)
class ProcessResult:
    """What one sweep worker process measured, with its metadata (versions, settings, the test hook)."""

    metadata: Mapping[str, Any]
    pipelines: Mapping[str, PipelineTimes]
    step: StepTimes | None = None

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> ProcessResult:
        pipelines = {name: PipelineTimes(**{**p, "epoch_seconds": tuple(p["epoch_seconds"])})
                     for name, p in doc["pipelines"].items()}  # fmt: skip
        step = doc.get("step")
        return cls(dict(doc["metadata"]), pipelines, StepTimes(**step) if step else None)

    def to_json(self) -> JSON:
        pipelines = {name: dataclasses.asdict(p) for name, p in self.pipelines.items()}
        out: JSON = {"metadata": dict(self.metadata), "pipelines": pipelines}
        if self.step is not None:
            out["step"] = dataclasses.asdict(self.step)
        return out


SWEEP_EXTRA = ("jax", "jaxlib", "backend", "device_kind", "dataset", "injected_slowdown", "samples", "epochs")
"""The metadata each sweep benchmark repeats in its ``extra_info``."""


@dataclass(frozen=True)
class SweepDocument:
    """One version of a sweep: a worker process per sample, measured in that version's environment."""

    label: str  # the version (or the name it was given with --env LABEL=PYTHON)
    processes: tuple[ProcessResult, ...]
    datetime: str

    def benchmark_rows(self) -> tuple[BenchmarkRow, ...]:
        """A `BenchmarkRow` per measured quantity; each raw sample is one process's value."""
        meta = self.processes[0].metadata
        extra = {key: meta.get(key) for key in SWEEP_EXTRA}
        rows: list[BenchmarkRow] = []

        def add(bench: registry.Benchmark, group: str, values: list[float], pipeline: str | None = None) -> None:
            params = {} if pipeline is None else {"pipeline": pipeline}
            name = bench.name(pipeline) if pipeline else bench.name()
            rows.append(BenchmarkRow(name, group, params, dict(extra), Stats.of(values)))

        for pipeline in self.processes[0].pipelines:
            runs = [p.pipelines[pipeline] for p in self.processes]
            add(registry.SWEEP_EPOCH, "sweep: steady-state epoch", [r.steady_seconds for r in runs], pipeline)
            add(registry.SWEEP_FIRST_EPOCH, "sweep: first epoch", [r.first_epoch_seconds for r in runs], pipeline)
            add(registry.SWEEP_COMPILE, "sweep: compile", [r.compile_seconds for r in runs], pipeline)
        steps = [p.step for p in self.processes if p.step is not None]
        if len(steps) == len(self.processes):
            add(registry.SWEEP_STEP, "sweep: jitted step", [s.step_seconds for s in steps])
            add(registry.SWEEP_STEP_COMPILE, "sweep: compile", [s.compile_seconds for s in steps])
        return tuple(rows)

    def to_benchmarks(self) -> BenchmarkDocument:
        meta = {**self.processes[0].metadata, "sweep": True, "sweep_label": self.label,
                "processes": len(self.processes)}  # fmt: skip
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
                   str(doc.datetime))  # fmt: skip


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
    pipeline: str
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


Document = BenchmarkDocument | TrainDocument | TrialsDocument


def parse(doc: object) -> Document:
    """The typed document a result file's JSON holds, or a `JaxmlpError` saying it is none."""
    try:
        if TrialsDocument.recognises(doc):
            assert isinstance(doc, Mapping)
            return TrialsDocument.from_json(doc)
        if TrainDocument.recognises(doc):
            assert isinstance(doc, Mapping)
            return TrainDocument.from_json(doc)
        if BenchmarkDocument.recognises(doc):
            return BenchmarkDocument.from_json(doc)
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
