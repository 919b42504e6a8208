"""Trace summaries in pandas: the top operations and a step-time breakdown of each ``.xplane.pb`` capture."""

from __future__ import annotations

import contextlib
from collections.abc import Collection
from pathlib import Path
from typing import NamedTuple, cast

import pandas as pd

from jaxmlp import hlo
from jaxmlp.registry import STEP_NAME
from jaxmlp.results.store import layout
from jaxmlp.results.store.writing import Exists, write_new

# Runtime wrappers around the operations, not operations themselves.
_RUNTIME = ("ThreadpoolListener::", "ThunkExecutor::", "SlinkyThreadPool::", "H2D Dispatch", "D2H Dispatch")


HLO_CATEGORY = "hlo_category"
"""The stat in which the profiler names an operation's category (a TPU's trace: ``custom-call``, ``convolution``)."""
HLO_OP = "hlo_op"
"""The stat in which a GPU trace names the XLA operation that launched a CUDA kernel (its stream lines' events)."""
KERNELS_SHOWN = 3
"""The CUDA kernels an operation's row names at most (those it spent the most time in first)."""


def trace_events(xplane: str | Path) -> pd.DataFrame:
    """Every event of a trace: plane, line, name, start and duration (ns), step_num and category where given."""
    from jax.profiler import ProfileData

    profile = ProfileData.from_file(str(xplane))
    rows = []
    for plane in profile.planes:
        for line in plane.lines:
            for event in line.events:
                stats = dict(event.stats) if event.name == STEP_NAME or plane.name.startswith("/device:") else {}
                step = stats.get("step_num") if event.name == STEP_NAME else None
                category, launched_by = stats.get(HLO_CATEGORY), stats.get(HLO_OP)
                rows.append(
                    (
                        plane.name,
                        line.name,
                        event.name,
                        event.start_ns,
                        event.duration_ns,
                        step,
                        None if category is None else str(category),
                        None if launched_by is None else str(launched_by),
                    )
                )
    columns = ["plane", "line", "name", "start_ns", "duration_ns", "step_num", "category", HLO_OP]
    return pd.DataFrame(rows, columns=columns)


def kernel_name(name: str) -> str:
    """A CUDA kernel's name as a table shows it: without ``void`` and its argument list, at most 80 characters."""
    short = name.removeprefix("void ").split("(")[0].strip()
    return short if len(short) <= 80 else short[:79] + "…"


def op_kernels(events: pd.DataFrame) -> dict[str, str]:
    """Per XLA operation of a GPU trace, the CUDA kernels it launched, most time first; empty where none."""
    if HLO_OP not in events:
        return {}
    device = events["plane"].str.startswith("/device:") & ~events["line"].isin(["XLA Ops", "XLA Modules"])
    kernels = events[device & events[HLO_OP].notna()]
    out = {}
    for op, launched in kernels.groupby(HLO_OP, sort=False):
        spent = launched.assign(kernel=launched["name"].map(kernel_name)).groupby("kernel")["duration_ns"].sum()
        top = spent.sort_values(ascending=False, kind="stable").index[:KERNELS_SHOWN]
        out[hlo.op_name(str(op))] = "; ".join(top)
    return out


def op_events(events: pd.DataFrame) -> pd.DataFrame:
    """The XLA operations: a device's "XLA Ops" line where there is one (GPU), else the host's XLA threads."""
    device = events[events["plane"].str.startswith("/device:") & (events["line"] == "XLA Ops")]
    if len(device):
        return device
    host = events[(events["plane"] == "/host:CPU") & events["line"].str.startswith("tf_XLA")]
    return host[~host["name"].str.startswith(_RUNTIME)]


def program_ops(events: pd.DataFrame, names: Collection[str]) -> pd.DataFrame:
    """The events that name an instruction of a program (``names``): on a device's "XLA Ops" line where the trace
    has one, else on any host line (XLA's threads, or the caller's where XLA runs a program on it)."""
    device = events[events["plane"].str.startswith("/device:") & (events["line"] == "XLA Ops")]
    found = device if len(device) else events[events["plane"] == "/host:CPU"]
    return found[found["name"].isin(set(names))]


