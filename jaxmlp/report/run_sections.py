"""The runs' parts of the report: a finding's tables and plots, the other runs, the history, a roofline, a capture."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd

from jaxmlp import units
from jaxmlp.report.content import Figure, Finding, Run, Table, describe
from jaxmlp.report.sweep_sections import CHANGE_RULE
from jaxmlp.results import history, tables
from jaxmlp.results.findings.select import stamp_of as run_stamp
from jaxmlp.results.schema import machines
from jaxmlp.results.schema.machines import machine
from jaxmlp.results.schema.roofline import RooflineDocument
from jaxmlp.results.store import layout
from jaxmlp.results.tables import CaptureSummary

HISTORY_PLOTTED = 8
"""A machine's history plot shows at most this many benchmarks, those with the biggest changes."""


def finding_run(finding: Finding, plots: Sequence[Figure] = (), envs: dict[str, pd.DataFrame] | None = None) -> Run:
    """A finding's tables (and plots) as the run it rests on, with what that run was measured on and with."""
    label = f"{finding.machine}: {finding.run}" if finding.machine else finding.run
    notes = [
        describe({**tables.shown_metadata(rows), "file": name})
        for name, rows in (envs or {}).items()
        if finding.run.startswith(f"{name} (") or f"; {name} (" in finding.run
    ]
    return Run(label, " ".join(notes), finding.tables, tuple(plots), layout.stamp_in(finding.run.split(" (")[0]))


def earlier_runs(
    runs_by_file: dict[str, pd.DataFrame], shown: Sequence[Finding], folder: Path | None, keep: Any = None
) -> tuple[Run, ...]:
    """The benchmark files the findings do not rest on, as labels (newest first)."""
    used = " ".join(f.run for f in shown)
    out = []
    for file, rows in runs_by_file.items():
        if (keep is None or keep(rows)) and layout.shown(file, folder) not in used:
            env = tables.shown_metadata(rows)
            out.append(
                Run(
                    f"{layout.shown_stamp(run_stamp(rows))} · {env['backends']} · {env['machine']} · "
                    f"{layout.shown(file, folder)}",
                    "",
                    (),
                    (),
                    run_stamp(rows),
                )
            )
    return tuple(out)


def summarised_runs(older: pd.DataFrame, folder: Path | None) -> tuple[Run, ...]:
    """The runs the folder's index summarised (`Results.older`), a label a machine, newest machine first."""
    runs = older[older["kind"] == "bench"].drop_duplicates("file") if len(older) else older
    if runs.empty:
        return ()
    stamps = [layout.stamp_in(str(f)) or layout.stamp(str(t)) for f, t in zip(runs["file"], runs["timestamp"])]
    runs = runs.assign(_stamp=stamps)
    keys = [key for key in machines.MACHINE if key in runs]
    out = []
    for _, mine in runs.groupby(keys, dropna=False, sort=False, observed=True) if keys else (((), runs),):
        ordered = mine.sort_values("_stamp")
        first, last = ordered.iloc[0], ordered.iloc[-1]
        how_many = units.count(len(mine), "older run")
        label = (
            f"{layout.shown_stamp(last['_stamp'])} · {machine(last)} · {how_many} since "
            f"{layout.shown_stamp(first['_stamp'])}, summarised in the history; the newest "
            f"{layout.shown(str(last['file']), folder)}"
        )
        out.append(Run(label, "", (), (), str(last["_stamp"])))
    return tuple(sorted(out, key=lambda run: run.stamp, reverse=True))


def ladder_plots(finding: Finding) -> list[Figure]:
    ladder = next((t.frame for t in finding.tables if t.caption.startswith("Epoch ladder")), None)
    if ladder is None or ladder.empty:
        return []
    return [Figure(f"Epoch ladder with the floor of each precision ({finding.machine})", "ladder", (ladder,))]


def loader_plots(finding: Finding) -> list[Figure]:
    return [Figure(f"Loader ladder ({finding.machine})", "loader_ladder", (t.frame,)) for t in finding.tables[:1]]


def cpu_accelerator_plots(finding: Finding) -> list[Figure]:
    """The CPU-against-accelerator table's plot (not the operation tables')."""
    frame = finding.tables[0].frame if finding.tables else None
    if frame is None or not len(frame) or "cpu_over_accelerator" not in frame:
        return []
    return [Figure("CPU vs accelerator epoch times", "cpu_accelerator", (frame,))]


