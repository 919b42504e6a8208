"""A benchmark document's rows as plain records and the fields a history needs, for `frames` and `index`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from jaxmlp.results.schema import fields
from jaxmlp.results.schema.bench import STATS, BenchmarkDocument
from jaxmlp.results.schema.machines import MACHINE, SETTINGS

METADATA = tuple(fields.METADATA_FIELDS)
"""A run's metadata that each of its benchmark rows carries (`fields.METADATA_FIELDS`)."""
DEVICE_METADATA = ("jax_default_matmul_precision",)  # read from the run's device where the run's metadata lacks it
SAMPLE_COLUMNS = ["file", "group", "name", "round", "seconds"]

COMPARABLE = (*MACHINE, *SETTINGS)
"""What two runs must share for their times to be compared (`jaxmlp.results.history`)."""
POINT_FIELDS = tuple(
    dict.fromkeys(
        ("group", "name", "test", "median", "q1", "q3", "rounds", "file", "timestamp", "commit", "jax", "sweep")
        + COMPARABLE
    )
)
"""The fields of a benchmark's row that its history reads: what a results folder's index keeps of an older run."""


class Samples:
    """Raw round times gathered column by column (a folder of many runs holds millions)."""

    def __init__(self) -> None:
        self.columns: dict[str, list[Any]] = {column: [] for column in SAMPLE_COLUMNS}

    def add(self, file: str, group: str | None, name: str, data: Sequence[float]) -> None:
        n = len(data)
        for column, value in (("file", file), ("group", group), ("name", name)):
            self.columns[column].extend([value] * n)
        self.columns["round"].extend(range(n))
        self.columns["seconds"].extend(data)


def benchmark_records(doc: BenchmarkDocument, source: str, rows: list[dict[str, Any]], samples: Samples) -> None:
    """A pytest-benchmark document's rows and raw round times, added to ``rows`` and ``samples``."""
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


def points(doc: BenchmarkDocument) -> dict[str, Any]:
    """A benchmark document's `POINT_FIELDS` (its file left empty): what its history needs of it, without its
    samples. ``n`` rows; ``same``: the fields with one value in every row (the run's), ``each``: a list per field."""
    rows: list[dict[str, Any]] = []
    benchmark_records(doc, "", rows, Samples())
    same, each = {}, {}
    for field in POINT_FIELDS:
        values = [row.get(field) for row in rows]
        if all(v == values[0] and type(v) is type(values[0]) for v in values):
            same[field] = values[0] if values else None
        else:
            each[field] = values
    return {"n": len(rows), "same": same, "each": each}