def trace_contents(events: pd.DataFrame, lines: int = 4, names: int = 3) -> str:
    """What a trace holds, in words: its events' count and its busiest ``lines`` with their top ``names``."""
    if not len(events):
        return "no events"
    counted = events.groupby(["plane", "line"], sort=False)["name"]
    busiest = counted.size().sort_values(ascending=False, kind="stable")
    said = []
    for key, n in busiest.head(lines).items():
        plane, line = cast(tuple[str, str], key)
        top = counted.get_group((plane, line)).value_counts().head(names)
        said.append(f"{plane} {line or '(unnamed)'}: {n} ({', '.join(f'{k} x{v}' for k, v in top.items())})")
    more = f"; {len(busiest) - lines} more lines" if len(busiest) > lines else ""
    return f"{len(events)} events on {len(busiest)} lines: " + "; ".join(said) + more


def top_ops(events: pd.DataFrame, n: int = 12) -> pd.DataFrame:
    """The ``n`` operations that took the most time, by name and category, with counts, shares and kernels."""
    ops = op_events(events)
    given = ops["category"] if "category" in ops else pd.Series(None, index=ops.index, dtype=object)
    ops = ops.assign(
        op=ops["name"].map(hlo.op_name),
        category=given.where(given.notna(), ops["name"].map(hlo.op_category)),
    )
    table = (
        ops.groupby(["op", "category"])["duration_ns"].agg(["count", "sum", "mean"]).sort_values("sum", ascending=False)
    )
    total = table["sum"].sum()
    out = pd.DataFrame(
        {
            "op": table.index.get_level_values("op"),
            "category": table.index.get_level_values("category"),
            "count": table["count"].to_numpy(),
            "total_ms": table["sum"].to_numpy() / 1e6,
            "mean_us": table["mean"].to_numpy() / 1e3,
            "share": table["sum"].to_numpy() / total if total else 0.0,
        }
    )
    if kernels := op_kernels(events):
        out["kernels"] = out["op"].map(kernels).fillna("")
    return out.head(n).reset_index(drop=True)


def step_breakdown(events: pd.DataFrame) -> pd.DataFrame:
    """Per marked step: its wall time, and the time in its "load" and "compute" annotations (ms), looked for on the
    step's own thread line (an annotation belongs to the step of its line that it starts in)."""
    columns = ["step", "step_ms", "load_ms", "compute_ms", "other_ms"]
    keys = ["plane", "line"]
    marked = (events["name"] == STEP_NAME) & events["step_num"].notna()
    steps = events.loc[marked, [*keys, "start_ns", "duration_ns", "step_num"]].sort_values("start_ns")
    if not len(steps):
        return pd.DataFrame(columns=columns)
    marks = events.loc[events["name"].isin(["load", "compute"]), [*keys, "name", "start_ns", "duration_ns"]]
    held = pd.merge_asof(
        marks.rename(columns={"duration_ns": "mark_ns"}).sort_values("start_ns"),
        steps.rename(columns={"start_ns": "step_start"}),
        left_on="start_ns",
        right_on="step_start",
        by=keys,
        direction="backward",
    )
    held = held[held["start_ns"] < held["step_start"] + held["duration_ns"]]
    spent = held.groupby(["step_start", *keys, "name"])["mark_ns"].sum().unstack("name")
    table = steps.join(spent.reindex(columns=["load", "compute"]), on=["start_ns", *keys]).fillna(
        {"load": 0, "compute": 0}
    )
    table = pd.DataFrame(
        {
            "step": table["step_num"].astype(int),
            "step_ms": table["duration_ns"].astype(float) / 1e6,
            "load_ms": table["load"].astype(float) / 1e6,
            "compute_ms": table["compute"].astype(float) / 1e6,
        }
    )
    return table.assign(other_ms=table["step_ms"] - table["load_ms"] - table["compute_ms"]).reset_index(drop=True)


class CaptureSummary(NamedTuple):
    """One capture's tables and headline numbers, for reports."""

    file: str
    run: str  # the run folder under the TensorBoard logdir
    top_ops: pd.DataFrame
    steps: pd.DataFrame  # `step_breakdown`
    median_step_ms: float | None
    median_load_ms: float | None
    median_compute_ms: float | None


