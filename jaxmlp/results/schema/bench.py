"""pytest-benchmark files: a `BenchmarkRow` per benchmark and the metadata that makes two files comparable."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from dataclasses import fields as dataclass_fields
from typing import Any

import jaxmlp.results.schema.fields as fields
from jaxmlp import registry
from jaxmlp.errors import JaxmlpError
from jaxmlp.results.schema.common import BENCH, JSON, KIND, METADATA_KEY, SCALING, SWEEP, header
from jaxmlp.results.schema.machines import machine
from jaxmlp.stats import quantile


@dataclass(frozen=True)
class Stats:
    """One benchmark's statistics over its rounds, and the rounds' raw times (seconds)."""

    min: float = math.nan  # NaN: not in the file, or null
    max: float = math.nan
    mean: float = math.nan
    stddev: float = math.nan
    median: float = math.nan
    q1: float = math.nan
    q3: float = math.nan
    iqr: float = math.nan
    rounds: int = 0  # how many samples (pytest-benchmark's word)
    outliers: str = ""
    data: tuple[float, ...] = ()  # the raw samples; empty where the file was written without --benchmark-save-data

    @classmethod
    def of(cls, data: Sequence[float]) -> Stats:
        """The statistics of ``data``, quartiles by `jaxmlp.stats.quantile`."""
        values = [float(x) for x in data]
        if not values:
            raise ValueError("no samples")
        q1, median, q3 = (quantile(sorted(values), q) for q in (0.25, 0.5, 0.75))
        return cls(
            min=min(values),
            max=max(values),
            mean=statistics.fmean(values),
            stddev=statistics.stdev(values) if len(values) > 1 else 0.0,
            median=median,
            q1=q1,
            q3=q3,
            iqr=q3 - q1,
            rounds=len(values),
            outliers="",
            data=tuple(values),
        )

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], where: str = "stats") -> Stats:
        """The statistics of a file's row, each field checked (`fields.record`); a null summary reads as NaN."""
        return fields.record(cls, doc, where)

    def to_json(self) -> JSON:
        out: JSON = {key: getattr(self, key) for key in SECONDS}
        return {**out, "rounds": self.rounds, "iterations": 1, "outliers": self.outliers, "data": list(self.data)}


SECONDS = tuple(f.name for f in dataclass_fields(Stats) if f.type == "float")
"""`Stats`' fields in seconds (min ... iqr), as the file's ``stats`` holds them."""
PER_ROUND = (*SECONDS, "ld15iqr", "hd15iqr", "total")
"""The statistics of a pytest-benchmark row in seconds (``ops`` their inverse), those jaxmlp reads and the rest."""
STATS = tuple(f.name for f in dataclass_fields(Stats) if f.name != "data")
"""`Stats`' fields a benchmark's row shows: the seconds, then ``rounds`` and ``outliers``."""


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
    def from_json(cls, doc: object, where: str = "benchmarks[0]", grouped: bool = True) -> BenchmarkRow:
        """A file's row, each field the type the tables read (`fields`), or a `JaxmlpError` naming the field;
        ``grouped``: with each parameter its benchmark is grouped by (`registry.Benchmark.params`)."""
        row = fields.typed(doc, where, fields.OBJECT)
        at = f"{where}."
        name = fields.field(row, "name", at, fields.TEXT)
        params = fields.scalars(row.get("params") or {}, at + "params")
        bench = registry.BY_ID.get(registry.benchmark_id(name))
        for key in bench.params if bench and grouped else ():  # what its tables group it by
            fields.field(params, key, f"{at}params.", fields.ROW_FIELDS.get(key, fields.TEXT))
        stats = fields.field(row, "stats", at, fields.OBJECT)
        fields.field(stats, "median", f"{at}stats.", fields.NUMBER)
        return cls(
            name=name,
            group=fields.optional(row, "group", at, fields.TEXT),
            params=params,
            extra_info=fields.scalars(row.get("extra_info") or {}, at + "extra_info"),
            stats=Stats.from_json(stats, at + "stats"),
        )

    def to_json(self) -> JSON:
        bench = registry.BY_ID.get(self.id)
        fullname = f"{bench.source}::{self.name}" if bench else self.name
        return {
            "name": self.name,
            "fullname": fullname,
            "group": self.group,
            "params": dict(self.params),
            "extra_info": dict(self.extra_info),
            "stats": None if self.stats is None else self.stats.to_json(),
        }


METADATA_NESTED = {"devices": fields.OBJECT, "results_differ": fields.OBJECT, "process_ids": fields.LIST}
"""The fields of a run's metadata that hold an object or a list (each backend's device, a sweep's workloads whose
results differ, a distributed run's processes); every other is a number, text, true/false or null."""


