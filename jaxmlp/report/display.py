"""Tables as a reader sees them: headers in words, every number in its unit (`jaxmlp.units`), the noise beside each
median (``1.07 s (IQR 12.2 ms)``).

The tables (`jaxmlp.results.tables`) keep numbers and code names, for tests and CSV; one function here turns any of
them into strings, by the conventions of their column names, so a quantity reads the same in every table, in the
HTML page, the Markdown summary and the terminal.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import pandas as pd

from jaxmlp import units

WORDS = {
    "median_s": "median",
    "command_peak_bytes": "peak memory (its RSS)",
    "folder_runs": "runs in the folder",
    "warm_goal": "goal, read again",
    "cold_s": "read first (no index)",
    "cold_peak_bytes": "read first: peak memory",
    "cold_goal": "goal, read first",
    "backend": "backend",
    "batch_size": "batch",
    "pipeline": "pipeline",
    "workers": "workers",
    "rung": "rung",
    "jit_ms": "jit",
    "dispatch_ms": "jit, dispatch only",
    "eager_ms": "eager (no jit)",
    "jit_speedup": "jit speed-up",
    "loop_ms": "Python loop",
    "vmap_ms": "vmap",
    "jit_vmap_ms": "jit(vmap)",
    "vmap_speedup": "vmap speed-up",
    "jit_vmap_speedup": "jit(vmap) speed-up",
    "loader_s": "input alone",
    "loader_x_floor": "input / floor",
    "loader_x_scan": "input / scan epoch",
    "loader_best": "input: fastest",
    "epoch_s": "epoch",
    "epoch_x_floor": "epoch / floor",
    "epoch_x_scan": "epoch / scan epoch",
    "epoch_best": "epoch: fastest",
    "x_floor": "times its precision's floor",
    "samples_per_s": "images",
    "compile_s": "compile",
    "matmul_ms": "matmul",
    "gflop_per_s": "rate",
    "precision": "precision",
    "cpu_s": "CPU",
    "accelerator_s": "accelerator",
    "cpu_over_accelerator": "CPU / accelerator",
    "floor_s": "floor",
    "devices": "devices N",
    "step_ms": "step",
    "speedup": "speed-up over N = 1, P = 1",
    "efficiency": "efficiency",
    "all_reduce_share": "all-reduce (traced epoch)",
    "max_rel_diff": "largest rel. diff. of params",
    "epoch_s_median": "epoch (after the first)",
    "train_accuracy": "train accuracy",
    "test_accuracy": "test accuracy",
    "ratio": "ratio",
    "p_slower": "p (slower)",
    "p_faster": "p (faster)",
    "verdict": "verdict",
    "from_median_s": "from: median",
    "to_median_s": "to: median",
    "xla_flags": "XLA flags",
    "results_differ": "results differ",
    "processes": "processes",
    "injected_ratio": "injected: ratio",
    "injected_p": "injected: p",
    "injected_verdict": "injected: verdict",
    "aa_ratio": "A/A: ratio",
    "aa_p": "A/A: p",
    "aa_verdict": "A/A: verdict",
    "xla_said": "XLA said",
    "setting": "machine and settings",
    "median_ms": "median",
    "mean_ms": "mean",
    "total_ms": "total",
    "share": "share",
    "occurrences": "calls",
    "x_best_floor": "times the best floor",
    "library": "library",
    "shape": "m×k×n",
    "gemm_ms": "product",
    "bf16_speedup": "bf16 speed-up",
    "best": "fastest",
    "peak_rss_bytes": "peak host memory (RSS)",
    "device_peak_bytes": "device peak",
    "baseline_bytes": "baseline",
    "new_bytes": "new",
    "compute_s": "compute (FLOPs at the floor)",
    "memory_s": "memory (parameters and batches at the bandwidth)",
    "loop_s": "loop (empty scan)",
    "bound_s": "bound",
    "x_bound": "× bound",
    "loop": "loop term",
    "binds": "binds",
    "x_attainable": "× attainable",
    "x_faster": "× the faster",
    "intensity": "FLOP per byte",
    "operation": "operation",
    "category": "category",
    "self_us": "time (self, whole trace)",
    "bound_by": "bound by",
    "array_mib": "array",
    "call_ms": "a call",
    "gb_per_s": "bandwidth",
    "memory_gb_per_s": "memory bandwidth",
    "epoch_ms": "epoch",
    "tta_s": "time to accuracy",
    "tta_min_s": "fastest",
    "tta_max_s": "slowest",
    "data_s": "data",
    "train_s": "training",
    "eval_s": "evaluation",
    "target": "target accuracy",
    "attainable_s": "attainable",
    "measured_s": "measured",
    "numbers": "evidence",
}
"""Each column's header in words. A column not named here reads as its name without the unit its cells carry
(`UNIT_SUFFIXES`), underscores as spaces; a benchmark's id (``test_epoch[cpu-scan-0-f32]``) as it is."""

UNIT_SUFFIXES = ("_per_s", "_bytes", "_mib", "_ms", "_us", "_seconds", "_s")
"""The endings of a column's name that say its unit: the cells say it, the header does not."""

