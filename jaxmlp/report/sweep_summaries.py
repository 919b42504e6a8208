"""The summaries of a version sweep, a release timeline, a bisection, and the detector's trials and validation."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

import pandas as pd

from jaxmlp import registry
from jaxmlp.measure.bisection import answer_line, checked_line, probes_line
from jaxmlp.measure.environments.pythons import crossings
from jaxmlp.registry import ALPHA, THRESHOLD
from jaxmlp.report.corpus_sections import corpus_lines
from jaxmlp.report.summary_base import Summary
from jaxmlp.report.sweep_sections import CHANGE_RULE, change_rows, timeline_rows, validation_table
from jaxmlp.results.findings.sweeps import UNDECIDED_LINE, sweep_verdict, timeline_verdict
from jaxmlp.results.schema.bisect import BisectDocument
from jaxmlp.results.schema.corpus import CorpusDocument
from jaxmlp.results.schema.sweep import CellsDocument
from jaxmlp.results.schema.trials import TrialsDocument
from jaxmlp.results.schema.validation import ValidationDocument
from jaxmlp.results.sweep.cells import flags_table
from jaxmlp.results.sweep.compared import TimelineColumn, cell_groups, column_said, comparisons, flags_of
from jaxmlp.results.sweep.corpus_totals import corpus_table, kinds_table
from jaxmlp.results.sweep.views import (
    probe_verdicts,
    pythons_of,
    release_verdicts,
    sweep_steps,
    trials_table,
)
from jaxmlp.results.tables import partial_note
from jaxmlp.units import MISSING, duration, interval, minutes, p_value, percent, ratio, size, span

VERDICT_HEADERS = ("release", "median", "vs previous", "95% interval", "p", "verdict")
"""The columns of a verdict table, sweep or bisection alike."""


def verdict_rows(table: pd.DataFrame) -> pd.DataFrame:
    """`release_verdicts` (or `probe_verdicts`) rows as the words of `VERDICT_HEADERS`."""
    rows = [
        (
            str(r.release),
            duration(r.median),
            ratio(r.ratio),
            interval(r.ci_low, r.ci_high),
            p_value(r.p),
            r.verdict if isinstance(r.verdict, str) else MISSING,
        )
        for r in table.itertuples()
    ]
    return pd.DataFrame(rows, columns=list(VERDICT_HEADERS))


def flagged_when(threshold: float = THRESHOLD, alpha: float = ALPHA, before: str = "the release before") -> str:
    """What the columns and the four words mean, in one line."""
    return (
        f"vs previous: the ratio of medians to {before} (its 95% interval); slower or faster when "
        f"one-sided Mann-Whitney p < {alpha:g} and the medians differ by more than "
        f"{percent(threshold)}; the same when the interval lies within {percent(threshold)} both ways; "
        "else inconclusive"
    )


def _cell(label: str, flags: str) -> str:
    return f"{label} [{flags}]" if flags else label


# --- version sweeps and bisections ----------------------------------------------------------------------------


def sweep_summary(
    rows: pd.DataFrame, samples: pd.DataFrame, cells: CellsDocument | None = None, where: str = "", folder: str = ""
) -> Summary:
    """A sweep's verdict table per workload and flags column, then its cells failed, unmeasured or warned of."""
    done = comparisons(rows, samples) if len(rows) else []  # once: the table's and the verdict's
    verdicts = release_verdicts(rows, samples, done=done) if len(rows) else pd.DataFrame()
    flags_used = bool(len(verdicts)) and bool((verdicts["xla_flags"] != "").any())
    found = []
    for (flags, workload), part in verdicts.groupby(["xla_flags", "workload"], sort=False) if len(verdicts) else ():
        column = f", XLA_FLAGS={flags}" if flags else (", no XLA flags" if flags_used else "")
        found.append((f"{workload}, steady state{column}", verdict_rows(part)))
    accepted = flags_table(cells) if cells is not None else pd.DataFrame()
    if len(accepted):
        found.append(("XLA flags per release (does each release accept each --xla-flags value?)", accepted))
    processes = _processes(rows)
    lines = [
        f"each sample is one process's steady state (the median of its calls after the first); "
        f"{span(processes.values())} processes a release, in rotating order",
        flagged_when(),
    ]
    lines += [
        f"{workload}, {_cell(release, flags)}: {groups.line()}: its median and its ratios pool the two groups"
        for workload, flags, release, groups in (cell_groups(rows, samples) if len(rows) else ())
    ]
    if not found:
        lines = ["no release was measured"]
    title = f"Releases compared: {where}" if where else "Releases compared"
    if cells is not None and not cells.complete:
        title += " (INCOMPLETE)"
        lines.insert(
            0,
            f"INCOMPLETE: stopped before its last round; these are its samples so far (`jaxmlp sweep "
            f"resume {folder or where}` measures the rest)",
        )
    lines += python_lines(pythons_of(rows)) if found else ()
    if len(rows):
        verdict = sweep_verdict(rows, sweep_steps(rows, samples, done=done), cells)
        lines.insert(0, f"Verdict: {verdict or UNDECIDED_LINE}")
    return Summary(title, tuple(lines), tuple(found), _cell_lines(cells, processes) if cells is not None else ())


