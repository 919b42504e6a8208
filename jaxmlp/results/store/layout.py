"""Where results go and what they are called: ``<kind>-<UTC time>[-<what>]``. Plain Python (the noxfile imports it)."""

from __future__ import annotations

import datetime as _dt
import os
import re
from pathlib import Path

RESULTS_DIR = "reports"
"""The results folder every command reads and writes by default (relative to where it runs)."""
TRACES_DIR = f"{RESULTS_DIR}/traces"
"""Where `jaxmlp profile` captures go by default: a TensorBoard logdir."""

STAMP_FORMAT = "%Y%m%dT%H%M%S"
_STAMP = re.compile(r"\d{8}T\d{6}")

# The kinds of result, as their names begin.
BENCH = "bench"  # a pytest-benchmark file: bench-<time>-<backends>.json
TRAIN = "train"  # a `jaxmlp train --json` file: train-<time>-<dataset>-<pipeline>.json
SWEEP = "sweep"  # a version sweep: sweep-<time>/jax-<version>[-flags<i>].json and cells.json
SWEEP_BEFORE = "jaxlib"  # version sweeps' older name: jaxlib-<time>/ (still read as sweeps, never written)
TIMELINE = "timeline"  # a release timeline: timeline-<time>/, a sweep folder over every release from A to B
BISECT = "bisect"  # a bisection: bisect-<time>/bisect.json and a sweep folder per probe, probe-<n>/
DETECTOR = "detector"  # detector trials: detector-<time>/trials.json; its validation: detector-<time>/validation.json
SCALING = "scaling"  # `jaxmlp scaling`: scaling-<time>-<backend>.json (a pytest-benchmark file)
TTA = "tta"  # `jaxmlp tta`: tta-<time>-<dataset>.json
REPORT = "report"  # a rendered report: report-<time>/
EXPLAIN = "explain"  # `jaxmlp sweep explain A B`: explain-<time>/explain.json, hlo.diff, hlo/, traces/
ROOFLINE = "roofline"  # `jaxmlp roofline`: roofline-<time>.json (its ceilings and each workload's point)
CORPUS = "corpus"  # `jaxmlp sweep corpus`: corpus-<time>/scorecard.json and a folder a case of its sub-runs
TRACK = "track"  # `jaxmlp track`: track-<time>-<machine>-<pid>/track.json beside the sweep files it measured
CEILINGS = "ceilings"  # this machine's FLOP rate and memory bandwidth, once per environment: ceilings-<time>.json

OPS_FILE = "ops-{pipeline}.csv"  # in a benchmark run's folder: a profiled pipeline's operation table (`run_folder`)
RUN_TRACES = "traces"  # in a benchmark run's folder: its traces, traces/<pipeline>/ (TensorBoard run folders)

TRIALS_FILE = "trials.json"
VALIDATION_FILE = "validation.json"
BISECT_FILE = "bisect.json"
SCORECARD_FILE = "scorecard.json"  # in a corpus folder: each case scored (`jaxmlp sweep corpus`)
CELLS_FILE = "cells.json"  # in each sweep folder: what became of every cell of the matrix
SAMPLES_FILE = "samples.jsonl"  # in each sweep folder: its plan, then every process's sample, appended as it ends
HLO_DIR = "hlo"  # in a sweep or explain folder: each cell's optimized HLO of each workload, gzipped
EXPLAIN_FILE = "explain.json"  # in an explain folder: the comparison of two releases (`jaxmlp sweep explain`)
EXPLAIN_TEXT = "explain.txt"  # in an explain folder `jaxmlp track` made: the explanation as `sweep explain` prints it
HLO_DIFF_FILE = "hlo.diff"  # in an explain folder: the unified diff of the two canonical optimized HLOs
TRACK_FILE = "track.json"  # in a track folder: what one call of `jaxmlp track` tracked (`schema/track.py`)
INCOMPLETE_FILE = "INCOMPLETE"  # in a sweep folder whose rounds did not all run: `jaxmlp sweep resume FOLDER`
TRACK_CALL = "call.json"  # in a track folder: the call's arguments and folder, so that `sweep resume` goes on with it
TRACK_GOES_ON = "the next `jaxmlp track` with the same options (or `jaxmlp sweep resume FOLDER`)"
"""What goes on with a stopped track call's samples: every line and its ``INCOMPLETE`` file say it."""


