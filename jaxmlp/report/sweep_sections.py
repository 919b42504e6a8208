"""The release sweeps' and other tools' parts of the report, from a version matrix to a profiler capture. Pure."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd

from jaxmlp import changepoints, registry, units
from jaxmlp.measure.bisection import checked_line, probes_line
from jaxmlp.measure.sweep.validation import FLAT_GOAL, GOALS
from jaxmlp.registry import ALPHA, CHANGE_ALPHA, CHANGE_THRESHOLD, THRESHOLD
from jaxmlp.report.content import Figure, Finding, Run, Table, host_note, shown_first
from jaxmlp.report.explain import answer_line, changes_table, op_time_table, operations_table
from jaxmlp.results.schema.bisect import BisectDocument
from jaxmlp.results.schema.explain import ExplainDocument
from jaxmlp.results.schema.sweep import CellsDocument
from jaxmlp.results.schema.validation import ValidationDocument
from jaxmlp.results.store import layout
from jaxmlp.results.store.frames import Results
from jaxmlp.results.sweep.cells import cells_table, flags_table, with_ignored_flags
from jaxmlp.results.sweep.compared import (
    TimelineColumn,
    change_apart,
    column_groups,
    column_said,
    shown_of,
    timeline_columns,
)
from jaxmlp.results.sweep.views import (
    bisection_medians,
    bisection_table,
    flag_effects,
    is_timeline,
    sweep_sampling,
    sweep_steps,
    sweep_table,
    sweeps,
)
from jaxmlp.stats import RESULTS_DIFFER, quantile
from jaxmlp.units import MISSING, interval, p_value, percent, ratio

# --- the release timeline and its detector ------------------------------------------------------------------


TIMELINE_HEADERS = ("release", "median", "IQR", "processes", "change")
CHANGE_HEADERS = ("kind", "release", "before", "ratio", "95% interval", "p", "direction")


def change_rows(column: TimelineColumn) -> pd.DataFrame:
    """A column's changes as a verdict table: each one's kind, release, ratio, 95% interval and p; one that compares
    across results that differ (`change_apart`) ``results differ`` and nothing on time."""
    rows = [
        (c.kind, c.at, c.before, MISSING, MISSING, MISSING, RESULTS_DIFFER)
        if change_apart(column, c)
        else (
            c.kind,
            c.at,
            c.before,
            ratio(c.comparison.ratio),
            interval(c.comparison.ci_low, c.comparison.ci_high),
            p_value(c.comparison.p_one_sided()),
            c.direction,
        )
        for c in column.changes
    ]
    return pd.DataFrame(rows, columns=list(CHANGE_HEADERS))


def timeline_rows(column: TimelineColumn) -> pd.DataFrame:
    """A timeline column's releases: median and IQR of its samples, the change marked at each, bimodal ones said."""
    marked = changepoints.at_each(column.changes)
    apart = {b: a for a, b in column.differ}
    groups = column_groups(column)
    shown = shown_of(column.benchmark)
    rows = []
    for release, values in zip(column.releases, column.samples):
        ordered = sorted(values)
        change = marked.get(release)
        said = ""
        if release in apart:  # no word on time for a release whose results differ from the one before
            said = f"{RESULTS_DIFFER} from {apart[release]}"
        elif change is not None:
            timed = f"{change.direction} {ratio(change.comparison.ratio)}"
            said = f"{change.kind}: {RESULTS_DIFFER if change_apart(column, change) else timed}"
        if release in groups:
            said = "; ".join(x for x in (said, groups[release].line(shown)) if x)
        rows.append(
            (
                release,
                shown(statistics.median(ordered)),
                f"{shown(quantile(ordered, 0.25))} to {shown(quantile(ordered, 0.75))}",
                str(len(ordered)),
                said,
            )
        )
    return pd.DataFrame(rows, columns=list(TIMELINE_HEADERS))


