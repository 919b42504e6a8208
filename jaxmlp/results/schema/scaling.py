"""`jaxmlp scaling`'s file: a pytest-benchmark file with a row per benchmark, device count N and process count P."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from jaxmlp import registry
from jaxmlp.measure.records import ProcessResult
from jaxmlp.results.schema.bench import BenchmarkDocument, BenchmarkRow, Stats
from jaxmlp.results.schema.common import SCALING

SCALING_EXTRA = (
    "backend",
    "device_kind",
    "devices",
    "dataset",
    "samples",
    "steps",
    "batch_size",
    "flops",
    "max_relative_difference",
    "xla_flags",
    "launcher",
    "global_device_count",
    "all_reduce_share",
    "trace",
)
"""The worker's metadata that each scaling row repeats in its ``extra_info``."""


def rows_of(result: ProcessResult) -> list[BenchmarkRow]:
    """A worker's two benchmark rows: the sharded epoch and step (with the all-reduce's share where N > 1)."""
    meta = result.metadata
    extra = {key: meta.get(key) for key in SCALING_EXTRA}
    params = {"backend": meta["backend"], "devices": meta["devices"], "processes": meta.get("process_count", 1)}
    rows = []
    for bench, times, what in (
        (registry.SCALING_EPOCH, result.workloads["epoch"], "epoch"),
        (registry.SCALING_STEP, result.workloads["step"], "step"),
    ):
        info = {**extra, "compile_seconds": times.compile_seconds, f"first_{what}_seconds": times.first_seconds}
        rows.append(
            BenchmarkRow(
                bench.name(*params.values()),
                f"scaling: sharded {what}, {meta['backend']}",
                params,
                info,
                Stats.of(times.call_seconds),
            )
        )
    return rows


def document(results: Sequence[ProcessResult], partial: str | None = None) -> BenchmarkDocument:
    """Every device count's results as one document; ``partial``: why only some (N, P) were run, None if all."""
    meta: dict[str, Any] = {
        **results[0].metadata,
        "scaling": True,
        "partial": partial,
        "xla_flags": None,
        "devices": None,
        "all_reduce_share": None,
        "trace": None,
        "launcher": None,
        "process_count": None,
        "process_index": None,
        "process_ids": None,
        "global_device_count": None,
    }
    rows = tuple(row for result in results for row in rows_of(result))
    return BenchmarkDocument(rows, meta, dt.datetime.now(dt.UTC).isoformat(), meta.get("commit"), SCALING)
