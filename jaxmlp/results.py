"""Results into pandas: every result file under a folder as one tidy DataFrame.

A row per benchmark (pytest-benchmark JSON) and per epoch (`jaxmlp train --json`),
with the parameters, the statistics and the metadata that make two rows
comparable; raw round times go to a second, long-form table. Files that are
corrupt or not results are skipped with a warning and never modified.

Only this module and the report/summary modules import pandas.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import NamedTuple

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
    "size",
    "sweep",
    "injected_slowdown",
)


def _read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise JaxmlpError(f"not readable as JSON ({e})") from None


def _is_benchmark(doc) -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("benchmarks"), list) and "machine_info" in doc


def _is_trials(doc) -> bool:
    return isinstance(doc, dict) and doc.get("jaxmlp") == "detector-trials"


def _is_train(doc) -> bool:
    return isinstance(doc, dict) and doc.get("jaxmlp") == "train" and isinstance(doc.get("records"), list)


def read_benchmark_json(path: str | Path) -> dict:
    """A pytest-benchmark JSON document, or a `JaxmlpError` saying what is wrong with the file."""
    path = Path(path)
    try:
        doc = _read_json(path)
    except JaxmlpError as e:
        raise JaxmlpError(f"{path}: {e}; is it a pytest-benchmark results file?") from None
    if not _is_benchmark(doc):
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


def train_rows(doc: dict, source: str = "") -> pd.DataFrame:
    """One row per epoch of a `jaxmlp train --json` document."""
    rows = []
    for record in doc["records"]:
        rows.append(
            {
                "group": f"train: {record.get('dataset')}, {record.get('config_pipeline')}, {record.get('backend')}",
                "name": f"epoch {record.get('epoch')}",
                "test": "train_epoch",
                "pipeline": record.get("config_pipeline"),
                "batch_size": record.get("config_batch_size"),
                "workers": record.get("config_workers"),
                **record,
                "median": record.get("epoch_seconds"),
                "rounds": 1,
                "file": source,
            }
        )
    return pd.DataFrame(rows)


class Results(NamedTuple):
    runs: pd.DataFrame  # a row per benchmark and per training epoch
    samples: pd.DataFrame  # a row per raw round time: file, group, name, round, seconds
    skipped: list[tuple[str, str]]  # (file, why) for files that are not results


def load_file(path: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The rows of one results file (benchmark or training), or a `JaxmlpError` saying why it is not one."""
    doc = _read_json(path)
    if _is_trials(doc):  # not a table of timings: see `detector_trials`
        return pd.DataFrame(), pd.DataFrame()
    if _is_train(doc):
        return train_rows(doc, str(path)), pd.DataFrame()
    if _is_benchmark(doc):
        return benchmark_rows(doc, str(path))
    raise JaxmlpError("neither a pytest-benchmark file nor a jaxmlp train --json file")


def load_results(folder: str | Path) -> Results:
    """Every results file under ``folder`` (recursively) as one tidy table; the others skipped with a warning."""
    folder = Path(folder)
    if not folder.is_dir():
        raise JaxmlpError(f"results folder {folder} does not exist: run `nox -s bench` first, or pass --results DIR")
    runs, samples, skipped = [], [], []
    for path in sorted(folder.rglob("*.json")):
        if any(part.startswith(".") for part in path.relative_to(folder).parts):
            continue
        try:
            rows, raw = load_file(path)
        except JaxmlpError as e:
            skipped.append((str(path), str(e)))
            warnings.warn(f"skipping {path}: {e}", stacklevel=2)
            continue
        runs.append(rows)
        samples.append(raw)
    runs_df = pd.concat(runs, ignore_index=True) if runs else pd.DataFrame()
    samples_df = (
        pd.concat(samples, ignore_index=True)
        if samples
        else pd.DataFrame(columns=["file", "group", "name", "round", "seconds"])
    )
    return Results(runs_df, samples_df, skipped)


def benchmark_samples(path: str | Path) -> dict[str, list[float]]:
    """Raw samples by benchmark name from a pytest-benchmark file, or from every such file in a folder.

    Samples of the same benchmark in several files are pooled. A benchmark without raw samples
    (written without ``--benchmark-save-data``) is a `JaxmlpError` saying so.
    """
    path = Path(path)
    if path.is_dir():
        files = sorted(p for p in path.rglob("*.json") if not any(part.startswith(".") for part in p.parts))
        docs = []
        for file in files:
            try:
                docs.append((file, read_benchmark_json(file)))
            except JaxmlpError:
                continue  # a folder may hold other files (training records, reports)
        if not docs:
            raise JaxmlpError(f"{path}: no pytest-benchmark JSON files in this folder")
    elif path.exists():
        docs = [(path, read_benchmark_json(path))]
    else:
        raise JaxmlpError(f"{path} does not exist: give a pytest-benchmark JSON file or a folder of them")
    samples: dict[str, list[float]] = {}
    for file, doc in docs:
        for bench in doc["benchmarks"]:
            data = (bench.get("stats") or {}).get("data")
            if not data:
                raise JaxmlpError(
                    f"{file}: benchmark {bench.get('name')} has no raw samples (stats.data): "
                    "rerun pytest with --benchmark-save-data (nox -s bench does)"
                )
            samples.setdefault(bench["name"], []).extend(float(x) for x in data)
    return samples


def compare_samples(baseline: dict, new: dict, threshold: float, alpha: float) -> pd.DataFrame:
    """`jaxmlp.stats.compare` for every benchmark present on both sides, a row each."""
    from jaxmlp.stats import compare

    rows = [{"benchmark": name, **compare(baseline[name], new[name], threshold, alpha)._asdict()}
            for name in sorted(set(baseline) & set(new))]  # fmt: skip
    return pd.DataFrame(rows)


def detector_trials(folder: str | Path) -> list[dict]:
    """The detector-trial documents (`python -m jaxmlp.sweep trials`) under ``folder``."""
    found = []
    for path in sorted(Path(folder).rglob("*.json")):
        try:
            doc = _read_json(path)
        except JaxmlpError:
            continue
        if _is_trials(doc):
            found.append({**doc, "file": str(path)})
    return found