CHANGE_RULE = (
    f"changes: ruptures' PELT over the releases' log medians, each candidate confirmed between every sample "
    f"of the segments either side (ratio of medians beyond {percent(CHANGE_THRESHOLD)}, one-sided "
    f"Mann-Whitney p < {CHANGE_ALPHA:g}); a release unlike both neighbours while they agree is a transient, "
    "consecutive small steps one way a drift"
)


def validation_table(doc: ValidationDocument) -> pd.DataFrame:
    """The validation as a table: a row per case, a recall and a false-alarm column per detector."""
    detectors = list(dict.fromkeys(r.detector for r in doc.rows))
    cases = list(dict.fromkeys(r.case for r in doc.rows))
    by = {(r.detector, r.case): r for r in doc.rows}
    rows = []
    for case in cases:
        goal = GOALS.get(case)
        row = [
            case,
            f">= {percent(goal)} found" if goal else (f"<= {percent(FLAT_GOAL)} flagged" if case == "flat" else ""),
        ]
        for name in detectors:
            r = by.get((name, case))
            row += (
                [MISSING, MISSING]
                if r is None
                else [MISSING if case == "flat" else percent(r.recall), percent(r.false_alarms)]
            )
        rows.append(row)
    columns = ["case", "goal"] + [f"{d} {what}" for d in detectors for what in ("found", "false alarms")]
    return pd.DataFrame(rows, columns=columns)


def _machine(s: dict[str, Any]) -> str:
    """A sweep's CPU model, and its host's name where the user gave one."""
    return f"{s['cpu_model']}{host_note(s.get('host'))}"


def _sampled(s: dict[str, Any]) -> tuple[str, str]:
    """A sweep's data set and what each process ran, in words; empty where the sweep does not say."""
    builtin = s["dataset"] is not None and pd.notna(s["dataset"])
    known = (("", s["epochs"], "epoch"), ("of ", s["samples"], "image")) if builtin else ()
    each = " ".join(
        said + units.count(int(value), noun) for said, value, noun in known if value is not None and pd.notna(value)
    )
    calls = ", ".join(
        f"{w} {units.count(int(n), 'call')}" for w, n in s["calls"].items() if w not in registry.SWEEP_PIPELINES
    )
    data = f"data {registry.dataset_label(s['dataset'])}" if builtin else ""
    return data, "; ".join(part for part in (each, calls) if part)


def _releases(rows: pd.DataFrame) -> list[str]:
    return sorted(rows["release"].unique(), key=registry.version_key) if "release" in rows else []


def _in_full(found: dict[str, pd.DataFrame], answers: Sequence[Finding]) -> str:
    """The one of a section's sweeps (by folder) shown in full, in `content.shown_first`'s order."""
    key = shown_first(answers)
    return max(found, key=lambda where: key(layout.stamp_in(where)), default="")


def _label_only(where: str, label: str, cells: Any, folder: Path | None) -> Run:
    stamp = layout.stamp_in(where)
    label = f"{layout.shown_stamp(stamp)} · {label} · {layout.shown(where, folder)}"
    return Run(f"INCOMPLETE · {label}" if cells is not None and not cells.complete else label, "", (), (), stamp)


def _checked_tables(steps: pd.DataFrame, effects: pd.DataFrame, cells_doc: CellsDocument | None) -> list[Table]:
    """A sweep's comparisons and what its cells file says (flags accepted, cells not measured or warned about)."""
    out = []
    if len(steps):
        shown_steps = with_ignored_flags(steps, cells_doc)
        out.append(Table("Each release against the previous one", shown_steps))
    if len(effects):
        out.append(Table("Each release with XLA flags against the same release without", effects))
    if cells_doc is not None and len(flags_table(cells_doc)):
        out.append(
            Table(
                "XLA flags per release: does each release accept each --xla-flags value?",
                flags_table(cells_doc),
            )
        )
    if cells_doc is not None and len(cells_table(cells_doc)):
        out.append(Table("Cells not measured, or warned about", cells_table(cells_doc)))
    return out


