"""The findings of the other runs: scaling, where the time goes (a profiler trace), changes across runs (the history,
per machine), training and time to accuracy; each per machine, from its newest run that can answer."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from jaxmlp import changepoints, registry
from jaxmlp.hlo import op_label
from jaxmlp.results import history, tables
from jaxmlp.results.findings.model import ANCHOR, Finding, Table
from jaxmlp.results.findings.questions import CHANGES, OPERATIONS, SCALING_ANSWER, TIME_GOES, TO_ACCURACY, TRAINED
from jaxmlp.results.findings.select import Parts, machine, machine_of, newest_per_backend, stamp_of
from jaxmlp.results.store import layout
from jaxmlp.results.store.frames import Results
from jaxmlp.results.tables import (
    CaptureSummary,
    RunTables,
    op_tables,
    partial_note,
    partial_of,
    top_operations,
    xprof_coverage,
)
from jaxmlp.units import count, duration, percent, ratio

SCALING_CAPTION = (
    "Data-parallel scaling of the sharded pipeline: N devices in all over P processes (median; speed-up and "
    "efficiency against N = 1, P = 1 of the same run; the all-reduce's share of one traced epoch's operations)"
)


OPERATIONS_SHOWN = 8
"""The operations each profiled pipeline's table shows, most self time first (its file holds them all)."""


def operations(
    runs_by_file: Mapping[str, pd.DataFrame], folder: Path | None = None, timed_only: bool = True
) -> list[Finding]:
    """Per accelerator, its newest benchmark run with operation tables in its folder (`traces.op_tables`): each
    profiled pipeline's operations with the most self time."""
    read: dict[str, tuple[dict[str, pd.DataFrame], dict[str, str]]] = {}

    def tables_of(part: pd.DataFrame) -> tuple[dict[str, pd.DataFrame], dict[str, str]]:
        file = str(part["file"].iloc[0])
        if file not in read:
            read[file] = op_tables(file)
        return read[file]

    def answers(tabled: RunTables) -> bool:
        part = tabled.rows
        accelerator = bool(set(part["backend"].dropna()) & set(registry.ACCELERATORS))
        return accelerator and any(tables_of(part))  # the CPU's runs: no file looked for

    out = []
    for part in (t.rows for t in newest_per_backend(Parts(runs_by_file), answers, timed_only).values()):
        by_pipeline, unread = tables_of(part)
        file = str(part["file"].iloc[0])
        ops = layout.run_folder(file)
        said, shown_tables = [], []
        for pipeline, table in by_pipeline.items():
            top = top_operations(table, OPERATIONS_SHOWN)
            first = top.iloc[0] if len(top) else None
            said.append(
                f"{pipeline}: {len(table)} operations"
                + (
                    ""
                    if first is None
                    else f", the largest {op_label(first.operation, first.category)}, {percent(first.share)} of the "
                    "operations' self time" + (f", bound by {first.bound_by}" if pd.notna(first.bound_by) else "")
                )
            )
            where = layout.shown(str(ops / layout.OPS_FILE.format(pipeline=pipeline)) if ops else file, folder)
            shown_tables.append(
                Table(
                    f"{pipeline}: the {len(top)} operations with the most self time of the {len(table)} in its trace "
                    f"({where}; xprof's hlo_stats, time summed over the trace; share = its self time over the "
                    f"{len(table)} operations' self time, which is {percent(xprof_coverage(table))} of xprof's total "
                    "for the trace, its self_percent's denominator)",
                    top,
                )
            )
        said += [f"{name} not read ({why})" for name, why in unread.items()]
        out.append(
            Finding(
                OPERATIONS.text,
                "; ".join(said) + ".",
                ANCHOR.cpu_accelerator,
                True,
                layout.cited(file, folder, stamp_of(part)),
                machine_of(part),
                tuple(shown_tables),
            )
        )
    return out


def _scaling_label(row: Any) -> str:
    return f"N = {row.devices:.0f}" + (f", P = {row.processes:.0f}" if row.processes != 1 else "")


def _all_reduce(row: Any) -> str:
    share = getattr(row, "all_reduce_share", None)
    return "" if share is None or pd.isna(share) else f", all-reduce {percent(share)} of the epoch's operations"