def capture_summary(xplane: str | Path) -> CaptureSummary:
    events = trace_events(xplane)
    steps = step_breakdown(events)

    def median(column: str) -> float | None:
        return float(steps[column].median()) if len(steps) else None

    # <logdir>/<run>/plugins/profile/<time>/<host>.xplane.pb
    return CaptureSummary(
        str(xplane),
        Path(xplane).parents[3].name,
        top_ops(events),
        steps,
        median("step_ms"),
        median("load_ms"),
        median("compute_ms"),
    )


ALL_REDUCE = "all-reduce"
"""The collective of the sharded pipeline: its operations' names begin so (``all-reduce.3``, ``all-reduce-start``)."""


def outermost(events: pd.DataFrame) -> pd.DataFrame:
    """The events that no earlier event of their line holds, so nested events are not counted twice."""
    rows = events.sort_values(["plane", "line", "start_ns"])
    end = rows["start_ns"] + rows["duration_ns"]
    before = end.groupby([rows["plane"], rows["line"]]).transform(lambda e: e.cummax().shift())
    return rows[before.isna() | (rows["start_ns"] >= before)]


def op_share(events: pd.DataFrame, prefix: str) -> float | None:
    """The share of the operations' time in those named ``prefix...``; None for a trace without operations."""
    ops = op_events(events)
    total = float(outermost(ops)["duration_ns"].sum())
    return None if not total else float(outermost(ops[ops["name"].str.startswith(prefix)])["duration_ns"].sum()) / total


def trace_share(folder: str | Path, prefix: str) -> dict[str, object]:
    """What a capture folder's trace says of the operations named ``prefix``: their share of the operations' time
    (``all_reduce_share`` for `ALL_REDUCE`, ``<prefix>_share`` else; None without a trace) and the trace's file."""
    xplanes = sorted(Path(folder).glob("plugins/profile/*/*.xplane.pb"))
    key = f"{prefix.replace('-', '_')}_share"
    if not xplanes:
        return {key: None, "trace": None}
    return {key: op_share(trace_events(xplanes[0]), prefix), "trace": str(xplanes[0])}


HLO_STATS_COLUMNS = {
    "category": "category",
    "hlo_op_name": "operation",
    "occurrences": "occurrences",
    "total_self_time": "self_us",
    "avg_self_time": "avg_self_us",
    "total_self_time_percent": "self_percent",
    "model_flop_rate": "gflop_per_s",
    "measured_memory_bw": "memory_gb_per_s",
    "bound_by": "bound_by",
}
"""The columns of xprof's ``hlo_stats`` tool that the operation table keeps, in jaxmlp's words."""


def hlo_stats(xplane: str | Path) -> pd.DataFrame | None:
    """A trace's operation table by xprof's ``hlo_stats``, largest self time first; None without xprof."""
    import importlib.util
    import json

    if importlib.util.find_spec("xprof") is None:
        return None
    from xprof.convert import raw_to_tool_data

    data = raw_to_tool_data.xspace_to_tool_data([str(xplane)], "hlo_stats", {})
    table = json.loads(data[0] if isinstance(data, tuple) else data)
    ids = [column["id"] for column in table["cols"]]
    rows = [[cell.get("v") if isinstance(cell, dict) else cell for cell in row["c"]] for row in table["rows"]]
    frame = pd.DataFrame(rows, columns=ids)
    kept = [c for c in HLO_STATS_COLUMNS if c in frame]
    frame = frame[kept].rename(columns=HLO_STATS_COLUMNS)
    return frame.sort_values("self_us", ascending=False, kind="stable").reset_index(drop=True)


OPERATION_COLUMNS = ["operation", "category", "share", "self_us", "occurrences", "bound_by"]
"""An operation table as the report shows it: the operation, its category, its share of the trace's operations' self
time, that self time (µs, summed over the trace), its calls and what bounds it (xprof's words)."""


OPS_NEEDED = ("operation", "self_us", "self_percent")
"""The columns an operation table must have to be read (and a kept one, to be reused)."""