def own_peaks(scopes: Iterable[object]) -> bool:
    r"""Whether recorded peaks are each their benchmark's own; False where any is not or says nothing, or none is."""
    said = list(scopes)
    return bool(said) and all(scope == registry.PEAK_SCOPE_BENCHMARK for scope in said)


@dataclass(frozen=True)
class BenchmarkDocument:
    """A pytest-benchmark JSON file: its benchmarks and the metadata that makes them comparable."""

    benchmarks: tuple[BenchmarkRow, ...]
    metadata: Mapping[str, Any]  # machine_info["jaxmlp"]: versions, machine, flags, size, commit
    datetime: str | None
    commit: str | None
    kind: str = BENCH  # BENCH, SCALING or SWEEP
    source: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)  # the file (current form)

    @property
    def is_sweep(self) -> bool:
        return self.kind == SWEEP

    @property
    def is_scaling(self) -> bool:
        """Written by `jaxmlp scaling`."""
        return self.kind == SCALING

    @property
    def backends(self) -> tuple[str, ...]:
        return tuple(sorted({str(b.extra_info["backend"]) for b in self.benchmarks if b.extra_info.get("backend")}))

    @staticmethod
    def recognises(doc: object) -> bool:
        """Whether ``doc`` is one (its fields' types checked by `from_json`)."""
        return isinstance(doc, Mapping) and "benchmarks" in doc and "machine_info" in doc

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], grouped: bool = True) -> BenchmarkDocument:
        """The document in a file's JSON, in its current form (`jaxmlp.results.schema.upgrade` upgrades others);
        ``grouped``: its rows hold their benchmarks' parameters (not yet, in an old sweep's rows made again)."""
        if "benchmarks" not in doc and "machine_info" not in doc:
            raise JaxmlpError("not a pytest-benchmark results file (no 'benchmarks' and 'machine_info')")
        machine = fields.field(doc, "machine_info", "", fields.OBJECT)
        listed = fields.field(doc, "benchmarks", "", fields.LIST)
        meta = fields.scalars(machine.get(METADATA_KEY) or {}, f"machine_info.{METADATA_KEY}", METADATA_NESTED)
        commit_info = fields.optional(doc, "commit_info", "", fields.OBJECT, {})
        commit = meta.get("commit") or fields.optional(commit_info, "id", "commit_info.", fields.TEXT)
        rows = tuple(BenchmarkRow.from_json(b, f"benchmarks[{i}]", grouped) for i, b in enumerate(listed))
        datetime = fields.optional(doc, "datetime", "", fields.TEXT)
        return cls(rows, meta, datetime, commit, str(doc.get(KIND) or BENCH), dict(doc))

    def to_json(self) -> JSON:
        """The file as read (all pytest-benchmark wrote kept), or as built here, with its kind and schema version."""
        if self.source:
            return {**dict(self.source), **header(self.kind)}
        return {
            **header(self.kind),
            "machine_info": {"node": self.metadata.get(registry.HOST), METADATA_KEY: dict(self.metadata)},
            "commit_info": {"id": self.commit},
            "benchmarks": [b.to_json() for b in self.benchmarks],
            "datetime": self.datetime,
            "version": "jaxmlp",
        }

    @property
    def measured_on(self) -> tuple[str, ...]:
        """What the numbers were measured on, as every output names it: documents whose machines differ compare them."""
        return (machine(self.metadata),)

    def peak_memory(self) -> dict[str, float]:
        """Each benchmark's peak host memory (``extra_info["peak_rss_bytes"]``) by full name; those without it (runs
        before benchmarks recorded memory) left out. Several files of one benchmark: the highest peak."""
        out: dict[str, float] = {}
        for bench in self.benchmarks:
            peak = bench.extra_info.get("peak_rss_bytes")
            if isinstance(peak, (int, float)):
                out[bench.name] = max(float(peak), out.get(bench.name, 0.0))
        return out

    def peaks_own(self) -> bool:
        """`own_peaks` of this document's recorded peaks."""
        return own_peaks(
            b.extra_info.get("peak_rss_scope") for b in self.benchmarks if "peak_rss_bytes" in b.extra_info
        )

    def samples(self) -> dict[str, list[float]]:
        """Raw samples by full benchmark name; a benchmark without them is a `JaxmlpError` saying how to get them."""
        out: dict[str, list[float]] = {}
        for bench in self.benchmarks:
            if bench.stats is None or not bench.stats.data:
                raise JaxmlpError(
                    f"benchmark {bench.name} has no raw samples (stats.data): "
                    "rerun pytest with --benchmark-save-data (nox -s bench does)"
                )
            out.setdefault(bench.name, []).extend(bench.stats.data)
        return out