def scaling(
    runs_by_file: Mapping[str, pd.DataFrame], folder: Path | None = None, by_name: bool = False
) -> list[Finding]:
    """Per machine, its newest scaling run over more than one device or process (one over N = 1 alone decides
    nothing about scaling). ``by_name``: the run was asked for by name, and answers for itself: where it cannot
    answer, its cells and why not."""
    found: dict[str, tuple[pd.DataFrame, pd.DataFrame]] = {}  # per machine, its run's rows and scaling table
    lone: dict[str, tuple[pd.DataFrame, pd.DataFrame]] = {}
    for rows in runs_by_file.values():  # newest first
        if not tables.is_scaling(rows):
            continue
        table = tables.scaling_table(rows)
        lone.setdefault(machine_of(rows), (rows, table))
        if "efficiency" in table and ((table["devices"] > 1) | (table["processes"] > 1)).any():
            found.setdefault(machine_of(rows), (rows, table))
    if not found and by_name and lone:
        return [_unanswered_run(name, rows, table, folder) for name, (rows, table) in lone.items()]
    if not found:
        table = next(iter(lone.values()))[1] if lone else pd.DataFrame()
        text = (
            "No scaling run yet: `jaxmlp scaling`."
            if not lone
            else f"{_missing(table, 'the newest scaling run')}: `{_command(table)}`."
        )
        return [Finding(SCALING_ANSWER.text, text, SCALING_ANSWER.anchor, False)]
    out = []
    for name, (rows, table) in found.items():
        parts = [
            f"{_scaling_label(r)}: efficiency {percent(r.efficiency)} (speed-up {ratio(r.speedup)}){_all_reduce(r)}"
            for r in table.itertuples()
            if (r.devices, r.processes) != (1, 1)
        ]
        out.append(_scaling(f"{'; '.join(parts)}{_notes(rows, table)}.", name, rows, table, folder))
    return out


def _missing(table: pd.DataFrame, run: str = "the run") -> str:
    """Why a scaling run's cells give no speed-up: what ``run`` lacks."""
    base = ((table["devices"] == 1) & (table["processes"] == 1)).any()
    if base:
        return f"Only N = 1, P = 1 in {run}: no speed-up to find (scaling needs more than one device or process)"
    return f"No N = 1, P = 1 baseline in {run}, so no speed-up or efficiency: measure it with the others"


def _command(table: pd.DataFrame) -> str:
    """The scaling run that would answer: the run's cells with N = 1, P = 1 (and more devices where it had one)."""
    devices = sorted({1, *(int(n) for n in table["devices"].dropna())})
    processes = sorted({1, *(int(p) for p in table["processes"].dropna())})
    devices = devices if len(devices) > 1 else [1, 2, 4]
    asked = f"jaxmlp scaling --devices {' '.join(map(str, devices))}"
    return asked + (f" --processes {' '.join(map(str, processes))}" if len(processes) > 1 else "")


def _notes(rows: pd.DataFrame, table: pd.DataFrame) -> str:
    """What a scaling run's answer adds: simulated CPU devices, and a stopped run's partial note."""
    notes = " (CPU devices are simulated and share the cores)" if (table["backend"] == "cpu").any() else ""
    return notes + partial_note(partial_of(rows))


def _unanswered_run(name: str, rows: pd.DataFrame, table: pd.DataFrame, folder: Path | None) -> Finding:
    """A scaling run asked for by name that cannot answer how it scales (``table``: its `tables.scaling_table`): its
    cells' times and why not."""
    cells = "; ".join(f"{_scaling_label(r)}: epoch {duration(r.epoch_s)}{_all_reduce(r)}" for r in table.itertuples())
    return _scaling(f"{cells}{_notes(rows, table)}. {_missing(table)}: `{_command(table)}`.", name, rows, table, folder)


def _scaling(said: str, name: str, rows: pd.DataFrame, table: pd.DataFrame, folder: Path | None) -> Finding:
    """A scaling run's answer: ``said``, citing the run's file, with its table."""
    cited = layout.cited(str(rows["file"].iloc[0]), folder, stamp_of(rows))
    return Finding(SCALING_ANSWER.text, said, ANCHOR.scaling, True, cited, name, (Table(SCALING_CAPTION, table),))


def trace(traces: Sequence[CaptureSummary], folder: Path | None = None) -> Finding:
    if not traces:
        return Finding(TIME_GOES.text, "No profiler trace yet: `jaxmlp profile`.", TIME_GOES.anchor, False)
    newest = max(traces, key=lambda t: layout.stamp_in(t.run) or layout.stamp_in(t.file))
    where = layout.cited(newest.file, folder, layout.stamp_in(newest.run) or layout.stamp_in(newest.file))
    if newest.top_ops.empty:
        return Finding(TIME_GOES.text, "The newest trace holds no device operations.", TIME_GOES.anchor, True, where)
    top = newest.top_ops.iloc[0]
    step = f"; a step takes {duration(newest.median_step_ms / 1e3)}" if newest.median_step_ms is not None else ""
    return Finding(
        TIME_GOES.text,
        f"In the newest trace ({newest.run}) the top operation is {op_label(top.op, top.category)}, "
        f"{percent(top.share)} of the operations' time ({top['count']} calls){step}.",
        ANCHOR.profiles,
        True,
        where,
    )


