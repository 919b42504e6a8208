"""Result documents as tidy pandas DataFrames: a row per benchmark and per training epoch.

Each row carries its parameters, its statistics and the metadata that makes two rows comparable;
raw round times go to a second, long-form table. `query` picks rows by benchmark and parameters.
Only the results layer and the report import pandas.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from jaxmlp import registry
from jaxmlp.results.reading import Scan, Skipped
from jaxmlp.results.schema.bench import BenchmarkDocument
from jaxmlp.results.schema.bisect import BisectDocument
from jaxmlp.results.schema.corpus import CorpusDocument
from jaxmlp.results.schema.explain import ExplainDocument
from jaxmlp.results.schema.roofline import RooflineDocument
from jaxmlp.results.schema.sweep import CellsDocument
from jaxmlp.results.schema.train import TrainDocument
from jaxmlp.results.schema.trials import TrialsDocument
from jaxmlp.results.schema.tta import TtaDocument
from jaxmlp.results.schema.validation import ValidationDocument
from jaxmlp.results.store import ResultsStore

STATS = ("min", "max", "mean", "stddev", "median", "iqr", "q1", "q3", "rounds", "outliers")
METADATA = (
    "jax",
    "jaxlib",
    "torch",
    "torchvision",
    "python",
    "numpy",
    "commit",
    "host",
    "cpu_model",
    "cpu_count",
    "cpu_affinity",
    "xla_flags",
    "jax_default_matmul_precision",
    "size",
    "rounds_asked",
    "sweep",
    "sweep_label",
    "processes",
    "injected_slowdown",
    "backend",
    "device_kind",
    "precision",
    "partial",
    "machine_cpu",
    "machine_cores",
    "machine_backend",
    "machine_device",
    "machine_name",
)
DEVICE_METADATA = ("jax_default_matmul_precision",)  # read from the run's device where the run's metadata lacks it
SAMPLE_COLUMNS = ["file", "group", "name", "round", "seconds"]


class Results(NamedTuple):
    runs: pd.DataFrame  # a row per benchmark and per training epoch
    samples: pd.DataFrame  # a row per raw round time: file, group, name, round, seconds
    skipped: tuple[Skipped, ...]  # files that are not results, and why
    trials: tuple[tuple[Path, TrialsDocument], ...]  # the detector's trials
    captures: tuple[Path, ...]  # profiler captures (.xplane.pb)
    bisections: tuple[tuple[Path, BisectDocument], ...] = ()  # `jaxmlp sweep bisect`
    cells: tuple[tuple[Path, CellsDocument], ...] = ()  # each sweep's matrix, cell by cell
    explanations: tuple[tuple[Path, ExplainDocument], ...] = ()  # `jaxmlp sweep explain`
    rooflines: tuple[tuple[Path, RooflineDocument], ...] = ()  # `jaxmlp roofline`
    validations: tuple[tuple[Path, ValidationDocument], ...] = ()  # `jaxmlp sweep validate`
    tta: pd.DataFrame = pd.DataFrame()  # a row per `jaxmlp tta` run (`tta_rows`)
    tta_documents: tuple[tuple[Path, TtaDocument], ...] = ()
    corpora: tuple[tuple[Path, CorpusDocument], ...] = ()  # `jaxmlp sweep corpus`: scorecards


def benchmark_rows(doc: BenchmarkDocument, source: str = "") -> tuple[pd.DataFrame, pd.DataFrame]:
    """(one row per benchmark, one row per raw round time) of a pytest-benchmark document."""
    rows: list[dict[str, Any]] = []
    samples = _Samples()
    _benchmark_records(doc, source, rows, samples)
    return pd.DataFrame(rows), samples.frame()


class _Samples:
    """Raw round times gathered column by column (a folder of many runs holds millions)."""

    def __init__(self) -> None:
        self.columns: dict[str, list[Any]] = {column: [] for column in SAMPLE_COLUMNS}

    def add(self, file: str, group: str | None, name: str, data: Sequence[float]) -> None:
        n = len(data)
        for column, value in (("file", file), ("group", group), ("name", name)):
            self.columns[column].extend([value] * n)
        self.columns["round"].extend(range(n))
        self.columns["seconds"].extend(data)

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.columns, columns=SAMPLE_COLUMNS)


def _benchmark_records(doc: BenchmarkDocument, source: str, rows: list[dict[str, Any]], samples: _Samples) -> None:
    """A pytest-benchmark document's rows (one per benchmark) and raw round times, added to ``rows`` and
    ``samples``."""
    common = {key: doc.metadata.get(key) for key in METADATA}
    common.update(file=source, timestamp=doc.datetime, commit=doc.commit)
    devices = doc.metadata.get("devices") or {}
    for bench in doc.benchmarks:
        stats = {key: getattr(bench.stats, key) if bench.stats else None for key in STATS}
        device = devices.get(bench.extra_info.get("backend") or bench.params.get("backend")) or {}
        per_device = {key: device[key] for key in DEVICE_METADATA if common.get(key) is None and key in device}
        # a parameter is the row's; the run's metadata fills the rest, but a value the run left empty does not
        # hide what the benchmark recorded itself (its device's kind)
        own = {key for key, value in bench.extra_info.items() if value is not None}
        mine = {
            key: value
            for key, value in common.items()
            if key not in bench.params and not (value is None and key in own)
        }
        rows.append(
            {
                "group": bench.group,
                "name": bench.name,
                "test": bench.id,
                **bench.params,
                **bench.extra_info,
                **stats,
                **mine,
                **per_device,
            }
        )
        samples.add(source, bench.group, bench.name, bench.stats.data if bench.stats else ())


def train_rows(doc: TrainDocument, source: str = "") -> pd.DataFrame:
    """One row per epoch of a `jaxmlp train --json` document."""
    rows = []
    for record in doc.records:
        pipeline, backend = record.get("config_pipeline"), record.get("backend")
        rows.append(
            {
                "group": f"train: {record.get('dataset')}, {pipeline}, {backend}",
                "name": f"epoch {record.get('epoch')}",
                "test": registry.TRAIN_EPOCH.id,
                "pipeline": pipeline,
                "batch_size": record.get("config_batch_size"),
                "workers": record.get("config_workers"),
                **record,
                "precision": record.get("precision") or "f32",
                "median": record.get("epoch_seconds"),
                "rounds": 1,
                "file": source,
            }
        )
    return pd.DataFrame(rows)


def tta_rows(doc: TtaDocument, source: str = "") -> pd.DataFrame:
    """One row per run of a `jaxmlp tta` document: its settings, its times and the run's metadata."""
    meta = {key: doc.metadata.get(key) for key in METADATA}
    settings = {f"tta_{k}": v for k, v in doc.settings.items() if not isinstance(v, (list, tuple, dict))}
    rows = [
        {
            **settings,
            **meta,
            **{k: v for k, v in run.items() if k != "evaluations"},
            "evaluations": len(run.get("evaluations") or ()),
            "file": source,
            "timestamp": doc.metadata.get("timestamp"),
        }
        for run in doc.runs
    ]
    return pd.DataFrame(rows)