def stamp(when: _dt.datetime | str | None = None) -> str:
    """``when`` (now if None; ISO string or datetime, UTC) as ``20261202T145613``; ``undated`` if unparsable."""
    if when is None:
        when = _dt.datetime.now(_dt.UTC)
    elif isinstance(when, str):
        try:
            when = _dt.datetime.fromisoformat(when)
        except ValueError:
            return "undated"
    if when.tzinfo is not None:
        when = when.astimezone(_dt.UTC)
    return when.strftime(STAMP_FORMAT)


def stamp_in(path: str | Path) -> str:
    """The time in a result's name (its deepest part that has one), else ``""``: results sort by it."""
    for part in reversed(Path(path).parts):
        if found := _STAMP.search(part):
            return found.group(0)
    return ""


def shown_stamp(stamp_text: str) -> str:
    """A name's time as a reader reads it: ``2026-12-02 14:56 UTC`` (``undated`` without one)."""
    try:
        return _dt.datetime.strptime(stamp_text, STAMP_FORMAT).strftime("%Y-%m-%d %H:%M UTC")
    except ValueError:
        return "undated"


def shown(path: str | Path, folder: Path | None) -> str:
    """``path`` relative to ``folder`` where it lies under it (the folder itself: its name), else as given."""
    if folder is None:
        return str(path)
    relative = os.path.relpath(path, folder)
    if relative == ".":
        return os.path.basename(os.path.abspath(path))
    return str(path) if relative.startswith("..") else relative


def cited(path: str | Path, folder: Path | None, stamp_text: str = "") -> str:
    """``path`` as shown, with its time where known (``stamp_text``, else its name's)."""
    when = stamp_text or stamp_in(path)
    return shown(path, folder) + (f" ({shown_stamp(when)})" if when else "")


def name(kind: str, when: _dt.datetime | str | None = None, *parts: object, suffix: str = "") -> str:
    """``kind-<time>[-part...]<suffix>``: the name of a new result (the store makes it unique)."""
    return "-".join([kind, stamp(when), *(str(p) for p in parts if p not in (None, ""))]) + suffix


def sweep_file(label: str, flags: int = 0) -> str:
    """One cell's file in a sweep folder: a version, without XLA flags or with its ``flags``-th value (from 1)."""
    return f"jax-{label}{f'-flags{flags}' if flags else ''}.json"


def hlo_file(label: str, flags: int, workload: str) -> str:
    """A cell's optimized HLO of one workload, gzipped, inside a sweep (or explain) folder."""
    return f"{HLO_DIR}/{sweep_file(label, flags).removesuffix('.json')}.{workload}.hlo.txt.gz"


def probe_folder(number: int) -> str:
    """One bisection probe's sweep folder, inside the bisection's folder."""
    return f"probe-{number}"


def trace_run(pipeline: str, when: _dt.datetime | str | None = None) -> str:
    """A capture's run folder under the TensorBoard logdir: ``scan-<time>``."""
    return f"{pipeline}-{stamp(when)}"


def run_folder(bench_file: str | Path) -> Path | None:
    """The folder of a benchmark run's other files, beside its file (``bench-20261206T012031-tpu.json`` →
    ``tpu-20261206T012031/``); None for a name without a time."""
    path = Path(bench_file)
    kind, _, rest = path.stem.partition("-")
    when, _, what = rest.partition("-")
    if kind != BENCH or not _STAMP.fullmatch(when):
        return None
    return path.with_name(f"{what or 'host'}-{when}")


def ops_pipeline(path: str | Path) -> str | None:
    """The pipeline an operation table is of, from its name (`OPS_FILE`: ``ops-scan.csv`` → ``scan``), else None."""
    prefix, suffix = OPS_FILE.split("{pipeline}")
    name = Path(path).name
    if name.startswith(prefix) and name.endswith(suffix) and len(name) > len(prefix) + len(suffix):
        return name[len(prefix) : -len(suffix)]
    return None


def is_hidden(path: Path, folder: Path) -> bool:
    """Whether a part of ``path`` below ``folder`` starts with a dot (as atomic writes' temporaries do)."""
    return any(part.startswith(".") for part in path.relative_to(folder).parts)


def is_call_record(path: Path) -> bool:
    """Whether ``path`` is a track folder's ``call.json``: kept beside the results, itself no result file."""
    return path.name == TRACK_CALL and path.parent.name.startswith(f"{TRACK}-")