def sweep_runs(results: Results, folder: Path | None = None, answers: Sequence[Finding] = ()) -> list[Run]:
    """One run per version sweep: medians per release, each against the previous one, the flags' effects."""
    runs = []
    probes = [path.parent for path, _ in results.bisections]
    cells = {str(path.parent): doc for path, doc in results.cells}
    swept = {k: v for k, v in sweeps(results.runs, probes).items() if not is_timeline(k)}
    full = _in_full(swept, answers)
    for where, rows in swept.items():
        if where != full:
            runs.append(_label_only(where, f"releases {', '.join(_releases(rows))}", cells.get(where), folder))
            continue
        table, steps = sweep_table(rows), sweep_steps(rows, results.samples)
        effects = flag_effects(rows, results.samples)
        s = sweep_sampling(rows)
        data, each = _sampled(s)
        data = f"{data}; " if data else ""
        note = (
            f"{layout.shown(where, folder)}: {_machine(s)}, python {s['python']}, "
            f"{data}each sample is one process ({s['processes']} a cell, "
            f"in rotating order{'; ' + each if each else ''}; {s['cpu_affinity']} CPU(s) each); flagged: "
            f"one-sided Mann-Whitney p < {ALPHA} and ratio of medians > {1 + THRESHOLD:g}"
        )
        in_bytes = tuple(b.id for b in registry.SWEEP_BYTES)
        seconds = {
            c: "bytes" if str(c).startswith(in_bytes) else "s"
            for c in table.columns
            if c not in ("release", "xla_flags", "processes", "results_differ")
        }
        found = [
            Table(
                "Median per release (sweep_steady is the steady state: the median of the calls after the "
                "first; one call of a built-in epoch is one epoch; sweep_compile the median of a process's "
                "compiles; sweep_peak_rss each process's own peak memory)",
                table,
                seconds,
            )
        ]
        found += _checked_tables(steps, effects, cells.get(where))
        stamp = layout.stamp_in(where)
        releases = sorted(table["release"].unique(), key=registry.version_key)
        label = f"{layout.shown_stamp(stamp)} · releases {', '.join(releases)} · {layout.shown(where, folder)}"
        if where in cells and not cells[where].complete:  # stopped before its last round: say so first
            label = f"INCOMPLETE · {label}"
            note = (
                f"INCOMPLETE: this sweep was stopped before its last round; its samples so far are shown "
                f"(`jaxmlp sweep resume {layout.shown(where, folder)}` measures the rest). {note}"
            )
        plot = Figure("Steady state by release, flagged steps marked", "sweep", (rows, steps))
        runs.append(Run(label, note, tuple(found), (plot,), stamp))
    for older in (s for s in results.older_sweeps if s.kind == "sweep"):
        where = str(older.folder)
        runs.append(_label_only(where, f"releases {', '.join(older.releases)}", cells.get(where), folder))
    return runs