def _concat(frames: Iterable[pd.DataFrame], columns: list[str] | None = None) -> pd.DataFrame:
    frames = [f for f in frames if not f.empty]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)


def results(scan: Scan) -> Results:
    """One walk's documents as one table of runs and one of samples."""
    rows: list[dict[str, Any]] = []
    samples = _Samples()
    for path, bench in scan.of(BenchmarkDocument):  # one table built once, not one a file then joined
        _benchmark_records(bench, str(path), rows, samples)
    runs = [pd.DataFrame(rows), *(train_rows(train, str(path)) for path, train in scan.of(TrainDocument))]
    tta = _concat(tta_rows(doc, str(path)) for path, doc in scan.of(TtaDocument))
    return Results(
        _concat(runs),
        samples.frame(),
        scan.skipped,
        tuple(scan.of(TrialsDocument)),
        scan.captures,
        tuple(scan.of(BisectDocument)),
        tuple(scan.of(CellsDocument)),
        tuple(scan.of(ExplainDocument)),
        tuple(scan.of(RooflineDocument)),
        tuple(scan.of(ValidationDocument)),
        tta,
        tuple(scan.of(TtaDocument)),
        tuple((f.path, f.document) for f in scan.documents if isinstance(f.document, CorpusDocument)),
    )


def load(store: ResultsStore) -> Results:
    """Everything in a results folder as tidy DataFrames: `results` of the store's one walk."""
    return results(store.scan())


def query(runs: pd.DataFrame, benchmark: registry.Benchmark, **where: object) -> pd.DataFrame:
    """The rows of one benchmark (and the given parameter values), without all-empty columns, integer parameters
    as integers."""
    if "test" not in runs:
        return runs.iloc[0:0]
    keep = runs["test"] == benchmark.id
    for column, value in where.items():
        keep &= runs[column] == value if column in runs else False
    rows = runs[keep].dropna(axis="columns", how="all")
    for column in ("batch_size", "workers"):
        if column in rows:
            rows = rows.astype({column: "Int64"})
    return rows


def sweep_rows(runs: pd.DataFrame) -> pd.DataFrame:
    """The rows written by version sweeps, with their cell's ``release``: the label it was run under (the
    release, or the name given with ``--env LABEL=PYTHON``)."""
    if "sweep" not in runs:
        return runs.iloc[0:0]
    rows = runs[runs["sweep"].fillna(False).astype(bool)]
    label = rows["sweep_label"] if "sweep_label" in rows else rows["jax"]
    return rows.assign(release=label.fillna(rows["jax"]).astype(str))


def without_sweeps(runs: pd.DataFrame) -> pd.DataFrame:
    if "sweep" not in runs:
        return runs
    return runs[~runs["sweep"].fillna(False).astype(bool)]
