"""Result documents as tidy pandas DataFrames (a row per benchmark and epoch, raw times apart); `query` picks rows."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import repeat
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from jaxmlp import registry
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
from jaxmlp.results.store import index
from jaxmlp.results.store.reading import Scan, Skipped, Summarised
from jaxmlp.results.store.rows import METADATA, POINT_FIELDS, SAMPLE_COLUMNS, Samples, benchmark_records
from jaxmlp.results.store.writing import ResultsStore

OLDER_COLUMNS = [*POINT_FIELDS, "kind"]


class OlderSweep(NamedTuple):
    """A sweep or timeline folder older than the newest (`index.RECENT_SWEEPS`), named from the folder's index."""

    folder: Path
    kind: str  # sweep, timeline
    stamp: str  # the folder's time (`layout.stamp_in`)
    releases: tuple[str, ...]  # its cells' releases (or labels), in version order


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
    # the runs read from the folder's index, not in full (older than each machine's newest): a row per benchmark,
    # its history's fields (`rows.POINT_FIELDS`) and the run's ``kind`` (bench, scaling)
    older: pd.DataFrame = pd.DataFrame(columns=OLDER_COLUMNS)
    older_sweeps: tuple[OlderSweep, ...] = ()


def benchmark_rows(doc: BenchmarkDocument, source: str = "") -> tuple[pd.DataFrame, pd.DataFrame]:
    """(one row per benchmark, one row per raw round time) of a pytest-benchmark document."""
    rows: list[dict[str, Any]] = []
    samples = Samples()
    benchmark_records(doc, source, rows, samples)
    return pd.DataFrame(rows), _samples_frame(samples)


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
    samples = Samples()
    for path, bench in scan.of(BenchmarkDocument):  # one table built once, not one a file then joined
        benchmark_records(bench, str(path), rows, samples)
    runs = [pd.DataFrame(rows), *(train_rows(train, str(path)) for path, train in scan.of(TrainDocument))]
    tta = _concat(tta_rows(doc, str(path)) for path, doc in scan.of(TtaDocument))
    return Results(
        plain_text(_concat(runs)),
        plain_text(_samples_frame(samples)),
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
        older_rows([s for s in scan.summarised if s.kind in index.RUN_KINDS]),
        older_sweeps([s for s in scan.summarised if s.kind not in index.RUN_KINDS]),
    )


def plain_text(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its text columns as Python strings (object), not Arrow-backed ``str`` (docs/results/store.md)."""
    text = {column: object for column, dtype in frame.dtypes.items() if isinstance(dtype, pd.StringDtype)}
    return frame.astype(text).copy() if text else frame  # copied: one block per dtype, not one per column


def _samples_frame(samples: Samples) -> pd.DataFrame:
    return pd.DataFrame(samples.columns, columns=SAMPLE_COLUMNS)


def older_rows(summarised: Sequence[Summarised]) -> pd.DataFrame:
    """The runs read from the index as one table (`Results.older`), built column by column, its text as categories."""
    columns: dict[str, list[Any]] = {column: [] for column in OLDER_COLUMNS}
    for run in summarised:
        n, same, each = run.points["n"], run.points["same"], run.points["each"]
        for field in POINT_FIELDS:
            columns[field].extend(each[field] if field in each else repeat(same.get(field), n))
        columns["file"][len(columns["file"]) - n :] = repeat(str(run.path), n)
        columns["kind"].extend(repeat(run.kind, n))
    return pd.DataFrame({column: _compact(values) for column, values in columns.items()}, columns=OLDER_COLUMNS)


def older_sweeps(cells: Sequence[Summarised]) -> tuple[OlderSweep, ...]:
    """The sweep and timeline folders whose cells the index named (`Results.older_sweeps`), newest first."""
    folders: dict[Path, list[Summarised]] = {}
    for cell in cells:
        folders.setdefault(cell.path.parent, []).append(cell)
    out = []
    for folder, mine in folders.items():
        releases = {str(c.points.get("release")) for c in mine if c.points.get("release") is not None}
        ordered = tuple(sorted(releases, key=registry.version_key))
        out.append(OlderSweep(folder, mine[0].kind, mine[0].stamp, ordered))
    return tuple(sorted(out, key=lambda s: s.stamp, reverse=True))


def _compact(values: list[Any]) -> Any:
    """A column's values: text (or text and empties) as a categorical, numbers as they are."""
    if not values:
        return values
    coded = pd.Categorical(values)
    return coded if pd.api.types.infer_dtype(coded.categories, skipna=True) in ("string", "empty") else values


def load(store: ResultsStore) -> Results:
    """Everything in a results folder as tidy DataFrames: `results` of the store's one walk."""
    return results(store.scan())


def load_indexed(store: ResultsStore, command: str) -> Results:
    """A results folder read through its index, the runs older than each machine's newest in `Results.older`."""
    return results(index.scan(store.folder, command))


def query(runs: pd.DataFrame, benchmark: registry.Benchmark, **where: object) -> pd.DataFrame:
    """The rows of one benchmark (and parameter values), without all-empty columns, integers as integers."""
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
    """The rows of version sweeps, with their cell's ``release`` (the release, or an ``--env`` label)."""
    if "sweep" not in runs:
        return runs.iloc[0:0]
    rows = runs[runs["sweep"].fillna(False).astype(bool)]
    label = rows["sweep_label"] if "sweep_label" in rows else rows["jax"]
    return rows.assign(release=label.fillna(rows["jax"]).astype(str))


def without_sweeps(runs: pd.DataFrame) -> pd.DataFrame:
    return runs if "sweep" not in runs else runs[~runs["sweep"].fillna(False).astype(bool)]