def timeline_runs(results: Results, folder: Path | None = None, answers: Sequence[Finding] = ()) -> list[Run]:
    """One run per release timeline: per workload, its plot, its verdict table and the newest validation."""
    runs = []
    cells = {str(path.parent): doc for path, doc in results.cells}
    timelines = {k: v for k, v in sweeps(results.runs).items() if is_timeline(k)}
    full = _in_full(timelines, answers)
    for where, rows in timelines.items():
        if where != full:
            named = _releases(rows)
            span = f"{named[0]} to {named[-1]}" if named else "no release"
            runs.append(_label_only(where, span, cells.get(where), folder))
            continue
        columns = timeline_columns(rows, results.samples)
        s = sweep_sampling(rows)
        releases = sorted({r for c in columns for r in c.releases}, key=registry.version_key)
        data, each = _sampled(s)
        measured = ", ".join(part for part in (data, f"{each} a process" if each else "") if part)
        note = (
            f"{layout.shown(where, folder)}: {len(releases)} releases, {', '.join(releases)}; {_machine(s)}"
            f"{', ' + measured if measured else ''}; each sample is one fresh process "
            f"({units.span(len(x) for c in columns for x in c.samples)} a release, in rotating order). {CHANGE_RULE}."
        )
        found, plots = [], []
        for column in columns:
            name = column.workload + (f", XLA_FLAGS={column.xla_flags}" if column.xla_flags else "")
            said = column_said(column)
            plots.append(Figure(f"{name}: steady state by release (median and IQR; {said})", "timeline", (column,)))
            table = change_rows(column) if column.changes else timeline_rows(column)
            found.append(Table(f"{name}: " + ("changes" if column.changes else "no change found; the releases"), table))
        if where in cells and len(cells_table(cells[where])):
            found.append(Table("Cells not measured, or warned about", cells_table(cells[where])))
        stamp = layout.stamp_in(where)
        span = f"{releases[0]} to {releases[-1]}" if releases else "no release"
        label = f"{layout.shown_stamp(stamp)} · {span}"
        if where in cells and not cells[where].complete:
            label, note = f"INCOMPLETE · {label}", f"INCOMPLETE: stopped before its last round. {note}"
        runs.append(Run(f"{label} · {layout.shown(where, folder)}", note, tuple(found), tuple(plots), stamp))
    for older in (s for s in results.older_sweeps if s.kind == "timeline"):
        where, named = str(older.folder), list(older.releases)
        span = f"{named[0]} to {named[-1]}" if named else "no release"
        runs.append(_label_only(where, span, cells.get(where), folder))
    if runs and results.validations:
        path, doc = max(results.validations, key=lambda v: layout.stamp_in(v[0]))
        g = doc.settings
        note = (
            f"{layout.shown(path, folder)}: {g.get('histories')} synthetic histories a case, {g.get('releases')} "
            f"releases of {g.get('samples')} samples, noise from {g.get('noise_samples')} real fresh-process "
            f"samples; found: within one release of the truth (a transient labelled a transient); chosen: "
            f"{doc.chosen}"
        )
        at = next(k for k, run in enumerate(runs) if run.tables or run.plots)  # the one shown in full
        newest = runs[at]
        runs[at] = replace(
            newest, tables=(*newest.tables, Table(f"The detector's validation ({note})", validation_table(doc)))
        )
    return runs


def bisection_run(path: Path, doc: BisectDocument, folder: Path | None = None) -> Run:
    """One `jaxmlp sweep bisect`: its answer line, its probes, a plot of the probed releases."""
    s = doc.settings
    note = (
        f"{layout.shown(path, folder)}: `jaxmlp sweep bisect {s.get('good')} {s.get('bad')}` on the steady "
        f"state of {s.get('workload')}, {s.get('processes')} processes a release a probe"
        f"{', XLA_FLAGS=' + str(s['xla_flags']) if s.get('xla_flags') else ''}; "
        f"{probes_line(doc.bisection)}, in {doc.seconds / 60:.1f} min. **{doc.line}**"
        + (f" ({checked_line(doc.bisection)})" if doc.bisection.checked else "")
    )
    medians = bisection_medians(doc)
    stamp = layout.stamp_in(path)
    label = f"{layout.shown_stamp(stamp)} · {s.get('good')} → {s.get('bad')} · {doc.line}"
    return Run(
        label,
        note,
        (Table("Probes", bisection_table(doc), {"from_median_s": "s"}),),
        (Figure("Bisection probes", "bisection", (medians, doc)),),
        stamp,
    )


def explain_run(path: Path, doc: ExplainDocument, folder: Path | None = None) -> Run:
    """One `jaxmlp sweep explain A B`: its answer, what changed in the program or each operation's time."""
    stamp = layout.stamp_in(path)
    note = f"{layout.shown(path.parent, folder)}: {answer_line(doc)}" + "".join(f"; {n}" for n in doc.notes)
    found = []
    if doc.operations:
        found.append(Table("Operations and fusion kinds added or removed", operations_table(doc)))
    if doc.op_times:
        found.append(Table("Operations by time per traced call, the biggest change first", op_time_table(doc)))
    if doc.changes:
        found.append(Table("The program: XLA's cost and memory analysis, compile split", changes_table(doc)))
    label = f"{layout.shown_stamp(stamp)} · {doc.workload}, {doc.a} → {doc.b}"
    return Run(label, note, tuple(found), (), stamp)
