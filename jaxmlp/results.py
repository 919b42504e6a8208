"""Results into pandas: pytest-benchmark JSON files as one tidy DataFrame (a row per benchmark).

Only this module and the report/summary modules import pandas.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from jaxmlp.errors import JaxmlpError

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
    "profile",
)


def read_benchmark_json(path: str | Path) -> dict:
    """A pytest-benchmark JSON document, or a `JaxmlpError` saying what is wrong with the file."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise JaxmlpError(f"{path}: not readable as JSON ({e}); is it a pytest-benchmark results file?") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list) or "machine_info" not in doc:
        raise JaxmlpError(f"{path}: not a pytest-benchmark results file (no 'benchmarks' and 'machine_info')")
    return doc


def benchmark_rows(doc: dict, source: str = "") -> tuple[pd.DataFrame, pd.DataFrame]:
    """(one row per benchmark, one row per raw round time) from a pytest-benchmark document."""
    meta = doc["machine_info"].get("jaxmlp", {})
    common = {key: meta.get(key) for key in METADATA}
    common.update(
        file=source,
        timestamp=doc.get("datetime"),
        commit=common.get("commit") or (doc.get("commit_info") or {}).get("id"),
    )
    rows, samples = [], []
    for bench in doc["benchmarks"]:
        stats = bench.get("stats") or {}
        params = bench.get("params") or {}
        row = {
            "group": bench.get("group"),
            "name": bench.get("name"),
            "test": bench.get("name", "").split("[")[0],
            **params,
            **(bench.get("extra_info") or {}),
            **{key: stats.get(key) for key in STATS},
            **common,
        }
        rows.append(row)
        for i, seconds in enumerate(stats.get("data") or []):
            samples.append({"file": source, "group": row["group"], "name": row["name"], "round": i, "seconds": seconds})
    frame = pd.DataFrame(rows)
    return frame, pd.DataFrame(samples, columns=["file", "group", "name", "round", "seconds"])