def _processes(rows: pd.DataFrame) -> dict[tuple[str, str], int]:
    """The processes measured in each cell (release, flags) of a sweep."""
    if not len(rows):
        return {}
    steady = rows[rows["test"] == registry.SWEEP_STEADY.id].assign(xla_flags=flags_of(rows))
    counts = steady.groupby(["release", "xla_flags"])["rounds"].max()
    return {
        (str(v), str(f)): int(n)
        for v, f, n in zip(counts.index.get_level_values(0), counts.index.get_level_values(1), counts)
    }


def python_lines(ran: Mapping[str, str]) -> tuple[str, ...]:
    """Which Python the releases ran on: one line, and a line marking each step across a change of Python."""
    if not ran:
        return ()
    groups: dict[str, list[str]] = {}
    for label in sorted(ran, key=registry.version_key):
        groups.setdefault(ran[label], []).append(label)
    if len(groups) == 1:
        return (f"Python {next(iter(groups))} for every release",)
    said = "; ".join(f"Python {python} for {', '.join(labels)}" for python, labels in groups.items())
    marks = [
        f"the step {a} -> {b} crosses a change of Python ({ran[a]} -> {ran[b]}): what it shows may be the Python's"
        for a, b in crossings(ran)
    ]
    return (said, *marks)


def _cell_lines(cells: CellsDocument, processes: dict[tuple[str, str], int]) -> tuple[str, ...]:
    lines = []
    for c in cells.cells:
        name = _cell(c.label, c.xla_flags)
        if c.status != "ok":
            lines.append(f"not measured: {name}: {c.status}")
        if c.failed:
            asked = c.failed + processes.get((c.label, c.xla_flags), 0)
            lines.append(f"FAILED: {name}: {c.failed} of {asked} processes ({c.failure})")
        if c.note:
            lines.append(f"XLA said, for {name}: {c.note}")
    return tuple(lines)


def timeline_summary(
    columns: Sequence[TimelineColumn],
    cells: CellsDocument | None = None,
    where: str = "",
    folder: str = "",
    ran: Mapping[str, str] | None = None,
) -> Summary:
    """A release timeline's verdict per workload and flags column, the Pythons (``ran``), the cells failed."""
    flags_used = any(c.xla_flags for c in columns)
    found: list[tuple[str, pd.DataFrame]] = []
    closing: list[str] = []
    for column in columns:
        name = f"{column.workload}, steady state" + (
            f", XLA_FLAGS={column.xla_flags}" if column.xla_flags else ", no XLA flags" if flags_used else ""
        )
        found.append((name, timeline_rows(column)))
        if column.changes:
            found.append((f"{name}: changes", change_rows(column)))
        closing.append(f"{name}: {column_said(column)}")
    releases = sorted({r for c in columns for r in c.releases}, key=registry.version_key)
    lines = [
        f"{len(releases)} releases, {releases[0] if releases else '?'} to {releases[-1] if releases else '?'}; "
        f"each sample is one process's steady state; {span(len(s) for c in columns for s in c.samples)} "
        "processes a release, in rotating order",
        CHANGE_RULE,
        *python_lines(ran or {}),
    ]
    if not columns:
        lines = ["no release was measured"]
    title = f"Release timeline: {where}" if where else "Release timeline"
    if cells is not None and not cells.complete:
        title += " (INCOMPLETE)"
        lines.insert(0, f"INCOMPLETE: stopped before its last round (`jaxmlp sweep resume {folder or where}`)")
    cell_lines = _cell_lines(cells, {}) if cells is not None else ()
    if columns:
        lines.insert(0, f"Verdict: {timeline_verdict(columns)}")
    return Summary(title, tuple(lines), tuple(found), (*closing, *cell_lines))