def run_traces(folder: Path) -> dict[str, Path]:
    """A run folder's traces (`layout.RUN_TRACES`): each pipeline's newest ``.xplane.pb``, by pipeline."""
    found = sorted((folder / layout.RUN_TRACES).glob("*/**/*.xplane.pb"))  # capture folders carry the time
    return {xplane.relative_to(folder / layout.RUN_TRACES).parts[0]: xplane for xplane in found}


def read_ops(path: Path) -> tuple[pd.DataFrame | None, str]:
    """An operation table file (`layout.OPS_FILE`), or None and why it cannot be read."""
    try:
        table = pd.read_csv(path)
    except pd.errors.EmptyDataError:
        return None, "empty file"
    except (OSError, ValueError, UnicodeDecodeError) as e:  # pandas' parser errors are ValueErrors
        return None, str(e).splitlines()[0] if str(e) else type(e).__name__
    if missing := [c for c in OPS_NEEDED if c not in table]:
        return None, f"no {', '.join(missing)} column (not an operation table of xprof's hlo_stats)"
    return table, ""


def computed_ops(folder: Path, pipeline: str, xplane: Path) -> tuple[pd.DataFrame | None, str]:
    """Keep ``xplane``'s operation table in ``folder`` as `layout.OPS_FILE` unless a readable one is there. Returns the
    table where it could not be kept (else None) and why ("" where kept)."""
    path = folder / layout.OPS_FILE.format(pipeline=pipeline)
    if path.exists() and read_ops(path)[0] is not None:
        return None, ""
    try:
        table = hlo_stats(xplane)
    except Exception as e:  # a damaged trace: xprof's converter raises its own errors
        said = str(e).strip().splitlines()
        return None, f"its trace {xplane.name} not read by xprof: {said[0] if said else type(e).__name__}"
    if table is None:
        return None, (
            "its trace's operation table not computed: xprof is not installed (pip install tensorboard-plugin-profile)"
        )
    try:
        path.unlink(missing_ok=True)  # a kept table that could not be read: replaced by the one computed now
        with contextlib.suppress(Exists):  # another command computed it at the same time: theirs is kept
            write_new(path, table.to_csv(index=False))
    except OSError as e:  # a folder the user may only read: the table is shown, not kept
        return table, f"computed, not kept ({e.strerror or type(e).__name__}: {folder})"
    return None, ""


def op_tables(bench_file: str | Path) -> tuple[dict[str, pd.DataFrame], dict[str, str]]:
    """A benchmark run's operation tables by pipeline, each computed once (`computed_ops`) and kept in the run's folder,
    and each table that could not be computed or read, with why; both empty where the run has none."""
    folder = layout.run_folder(bench_file)
    tables: dict[str, pd.DataFrame] = {}
    unread: dict[str, str] = {}
    if folder is None or not folder.is_dir():
        return tables, unread
    for pipeline, xplane in run_traces(folder).items():
        table, why = computed_ops(folder, pipeline, xplane)
        if table is not None:  # computed, not kept: shown all the same
            tables[pipeline] = table
        if why:
            unread[layout.OPS_FILE.format(pipeline=pipeline)] = why
    for path in sorted(folder.glob(layout.OPS_FILE.format(pipeline="*"))):
        of = layout.ops_pipeline(path)
        if of is None:
            continue
        table, why = read_ops(path)
        if table is None:
            unread[path.name] = why
            continue
        tables[of] = table
    return tables, unread


def top_operations(table: pd.DataFrame, n: int = 8) -> pd.DataFrame:
    """The ``n`` operations of an operation table with the most self time, in `OPERATION_COLUMNS`."""
    top = table.sort_values("self_us", ascending=False, kind="stable").head(n)
    out = top.reindex(columns=OPERATION_COLUMNS)
    out["operation"] = out["operation"].astype(str).map(hlo.op_name)
    total = float(table["self_us"].astype(float).sum())
    out["share"] = top["self_us"].astype(float) / total if total > 0 else float("nan")
    return out.reset_index(drop=True)


def xprof_coverage(table: pd.DataFrame) -> float:
    """The operations' summed self time as a fraction of xprof's own total for the trace (its ``self_percent``'s
    denominator, which can be larger than their summed self time), from the table's own percentages."""
    return float(table["self_percent"].astype(float).sum()) / 100
