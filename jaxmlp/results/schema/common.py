"""What every result file carries: its kind and the version of its schema."""

from __future__ import annotations

from typing import Any

KIND = "kind"
SCHEMA_VERSION = "schema_version"
CURRENT = 10
"""The schema every file is written in now. Files written before 2026-12-04 carry no version: they are version 1;
version 2's scaling rows had no process count (3: ``scaling_epoch[cpu-2-1]``, ``processes``); up to version 3 a
floor product's samples were rounds of ``calls`` products (4: one product's share of its round, ``round_calls``);
up to version 4 a file did not name its machine (5: ``machine_cpu``, ``machine_cores``, ``machine_backend``,
``machine_device``, ``machine_name`` in its metadata, the same in every file of one host); up to version 5 a
sweep's processes did not name the rank and node that ran them (6: ``rank``, ``node`` in each one's metadata, where
ranks shared the sweep; older ones read as one node); up to version 6 a sweep process's ``peak_rss_bytes`` was
getrusage's, which on Linux carries the parent's high-water mark into the worker (7: the worker's own ``VmHWM``,
``peak_rss_why`` where it could not be read; older ones read with ``peak_rss_why`` saying so); up to version 7 a
sweep workload was compiled once a process (8: ``compiles_seconds``, each compile, its ``compile_seconds`` their
median, ``compiles`` in the metadata; older ones read as one compile) and a cell had no peak memory row (8:
``sweep_peak_rss``, each process's own peak; a version 7 cell gets it from its processes), and a
tracked comparison had no explanation (8: ``explanation``, ``unexplained`` in each of ``track.json``'s
comparisons; older ones read with ``unexplained`` saying why); up to version 8 a sweep call's time was its wall
time only (9: ``call_cpu_seconds``, ``steady_cpu_seconds``, the process's CPU time; ``workloads_failed`` in a
process's metadata; a tracked comparison's ``differs``, ``metric``, ``metric_why``; older ones read as wall time
and ""); up to version 9 a corpus control's score did not keep its verdict and an explanation did not compare the
optimized instructions (10: ``verdict`` in each control's score, read from an older one's lines where they say it;
``same_instructions`` in ``explain.json``, null in an older one); all are read through
`jaxmlp.results.schema.upgrade`."""


METADATA_KEY = "jaxmlp"
"""pytest-benchmark files carry jaxmlp's metadata (`jaxmlp.measure.environment.metadata`) in
``machine_info[METADATA_KEY]``; version 1 of jaxmlp's own documents named their kind under this key."""

# The kinds of document.
BENCH = "bench"  # a pytest-benchmark file of `nox -s bench`
SCALING = "scaling"  # `jaxmlp scaling` (a pytest-benchmark file)
SWEEP = "sweep"  # one cell of a version sweep (a pytest-benchmark file, a sample per process)
CELLS = "sweep-cells"  # a sweep's cells.json
BISECT = "bisect"  # `jaxmlp sweep bisect`
TRAIN = "train"  # `jaxmlp train --json`
TRIALS = "detector-trials"  # `jaxmlp sweep trials`
VALIDATION = "detector-validation"  # `jaxmlp sweep validate`: the change-point detector on synthetic histories
SWEEP_LOG = "sweep-log"  # the first line of a sweep's samples.jsonl: its plan (the samples follow, a line each)
EXPLAIN = "explain"  # `jaxmlp sweep explain A B`
CEILINGS = "ceilings"  # this machine's FLOP rate and memory bandwidth (the roofline's ceilings)
ROOFLINE = "roofline"  # `jaxmlp roofline`: each workload against the ceilings
TTA = "tta"  # `jaxmlp tta`: time to accuracy
CORPUS = "corpus"  # `jaxmlp sweep corpus`: the known regressions, scored
TRACK = "track"  # `jaxmlp track`: one call's releases measured and their verdicts
KINDS = (
    BENCH,
    SCALING,
    SWEEP,
    CELLS,
    BISECT,
    TRAIN,
    TRIALS,
    SWEEP_LOG,
    EXPLAIN,
    CEILINGS,
    ROOFLINE,
    VALIDATION,
    TTA,
    CORPUS,
    TRACK,
)

JSON = dict[str, Any]


def header(kind: str) -> JSON:
    """The first two keys of every file written now."""
    assert kind in KINDS
    return {KIND: kind, SCHEMA_VERSION: CURRENT}
