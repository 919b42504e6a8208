"""The one place that turns earlier forms of result files into the current one (docs/reference/results-files.md)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from jaxmlp import registry
from jaxmlp.errors import JaxmlpError
from jaxmlp.results.schema.bench import PER_ROUND, BenchmarkDocument
from jaxmlp.results.schema.common import (
    BENCH,
    BISECT,
    CELLS,
    CORPUS,
    CURRENT,
    JSON,
    KIND,
    KINDS,
    METADATA_KEY,
    SCALING,
    SCHEMA_VERSION,
    SWEEP,
    TRACK,
    TRAIN,
    TRIALS,
    header,
)
from jaxmlp.results.schema.sweep import SweepDocument
from jaxmlp.stats import FASTER, SAME, SLOWER, VERDICT_WORDS

NOT_RESULTS = "neither a pytest-benchmark file nor a jaxmlp results file"


def upgrade(raw: object) -> tuple[str, JSON]:
    """(the kind, the document in the current schema) of a result file's JSON; a `JaxmlpError` for anything else."""
    if not isinstance(raw, Mapping):
        raise JaxmlpError(NOT_RESULTS)
    kind, doc = _upgrade(raw)
    version = raw.get(SCHEMA_VERSION, _metadata(raw).get(SCHEMA_VERSION, 1))
    if isinstance(version, int) and version < OWN_PEAK_VERSION:
        doc = _peaks_not_own(kind, doc)
    elif isinstance(version, int) and version < MEMORY_ROWS_VERSION and kind == SWEEP and doc.get("raw_processes"):
        doc = _with_memory_rows(doc)
    if isinstance(version, int) and version < EXPLAINED_VERSION and kind == TRACK:
        doc = _not_explained(doc)
    if isinstance(version, int) and version < CONTROL_VERDICT_VERSION and kind == CORPUS:
        doc = _control_verdicts(doc)
    return kind, doc


CONTROL_VERDICT_VERSION = 10
"""The first version whose corpus controls keep their verdict in the four words (``verdict``)."""
_SAID = re.compile(f"a control is clean only where it shows the same time: [^:]*: ({'|'.join(VERDICT_WORDS)})")


def _control_verdicts(doc: JSON) -> JSON:
    """Before version 10, each control's verdict as its score's lines say it; null where none says."""
    if not isinstance(doc.get("scores"), list):
        return doc

    def said(score: Mapping[str, Any]) -> str | None:
        if score.get("clean") is True:
            return SAME
        for line in score.get("why") or ():
            if isinstance(line, str) and (found := _SAID.search(line)):
                return found.group(1)
        flagged = next((f for f in score.get("flagged") or () if isinstance(f, str)), "")
        return next((w for w in (SLOWER, FASTER) if f" {w} than " in flagged), None)

    scores = [
        {**s, "verdict": said(s)}
        if isinstance(s, Mapping) and "verdict" not in s and (s.get("case") or {}).get("kind") == "control"
        else s
        for s in doc["scores"]
    ]
    return {**doc, "scores": scores}


EXPLAINED_VERSION = 8
"""The first version whose tracked comparisons carry their explanation (``explanation``, ``unexplained``)."""
NOT_EXPLAINED = "tracked before schema version 8: jaxmlp track made no explanations then"
"""Why an older tracked change has no explanation (its ``unexplained``)."""


def _not_explained(doc: JSON) -> JSON:
    """Before version 8, each tracked comparison unexplained; a slower or faster one says why."""
    if not isinstance(doc.get("comparisons"), list):
        return doc
    comparisons = [
        {
            "explanation": "",
            "unexplained": NOT_EXPLAINED if c.get("verdict") in ("slower", "faster") else "",
            **c,
        }
        if isinstance(c, Mapping)
        else c
        for c in doc["comparisons"]
    ]
    return {**doc, "comparisons": comparisons}


OWN_PEAK_VERSION = 7
"""The first version whose sweep processes' ``peak_rss_bytes`` is each worker's own (its ``VmHWM``)."""
INHERITED_PEAK = (
    "written before schema version 7: getrusage's peak, which on Linux carries the parent's (jaxmlp's) high-water "
    "mark into the worker"
)
"""Why an older sweep process's peak may not be its own (its ``peak_rss_why``)."""
MEMORY_ROWS_VERSION = 8
"""The first version whose sweep cells hold a peak memory row (a version 7 cell's made from its processes) and whose
workloads record each compile (``compiles_seconds``; an older one was compiled once, its ``compile_seconds``)."""


def _peaks_not_own(kind: str, doc: JSON) -> JSON:
    """Before version 7, each sweep process's peak marked as maybe not its own (`INHERITED_PEAK`)."""

    def marked(facts: object) -> object:
        if isinstance(facts, Mapping) and "peak_rss_bytes" in facts and "peak_rss_why" not in facts:
            return {**facts, "peak_rss_why": INHERITED_PEAK}
        return facts

    if kind == SWEEP and isinstance(doc.get("raw_processes"), list):
        raw = [
            {**p, "metadata": marked(p["metadata"])} if isinstance(p, Mapping) and "metadata" in p else p
            for p in doc["raw_processes"]
        ]
        return {**doc, "raw_processes": raw}
    if kind == CELLS and isinstance(doc.get("cells"), list):
        cells = [
            {**c, "process": marked(c["process"])} if isinstance(c, Mapping) and "process" in c else c
            for c in doc["cells"]
        ]
        return {**doc, "cells": cells}
    return doc