def _history_plots(points: pd.DataFrame, changes: pd.DataFrame) -> tuple[dict[str, Figure], list[str]]:
    """A plot for each machine with changes, and the sentences saying what each shows and which machines have none."""
    flagged = history.flagged(changes) if len(changes) else changes
    order = list(dict.fromkeys(points.sort_values("timestamp", ascending=False)["machine"]))  # newest run first
    plots: dict[str, Figure] = {}
    said = []
    for where in order:
        mine = flagged[flagged["machine"] == where] if len(flagged) else flagged
        names = list(dict.fromkeys(mine["benchmark"])) if len(mine) else []
        if not names:
            said.append(f"{where}: no change, so no plot.")
            continue
        top = names[:HISTORY_PLOTTED]
        which = (
            f"its {len(top)} benchmarks with the biggest changes (of {len(names)} with one)"
            if len(names) > len(top)
            else f"its {units.count(len(top), 'benchmark')} with a change"
        )
        said.append(f"{where}: the plot shows {which}.")
        shown = points[(points["machine"] == where) & points["benchmark"].isin(top)]
        plots[str(where)] = Figure(
            f"History on {where}: the benchmarks with the biggest changes (median and IQR per run; changes marked)",
            "history",
            (shown, mine[mine["benchmark"].isin(top)]),
        )
    return plots, said


def history_part(answers: Sequence[Finding], past: history.RunHistory) -> tuple[str, list[Run]] | None:
    """The history section's note and runs (none without a history), with a plot of each machine's changes."""
    points = past.points
    if points.empty:
        return None
    plots, said = _history_plots(points, past.changes)
    note = (
        f"Each machine's runs are their own history (same CPU model, cores, backend and device, host and "
        f"settings); changes found by the detector the release timeline uses, over every run's raw samples: "
        f"{CHANGE_RULE}. " + " ".join(said)
    )
    if len(past.older):
        note += (
            f" Drawn and searched: each machine's newest {history.RECENT_RUNS} runs; the "
            f"{past.every['file'].nunique() - points['file'].nunique()} older ones are summarised in a table "
            "(results.csv holds the rows of each machine's newest runs; `jaxmlp summary PATH` shows an older one)."
        )
    runs = [finding_run(f, [plots.pop(f.machine)] if f.machine in plots else []) for f in answers if f.tables]
    runs += [Run(machine, "", (), (plot,)) for machine, plot in plots.items()]  # a machine no finding names
    older: tuple[Table, ...] = ()
    if len(past.older):
        when = {c: past.older[c].dt.strftime("%Y-%m-%d %H:%M UTC") for c in ("first", "last")}
        older = (
            Table(
                f"Older runs, summarised (before each machine's newest {history.RECENT_RUNS}; median of their medians)",
                past.older.drop(columns="machine").assign(**when),
            ),
        )
    if runs:
        runs[0] = replace(runs[0], tables=runs[0].tables + older)
    elif older:
        runs = [Run("older runs", "", older)]
    return note, runs


def roofline_run(path: Path, doc: RooflineDocument, folder: Path | None = None) -> Run:
    """One `jaxmlp roofline`: the ceilings, each workload's point, the plot."""
    c = doc.ceilings
    rows = [
        {
            "workload": name,
            "intensity": p.get("intensity"),
            "binds": p.get("binds", p.get("why")),
            "attainable_s": p.get("attainable_seconds"),
            "measured_s": p.get("measured_seconds"),
            "x_attainable": p.get("x_attainable"),
            "note": p.get("note", ""),
        }
        for name, p in doc.points.items()
    ]
    stamp = layout.stamp_in(path)
    note = (
        f"{layout.shown(path, folder)}: FLOP rate {units.flop_rate(c.get('flops_per_second'))} (XLA matmul "
        f"{c.get('best_shape')}), bandwidth {units.size(c.get('bytes_per_second'))}/s (XLA STREAM "
        f"{c.get('best_kernel')}; numpy triad {units.size((c.get('numpy_bytes_per_second') or {}).get('triad'))}"
        f"/s), kept in {c and doc.ceilings_file}; attainable = max(flops / FLOP rate, bytes / bandwidth), from "
        "XLA's cost analysis (a loop's body counted once a batch for the built-in scan; once for a user "
        "workload's loop)"
    )
    m = doc.metadata
    return Run(
        f"{layout.shown_stamp(stamp)} · {machine(m)}, jax {m.get('jax')}",
        note,
        (Table("Each workload on the roofline", pd.DataFrame(rows)),),
        (Figure("Roofline", "roofline", (doc,)),),
        stamp,
    )


def trace_run(trace: CaptureSummary, folder: Path | None = None) -> Run:
    """One profiler capture: where its steps' time went, and its top operations."""
    steps, where = trace.steps, layout.shown(trace.file, folder)
    found = [Table("Top operations by total time", trace.top_ops)]
    if len(steps):
        note = (
            f"{where}: {len(steps)} marked steps, median {units.duration((trace.median_step_ms or 0) / 1e3)} "
            f"(load {units.duration((trace.median_load_ms or 0) / 1e3)}, compute "
            f"{units.duration((trace.median_compute_ms or 0) / 1e3)}). Open with `jaxmlp tensorboard --logdir` on "
            "its folder."
        )
        found.insert(0, Table("Step time breakdown", tables.step_stats(steps)))
    else:
        note = f"{where}: no step markers."
    stamp = layout.stamp_in(trace.run) or layout.stamp_in(trace.file)
    return Run(f"{layout.shown_stamp(stamp)} · {trace.run}", note, tuple(found), (), stamp)