def bisect_summary(doc: BisectDocument, where: str = "") -> Summary:
    """A bisection's probes, each as a verdict table under what it decided; then its answer line."""
    s, b = doc.settings, doc.bisection
    probes = probe_verdicts(doc)
    found = tuple(
        (f"probe {n}: {part['decision'].iloc[0]}", verdict_rows(part)) for n, part in probes.groupby("probe", sort=True)
    )
    flags = f", XLA_FLAGS={s['xla_flags']}" if s.get("xla_flags") else ""
    line = (
        f"jaxmlp sweep bisect {s.get('good')} {s.get('bad')} on the steady state of {s.get('workload')}, "
        f"{s.get('processes')} processes a release a probe{flags}; {probes_line(b)}, "
        f"{minutes(doc.seconds)}"
    )
    title = f"Bisection: {where}" if where else "Bisection"
    said = flagged_when(s.get("threshold", THRESHOLD), s.get("alpha", ALPHA), "the release before it in the probe")
    checked = (checked_line(b),) if b.checked else ()
    rule = (said,) if b.probes else ()  # no probe compared releases: no rule to state
    return Summary(title, (f"Verdict: {answer_line(b)}", line, *checked, *rule), found, (answer_line(b),))


def validation_summary(doc: ValidationDocument, title: str = "Change-point detector validation") -> Summary:
    """The detector's validation: how often each detector found each known change, and flagged a flat history."""
    s = doc.settings
    line = (
        f"{s.get('histories')} synthetic histories a case, {s.get('releases')} releases of {s.get('samples')} "
        f"samples each, noise drawn from {s.get('noise_samples')} real fresh-process samples ({s.get('noise')}); "
        f"found: the change marked within one release (a transient labelled a transient); false alarms: a change "
        f"marked anywhere else"
    )
    return Summary(
        title, (line,), (("Found and false alarms, per detector", validation_table(doc)),), (f"chosen: {doc.chosen}",)
    )


def trials_summary(doc: TrialsDocument, title: str = "Detector trials") -> Summary:
    """How often the injected slowdown was called slower and a release against itself the same (or slower), each
    rate with its 95% interval, and the minutes each comparison took to its verdict."""
    s, table = doc.settings, trials_table(doc)
    said = {
        "injected_slower": (f"injected {percent(s.inject_slowdown)} slowdown called slower", "injected"),
        "aa_same": ("A/A: the same release on both sides, called the same", "aa"),
        "aa_slower": ("A/A called slower", "aa"),
    }
    rows = [
        (
            said[key][0],
            f"{r['found']:g} of {r['of']:g}",
            f"{percent(r['low'])} to {percent(r['high'])}",
            ratio(table[f"{said[key][1]}_ratio"].median()),
            minutes(statistics.median(seconds)) if (seconds := doc.seconds(said[key][1])) else "not recorded",
        )
        for key, r in doc.rates().items()
    ]
    start = f"{s.processes_per_side} processes a side" + (
        f" at first, more while {s.budget_minutes:g} min a trial lasted" if s.budget_minutes else ""
    )
    machine = doc.metadata.get("host") or doc.metadata.get("machine_cpu")
    line = (
        f"{s.workload}, {start}, noise {s.noise}, jax {doc.metadata.get('jax')}, on {machine}; the four words at "
        f"p < {s.alpha:g} and ±{percent(s.threshold)}" + partial_note(doc.metadata.get("partial") or None)
    )
    columns = ["comparison", "found", "95% interval", "median ratio", "median time to a verdict"]
    return Summary(title, (line,), (("Found rates", pd.DataFrame(rows, columns=columns)),))


def corpus_summary(doc: CorpusDocument, where: str = "") -> Summary:
    """A corpus run: its total and what was missed and why first, then a row a case."""
    s, disk = doc.settings, doc.disk
    detector = ", ".join(f"{k.replace('_', ' ')} {v:g}" for k, v in dict(s.get("detector") or {}).items())
    line = (
        f"{s.get('manifest')}: each case's timeline over its releases ({_each_processes(doc)} processes a release), "
        f"its bisection where a range is given, the explanation of what was found, its injected-slowdown trials; "
        f"the detector's parameters fixed "
        f"before it ran ({detector}); {minutes(doc.seconds)}"
        + (f", environments {size(disk['envs_bytes'])} on disk" if disk.get("envs_bytes") is not None else "")
        + partial_note(doc.metadata.get("partial") or None)
    )
    title = f"Known regressions: {where}" if where else "Known regressions"
    lines = corpus_lines(doc)
    tables = (("Each kind", kinds_table(doc.scores)), ("Each case", corpus_table(doc.scores)))
    return Summary(title, (lines[0], line, *lines[1:]), tables)


def _each_processes(doc: CorpusDocument) -> str:
    """The processes a release the cases ran with: one number, or the range where cases set their own."""
    each = sorted({s.case.runs.processes for s in doc.scores if s.case.runs.processes is not None})
    if not each:
        return str(doc.settings.get("processes"))
    return str(each[0]) if len(each) == 1 else f"{each[0]}-{each[-1]}"