def _upgrade(raw: Mapping[str, Any]) -> tuple[str, JSON]:
    meta = _metadata(raw)
    version = raw.get(SCHEMA_VERSION, meta.get(SCHEMA_VERSION, 1))
    if not isinstance(version, int) or version < 1:
        raise JaxmlpError(f"schema_version {version!r} is not a version of jaxmlp's results files")
    if version > CURRENT:
        raise JaxmlpError(
            f"written by a newer jaxmlp (schema version {version}; this one reads up to {CURRENT}): "
            "upgrade jaxmlp to read it"
        )
    if version == 1:
        kind = _kind_of_version_1(raw, meta)
        doc = {**_from_version_1(kind, dict(raw)), **header(kind)}
        return kind, _with_machine(kind, _floor_per_product(doc) if kind == BENCH else doc)
    kind = raw.get(KIND, meta.get(KIND))
    if kind not in KINDS:
        raise JaxmlpError(f"unknown kind of results file {kind!r} (jaxmlp knows {', '.join(KINDS)})")
    if version < CURRENT and kind in (BENCH, SCALING, SWEEP) and isinstance(raw.get("benchmarks"), list):
        doc = dict(raw)  # rows under their names and parameters now (a version 2 scaling row: one process)
        doc["benchmarks"] = [_current_row(b) if isinstance(b, Mapping) else b for b in doc["benchmarks"]]
        doc = _floor_per_product(doc) if kind == BENCH and version < 4 else doc
        return str(kind), _with_machine(str(kind), {**doc, **header(str(kind))})
    if version < MACHINE_VERSION:
        return str(kind), _with_machine(str(kind), dict(raw))
    return str(kind), dict(raw)


MACHINE_VERSION = 5
"""The first version whose files name their machine (`jaxmlp.measure.environment.machine_facts`)."""


def _machine_of(meta: Mapping[str, Any]) -> JSON:
    """Before version 5, a file's machine as its metadata tells it: the CPU model and cores, and the accelerator
    of the devices it measured (a bench file's ``devices``, else its own backend); no name (none was asked for)."""
    devices = meta.get("devices")
    seen = [d for d in (devices.values() if isinstance(devices, Mapping) else ()) if isinstance(d, Mapping)] + [meta]
    accelerator = next((d for d in seen if d.get("backend") not in (None, "", "cpu")), None)
    return {
        "machine_cpu": meta.get(registry.CPU_MODEL),
        "machine_cores": meta.get("cpu_affinity"),
        "machine_backend": accelerator.get("backend") if accelerator else "cpu",
        "machine_device": accelerator.get("device_kind") if accelerator else None,
        "machine_name": None,
    }


def _with_machine(kind: str, doc: JSON) -> JSON:
    """A file from before version 5 with its machine (`_machine_of`) in its metadata, or each training record's."""
    if kind in (BENCH, SCALING, SWEEP):
        machine = doc.get("machine_info")
        meta = machine.get(METADATA_KEY) if isinstance(machine, Mapping) else None
        if isinstance(machine, Mapping) and isinstance(meta, Mapping) and "machine_cpu" not in meta:
            doc = {**doc, "machine_info": {**machine, METADATA_KEY: {**meta, **_machine_of(meta)}}}
    elif isinstance(doc.get("metadata"), Mapping) and "machine_cpu" not in doc["metadata"]:  # tta, bisect, ...
        doc = {**doc, "metadata": {**doc["metadata"], **_machine_of(doc["metadata"])}}
    elif kind == TRAIN and isinstance(doc.get("records"), list):
        records = doc["records"]
        doc = {**doc, "records": [{**_machine_of(r), **r} if isinstance(r, Mapping) else r for r in records]}
    return doc


def _floor_per_product(doc: JSON) -> JSON:
    """Version 3 and before: each floor product's round of ``calls`` as one product's share (``round_calls``)."""
    if not isinstance(doc["benchmarks"], list):
        return doc
    rows = []
    for row in doc["benchmarks"]:  # a row of the wrong type is left for `BenchmarkRow.from_json` to name
        extra = row.get("extra_info") if isinstance(row, Mapping) else None
        calls = extra.get("calls") if isinstance(extra, Mapping) else None
        floor = (
            isinstance(row, Mapping) and registry.benchmark_id(str(row.get("name"))) in registry.FLOOR_PRODUCTS
        )  # their rounds held several products up to version 3
        if not floor or not isinstance(calls, int) or calls < 2 or not isinstance(row.get("stats"), Mapping):
            rows.append(row)
            continue
        stats = dict(row["stats"])
        for key in PER_ROUND:  # divided by a round's calls: one product's share
            if isinstance(stats.get(key), (int, float)):
                stats[key] = stats[key] / calls
        if isinstance(stats.get("ops"), (int, float)):
            stats["ops"] = stats["ops"] * calls
        if isinstance(stats.get("data"), list):
            stats["data"] = [t / calls for t in stats["data"]]
        stats["iterations"] = calls
        info = {key: value for key, value in dict(extra or {}).items() if key != "calls"}
        info["round_calls"] = calls
        if isinstance(info.get("flops"), (int, float)):
            info["flops"] = info["flops"] / calls
        rows.append({**row, "stats": stats, "extra_info": info})
    return {**doc, "benchmarks": rows}


