"""A version sweep's files: a pytest-benchmark file per cell, its samples worker processes, and ``cells.json``."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from jaxmlp import registry
from jaxmlp.measure.records import ProcessResult
from jaxmlp.results.schema.bench import BenchmarkDocument, BenchmarkRow, Stats
from jaxmlp.results.schema.common import CELLS, JSON, SWEEP, ResultFile

SWEEP_EXTRA = (
    "jax",
    "jaxlib",
    "backend",
    "device_kind",
    "dataset",
    "injected_slowdown",
    "samples",
    "epochs",
    "xla_flags",
    "workload_source",
    "compiles",
)
"""The metadata each sweep benchmark repeats in its ``extra_info``."""

QUANTITIES = (
    (registry.SWEEP_STEADY, "steady state", "steady_seconds"),
    (registry.SWEEP_FIRST, "first call", "first_seconds"),
    (registry.SWEEP_COMPILE, "compile", "compile_seconds"),
)
"""Each sweep benchmark, its group's words, and the `WorkloadTimes` field it holds a process's value of."""
MEMORY_GROUP = "peak memory"
"""The group's words of `registry.SWEEP_PEAK_RSS`: a process's own peak (`own_peaks`), a row per workload."""

RANK, NODE = "rank", "node"
"""A sweep process's metadata under ``mpirun`` or ``srun`` (schema version 6 on): the rank that ran it, its host."""


def own_peaks(processes: Sequence[ProcessResult]) -> tuple[float, ...]:
    """Each process's own peak resident memory (``peak_rss_bytes``, its ``VmHWM``), or () where any process lacks
    one or its peak may not be its own (``peak_rss_why``: sweeps before schema version 7, or ``/proc`` unread)."""
    peaks = [p.metadata.get("peak_rss_bytes") for p in processes]
    if not processes or any(p.metadata.get("peak_rss_why") for p in processes):
        return ()
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) and x > 0 for x in peaks):
        return ()
    return tuple(float(x) for x in peaks)  # type: ignore[arg-type]


PAIRWISE = "results_differ_pairs"
"""A sweep cell's metadata and rows: true where its ``results_differ`` names the cells it is compared with whose
values differ from its own (`jaxmlp.measure.sweep.pairs.recorded`); absent in older files, which name the first cell
only (`jaxmlp.results.sweep.compared` reads them as they were)."""


@dataclass(frozen=True)
class SweepDocument:
    """One cell of a sweep's matrix, a worker process a sample; ``differs``: workloads whose results differ, and why
    (``pairwise``: from the cells it is compared with, `PAIRWISE`; else from the first cell)."""

    label: str  # the version (or the name it was given with --env LABEL=PYTHON)
    processes: tuple[ProcessResult, ...]
    datetime: str
    differs: Mapping[str, str] = field(default_factory=dict)
    pairwise: bool = False

    def benchmark_rows(self) -> tuple[BenchmarkRow, ...]:
        """A `BenchmarkRow` per measured quantity; each raw sample is one process's value."""
        meta = self.processes[0].metadata
        extra = {key: meta.get(key) for key in SWEEP_EXTRA}
        rows: list[BenchmarkRow] = []
        nodes = self.nodes()
        for workload in dict.fromkeys(w for p in self.processes for w in p.workloads):  # one a process failed too
            runs = [p.workloads[workload] for p in self.processes if workload in p.workloads]
            facts = {**extra, "calls": len(runs[0].call_seconds) + 1, "results_differ": self.differs.get(workload)}
            if self.pairwise:
                facts[PAIRWISE] = True
            if nodes:
                facts["nodes"] = ",".join(nodes)
            for bench, group, attribute in QUANTITIES:
                values = [getattr(r, attribute) for r in runs]
                if all(math.isnan(v) for v in values):  # a version-1 step kept no first call
                    continue
                rows.append(
                    BenchmarkRow(
                        bench.name(workload), f"sweep: {group}", {"workload": workload}, facts, Stats.of(values)
                    )
                )
            if peaks := own_peaks(self.processes):
                name = registry.SWEEP_PEAK_RSS.name(workload)
                rows.append(
                    BenchmarkRow(name, f"sweep: {MEMORY_GROUP}", {"workload": workload}, facts, Stats.of(peaks))
                )
        return tuple(rows)

    def nodes(self) -> tuple[str, ...]:
        """The node (host) that measured each process ("" where one names none), or () where none does (files from
        before schema version 6): a cell of one node is compared within that node with a neighbour of several."""
        nodes = tuple(str(p.metadata.get(NODE) or "") for p in self.processes)
        return nodes if any(nodes) else ()

    def to_benchmarks(self) -> BenchmarkDocument:
        meta = {
            **self.processes[0].metadata,
            "sweep": True,
            "sweep_label": self.label,
            "processes": len(self.processes),
            "results_differ": dict(self.differs),
            **({PAIRWISE: True} if self.pairwise else {}),
        }
        plain = BenchmarkDocument(self.benchmark_rows(), meta, self.datetime, meta.get("commit"), SWEEP)
        raw = [p.to_json() for p in self.processes]
        source = {**plain.to_json(), "version": "jaxmlp.measure.sweep", "raw_processes": raw}
        return dataclasses.replace(plain, source=source)

    def to_json(self) -> JSON:
        return self.to_benchmarks().to_json()

    @classmethod
    def from_benchmarks(cls, doc: BenchmarkDocument) -> SweepDocument:
        raw = doc.source.get("raw_processes") or []
        return cls(
            str(doc.metadata.get("sweep_label")),
            tuple(ProcessResult.from_json(p) for p in raw),
            str(doc.datetime),
            dict(doc.metadata.get("results_differ") or {}),
            doc.metadata.get(PAIRWISE) is True,
        )


@dataclass(frozen=True)
class Cell:
    """One cell of a sweep's matrix in ``cells.json``: a release (or ``--env`` label) and the XLA flags its
    processes ran with, what became of it (``ok``, or why it was not measured), its file and what XLA said."""

    label: str
    xla_flags: str
    status: str  # "ok", or the reason the cell was not measured ("flag unknown in 0.4.30 (...)")
    file: str | None  # its sweep document, relative to the sweep's folder
    note: str = ""  # e.g. XLA's warning that a flag is no longer supported (and ignored)
    failed: int = 0  # processes of this cell that gave no sample (a crash, or past the time limit)
    failure: str = ""  # the last one's reason
    programs: Mapping[str, Any] = field(default_factory=dict)
    """What each workload compiled, from the cell's probe process (`jaxmlp.measure.programs`): HLO fingerprint and
    file (``hlo_file``, relative to the folder), operations, costs, memory, compile split; {} before 2026-12-05."""
    process: Mapping[str, Any] = field(default_factory=dict)
    """The probe process's own peak resident memory (``peak_rss_why`` where not its own) and its device peak."""


@dataclass(frozen=True)
class CellsDocument(ResultFile, kind=CELLS):
    """The matrix of one sweep, cell by cell: a cell that could not run says why here, not as a crash."""

    cells: tuple[Cell, ...]
    complete: bool = True  # False: the sweep was stopped before its last round (`jaxmlp sweep resume` goes on)
    limit_seconds: float = math.nan  # each worker process's time limit (NaN: written before limits)