Format = Callable[[Any], str]
FORMATS: dict[str, Format] = {
    "s": units.duration,
    "ms": lambda x: units.duration(None if x is None or pd.isna(x) else float(x) / 1e3),
    "us": lambda x: units.duration(None if x is None or pd.isna(x) else float(x) / 1e6),
    "ratio": units.ratio,
    "percent": units.percent,
    "p": units.p_value,
    "gflops": lambda x: units.flop_rate(None if x is None or pd.isna(x) else float(x) * 1e9),
    "number": units.number,
    "rate": units.per_second,
    "bandwidth": lambda x: units.MISSING if x is None or pd.isna(x) else f"{units.size(float(x) * 1e9)}/s",
    "mib": lambda x: units.size(None if x is None or pd.isna(x) else float(x) * 2**20),
    "count": lambda x: f"{int(x)}",
    "bytes": units.size,
}


def _whole(values: pd.Series) -> bool:
    return bool(len(values)) and bool(((values % 1 == 0) & (values.abs() < 2**53)).all())


KINDS = (
    ("bytes", r"_bytes$"),
    ("mib", r"_mib$"),
    ("bandwidth", r"gb_per_s$"),
    ("ms", r"_ms$"),
    ("us", r"_us$"),
    ("gflops", r"^gflop_per_s$"),
    ("rate", r"_per_s$"),  # its header says what a second holds
    ("s", r"_s$|_s_median$"),
    ("ratio", r"speedup$|_x_|^x_|ratio$|_over_accelerator$"),
    ("p", r"^p_|_p$"),
    ("percent", r"accuracy$|^(efficiency|share|target)$|_share$"),
)
"""Each kind of unit a column may carry, and the pattern of the names that carry it (the first that matches)."""


def kind(column: str) -> str | None:
    """A column's unit, from its name (`KINDS`): ``*_s`` seconds, ``*_ms`` milliseconds, ``*speedup``/``*_x_*``/
    ``ratio`` ratios, ``p_*`` p-values, ``*accuracy``/``efficiency``/``*share``/``target`` percentages, ``*_bytes``
    and ``*_mib`` sizes, ``*_gb_per_s`` bandwidths, ``*_per_s`` rates (``14.8 M/s``)."""
    return next((unit for unit, names in KINDS if re.search(names, column)), None)


def header(column: str, unit: str | None = None) -> str:
    """A column's header in words (`WORDS`); else its name without the unit its cells carry (``unit``: its kind,
    `kind`), underscores as spaces; a benchmark's id as it is."""
    if column in WORDS:
        return WORDS[column]
    if "[" in column:  # a benchmark's id: its underscores are its name's
        return column
    stem = column
    if unit in ("s", "ms", "us", "bytes", "mib", "rate", "bandwidth"):
        stem = next((stem[: -len(s)] for s in UNIT_SUFFIXES if stem.endswith(s) and len(stem) > len(s)), stem)
    return stem.replace("_", " ")


def _iqr_of(column: str) -> str | None:
    """The IQR column that goes with a median column: ``epoch_s`` → ``epoch_iqr_s``, ``jit_ms`` → ``jit_iqr_ms``."""
    for suffix in ("_s", "_ms"):
        if column.endswith(suffix) and not column.endswith(f"_iqr{suffix}"):
            return f"{column[: -len(suffix)]}_iqr{suffix}"
    return None


def _cell(value: Any, format_: Format | None) -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and pd.isna(value)):
        return units.MISSING
    if isinstance(value, str):  # already words
        return value
    if format_ is not None:
        return format_(value)
    return units.number(value) if isinstance(value, float) else str(value)


def readable(frame: pd.DataFrame, formats: Mapping[str, str] | None = None) -> pd.DataFrame:
    """``frame`` as strings: headers in words, numbers in their units (``formats``: a column's unit where the names
    do not say it), each IQR folded into its median's cell, a ratio's interval into one cell, its two one-sided p
    into the smaller."""
    formats = dict(formats or {})
    out: dict[str, list[str]] = {}
    consumed = set()
    for column in frame.columns:
        name = str(column)
        if name in consumed:
            continue
        if name == "ci_low" and "ci_high" in frame:  # a ratio's 95% interval, in one cell
            consumed.add("ci_high")
            out["95% interval"] = [units.interval(lo, hi) for lo, hi in zip(frame["ci_low"], frame["ci_high"])]
            continue
        if name == "p_slower" and "p_faster" in frame:  # the one-sided p of the direction the ratio points
            consumed.add("p_faster")
            out["p"] = [units.p_value(min(a, b)) for a, b in zip(frame["p_slower"], frame["p_faster"])]
            continue
        unit = formats.get(name) or kind(name)
        values = frame[column]
        if unit is None and values.dtype.kind == "f" and _whole(values.dropna()):
            unit = "count"  # devices, workers: float only because some rows lack them
        format_ = FORMATS[unit] if unit else None
        cells = [_cell(v, format_) for v in frame[column]]
        iqr = _iqr_of(name)
        if iqr is not None and iqr in frame.columns:
            consumed.add(iqr)
            spread = [_cell(v, format_) for v in frame[iqr]]
            cells = [c if s == units.MISSING or c == units.MISSING else f"{c} (IQR {s})" for c, s in zip(cells, spread)]
        out[header(name, unit)] = cells
    return pd.DataFrame(out, index=frame.index)