def changes_across_runs(past: history.RunHistory) -> list[Finding]:
    """Per machine, the changes the detector finds over its newest comparable runs (each history is one machine's
    and settings'): ``past``, `history.of` the results."""
    points = past.every
    if points.empty:
        return [
            Finding(
                CHANGES.text,
                "No benchmark has been run twice on one machine with the same settings yet.",
                ANCHOR.history,
                False,
            )
        ]
    changes = history.flagged(past.changes)
    out = []
    for where, part in points.groupby("machine", sort=False):
        mine = changes[changes["machine"] == where] if len(changes) else changes
        total, searched = part["file"].nunique(), past.points.loc[past.points["machine"] == where, "file"].nunique()
        runs = f"{total} comparable runs" if searched == total else f"the newest {searched} of {total} comparable runs"
        if why := changepoints.unavailable():
            text = f"No change searched for over {runs}: {why}."
        elif mine.empty:
            text = f"The change-point detector finds no change over {runs}."
        else:
            top = mine.iloc[0]
            text = (
                f"{len(mine)} change(s) over {runs}; the biggest: {top.benchmark} {ratio(top.ratio)} "
                f"({top.verdict}, a {top.kind}) at {top['to']}, after {top['from']}."
            )
        newest = part.sort_values("timestamp")["file"].iloc[-1]
        out.append(
            Finding(
                CHANGES.text,
                text,
                ANCHOR.history,
                True,
                f"{part['file'].nunique()} runs to {Path(str(newest)).name}",
                str(where),
                (Table("Changes (biggest first)", mine.drop(columns=["from_file", "to_file", "machine"])),)
                if len(mine)
                else (),
            )
        )
    return out


TRAINING_CAPTION = (
    "Training runs: one row per `jaxmlp train --json` file (epoch after the first: the median of the epochs after "
    "the first; not measured (-) for a run of one epoch, whose only epoch is the first)"
)


def training(results: Results, folder: Path | None = None) -> list[Finding]:
    """Per machine, its newest training run."""
    table = tables.training_table(results.runs)
    if table.empty:
        return [
            Finding(TRAINED.text, "No training run saved yet: `jaxmlp train --json reports`.", TRAINED.anchor, False)
        ]
    table = table.sort_values("timestamp")
    out = []
    for name, rows in table.groupby("machine", sort=False):
        r = rows.iloc[-1]
        steady = (
            f"{duration(r.epoch_s_median)} an epoch after the first"
            if pd.notna(r.epoch_s_median)
            else "no epoch after the first to time"
        )
        out.append(
            Finding(
                TRAINED.text,
                f"{r.pipeline} {r.precision} on {r.dataset}, {count(r.epochs, 'epoch')}: test "
                f"accuracy {percent(r.test_accuracy)}, {steady}{partial_note(r.get('partial'))}.",
                ANCHOR.training,
                True,
                r.file,
                str(name),
                (Table(TRAINING_CAPTION, rows.drop(columns=["machine"])),),
            )
        )
    return out


def time_to_accuracy(results: Results, folder: Path | None = None) -> list[Finding]:
    """Per machine, the newest run of each pipeline and precision (whichever file holds it), the fastest first."""
    table = tables.tta_table(results.tta)
    if table.empty:
        return [
            Finding(
                TO_ACCURACY.text,
                "No time-to-accuracy run yet: `jaxmlp tta --target 0.97 --runs 5`.",
                TO_ACCURACY.anchor,
                False,
            )
        ]
    first = results.tta.drop_duplicates("file").set_index("file")
    table = table.assign(
        machine=[machine(first.loc[f]) for f in table["file"]], stamp=[layout.stamp_in(str(f)) for f in table["file"]]
    )
    out = []
    for name, rows in table.groupby("machine", sort=False):
        newest = rows.sort_values("stamp").drop_duplicates(["pipeline", "precision"], keep="last")
        reached = newest[newest["tta_s"].notna()].sort_values("tta_s")
        head = (
            f"fastest to {percent(reached['target'].iloc[0])}: {reached['pipeline'].iloc[0]} "
            f"{reached['precision'].iloc[0]} in {duration(reached['tta_s'].iloc[0])}. "
            if len(reached)
            else ""
        )
        text = head + "; ".join(tables.tta_line(r) for r in newest.sort_values("tta_s").itertuples()) + "."
        files = ", ".join(layout.cited(f, folder) for f in dict.fromkeys(newest["file"]))
        out.append(
            Finding(
                TO_ACCURACY.text,
                text[0].upper() + text[1:],
                ANCHOR.tta,
                True,
                files,
                str(name),
                (
                    Table(
                        "Time to accuracy, the newest run of each pipeline and precision",
                        newest.drop(columns=["machine", "stamp", "file"]),
                    ),
                ),
            )
        )
    return out