def _metadata(raw: Mapping[str, Any]) -> Mapping[str, Any]:
    """jaxmlp's metadata in a pytest-benchmark file (where the benchmark hook puts its kind and version)."""
    machine = raw.get("machine_info")
    meta = machine.get(METADATA_KEY) if isinstance(machine, Mapping) else None
    return meta if isinstance(meta, Mapping) else {}


def _kind_of_version_1(raw: Mapping[str, Any], meta: Mapping[str, Any]) -> str:
    named = raw.get(METADATA_KEY)  # version 1's own documents: {"jaxmlp": "train", ...}
    if named in (TRIALS, CELLS, BISECT, TRAIN):
        return str(named)
    if "benchmarks" in raw and "machine_info" in raw:  # a field of the wrong type: named by `BenchmarkDocument`
        return SWEEP if meta.get("sweep") else SCALING if meta.get("scaling") else BENCH
    raise JaxmlpError(NOT_RESULTS)


def _from_version_1(kind: str, doc: JSON) -> JSON:
    if kind == TRIALS:
        settings = dict(doc.get("settings") or {})
        renamed = {"rounds": "trials", "pipeline": "workload"}  # the trials were "rounds", the workload "pipeline"
        doc["settings"] = {renamed.get(key, key): value for key, value in settings.items()}
        return doc
    if kind not in (BENCH, SCALING, SWEEP) or not isinstance(doc["benchmarks"], list):
        return doc
    doc["benchmarks"] = [_current_row(b) if isinstance(b, Mapping) else b for b in doc["benchmarks"]]
    if kind == SWEEP and doc.get("raw_processes"):
        doc["raw_processes"] = [_current_process(p) for p in doc["raw_processes"]]
        if any(
            isinstance(b, Mapping) and registry.benchmark_id(str(b.get("name"))) not in registry.BY_ID
            for b in doc["benchmarks"]
        ):
            doc = _sweep_rows_again(doc)
    return doc


def _current_row(row: Mapping[str, Any]) -> JSON:
    """A benchmark under its name and parameters now: ``test_loader[2]`` is ``test_loader[seed-2]``."""
    row = dict(row)
    if not isinstance(row.get("params") or {}, Mapping):  # left for `BenchmarkRow.from_json` to name
        return row
    name, params = str(row.get("name", "")), dict(row.get("params") or {})
    was = registry.benchmark_id(name)
    bench, fixed = registry.RENAMED.get(was) or (registry.BY_ID.get(was), {})
    if bench is None:
        return row
    missing = {key: value for key, value in {**bench.defaults, **fixed}.items() if key not in params}
    if not missing:
        return row
    params = {**params, **missing}
    row["params"] = params
    if set(bench.params) <= set(params):  # else not a row as pytest writes them: its name is left as it is
        row["name"] = bench.name(*(params[key] for key in bench.params))
    return row


def _current_process(process: Mapping[str, Any]) -> JSON:
    """A sweep process from before the workload contract (``pipelines`` and ``step``) as workloads."""
    if "workloads" in process or "pipelines" not in process:
        return dict(process)
    workloads = {
        name: {
            "compile_seconds": p["compile_seconds"],
            "first_seconds": p["first_epoch_seconds"],
            "call_seconds": list(p["epoch_seconds"]),
            "steady_seconds": p["steady_seconds"],
            "output": None,
        }
        for name, p in process["pipelines"].items()
    }
    if process.get("step"):
        step = process["step"]
        workloads["step"] = {
            "compile_seconds": step["compile_seconds"],
            "first_seconds": None,
            "call_seconds": [],
            "steady_seconds": step["step_seconds"],
            "output": None,
        }
    return {"metadata": process["metadata"], "workloads": workloads}


def _with_memory_rows(doc: JSON) -> JSON:
    """A version 7 sweep cell with its rows made again from its processes, which adds the peak memory row
    (`registry.SWEEP_PEAK_RSS`); one whose fields are damaged is left as it is, for its reader to name the field."""
    try:
        return _sweep_rows_again(doc)
    except (JaxmlpError, KeyError, TypeError, ValueError, AttributeError):
        return doc


def _sweep_rows_again(doc: JSON) -> JSON:
    """A sweep cell whose rows were named before the workload contract: its rows made again from its processes."""
    cell = SweepDocument.from_benchmarks(BenchmarkDocument.from_json({**doc, KIND: SWEEP}, grouped=False))
    return cell.to_json()
