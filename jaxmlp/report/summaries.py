"""Each result's answer, as a terminal or a pull request reads it: a title, a few lines, short tables of words and
numbers in units (`jaxmlp.units`), a closing line. Pure: `jaxmlp.report.text` renders an `Summary` as plain text or
Markdown; the numbers come from `jaxmlp.results.tables` and `jaxmlp.results.sweep_tables`, their statistics from
`jaxmlp.stats` (the same as `jaxmlp compare`'s).

- a version sweep: per workload and XLA-flags column, a row per release (`sweep_summary`);
- a bisection: its probes in the same form, then its answer line (`bisect_summary`);
- a benchmark or scaling run (`bench_summary`), training runs (`train_summary`), the detector's trials
  (`trials_summary`);
- a folder of many: every result found (`answers`), then the newest of each kind (`newest_of_each`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from jaxmlp import registry
from jaxmlp.measure.bisection import answer_line
from jaxmlp.registry import ALPHA, THRESHOLD, TRAIN_EPOCH
from jaxmlp.report.release_sections import CHANGE_RULE, change_rows, timeline_rows, validation_table
from jaxmlp.results import layout, sweep_tables, tables
from jaxmlp.results.findings import Finding, run_findings
from jaxmlp.results.findings.releases import UNDECIDED_LINE, sweep_verdict, timeline_verdict
from jaxmlp.results.frames import Results, query, tta_rows, without_sweeps
from jaxmlp.results.schema.bisect import BisectDocument
from jaxmlp.results.schema.sweep import CellsDocument
from jaxmlp.results.schema.trials import TrialsDocument
from jaxmlp.results.schema.tta import TtaDocument
from jaxmlp.results.schema.validation import ValidationDocument
from jaxmlp.units import MISSING, duration, interval, minutes, p_value, percent, ratio


class Summary(NamedTuple):
    """One result's answer: its title (none: not shown), lines before its tables (the verdict first), its tables (a
    caption and a table of strings or numbers each), lines after them, and its long tables (shown when all are
    asked for, else named in a line)."""

    title: str
    lines: tuple[str, ...] = ()
    tables: tuple[tuple[str, pd.DataFrame], ...] = ()
    closing: tuple[str, ...] = ()
    long: tuple[tuple[str, pd.DataFrame], ...] = ()


VERDICT_HEADERS = ("release", "median", "vs previous", "95% interval", "p", "verdict")
"""The columns of a verdict table, sweep or bisection alike."""


def verdict_rows(table: pd.DataFrame) -> pd.DataFrame:
    """`sweep_tables.release_verdicts` (or `probe_verdicts`) rows as the words of `VERDICT_HEADERS`."""
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
    """What the columns and "slower" and "faster" mean, in one line."""
    return (
        f"vs previous: the ratio of medians to {before} (95% bootstrap interval); slower or faster when "
        f"one-sided Mann-Whitney p < {alpha:g} and the medians differ by more than "
        f"{percent(threshold)}"
    )


def shown(path: str | os.PathLike[str], folder: Path | None) -> str:
    """``path`` relative to ``folder`` where it lies under it (the folder itself: its name), else as given."""
    if folder is None:
        return str(path)
    relative = os.path.relpath(path, folder)
    if relative == ".":
        return os.path.basename(os.path.abspath(path))
    return str(path) if relative.startswith("..") else relative


def _cell(label: str, flags: str) -> str:
    return f"{label} [{flags}]" if flags else label


# --- version sweeps and bisections ----------------------------------------------------------------------------


def sweep_summary(
    rows: pd.DataFrame, samples: pd.DataFrame, cells: CellsDocument | None = None, where: str = "", folder: str = ""
) -> Summary:
    """A sweep's verdict table per workload and XLA-flags column (a row per release, oldest first); then its cells
    that failed, were not measured or that XLA warned about. ``where`` is the sweep as shown, ``folder`` as
    `jaxmlp sweep resume` takes it."""
    verdicts = sweep_tables.release_verdicts(rows, samples) if len(rows) else pd.DataFrame()
    flags_used = bool(len(verdicts)) and bool((verdicts["xla_flags"] != "").any())
    found = []
    for (flags, workload), part in verdicts.groupby(["xla_flags", "workload"], sort=False) if len(verdicts) else ():
        column = f", XLA_FLAGS={flags}" if flags else (", no XLA flags" if flags_used else "")
        found.append((f"{workload}, steady state{column}", verdict_rows(part)))
    accepted = sweep_tables.flags_table(cells) if cells is not None else pd.DataFrame()
    if len(accepted):
        found.append(("XLA flags per release (does each release accept each --xla-flags value?)", accepted))
    processes = _processes(rows)
    lines = [
        f"each sample is one process's steady state (the median of its calls after the first); "
        f"{_count(processes.values())} processes a release, in rotating order",
        flagged_when(),
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
    if len(rows):
        lines.insert(0, f"Verdict: {sweep_verdict(rows, samples) or UNDECIDED_LINE}")
    return Summary(title, tuple(lines), tuple(found), _cell_lines(cells, processes) if cells is not None else ())


def _processes(rows: pd.DataFrame) -> dict[tuple[str, str], int]:
    """The processes measured in each cell (release, flags) of a sweep."""
    if not len(rows):
        return {}
    steady = rows[rows["test"] == registry.SWEEP_STEADY.id].assign(xla_flags=sweep_tables.flags_of(rows))
    counts = steady.groupby(["release", "xla_flags"])["rounds"].max()
    return {
        (str(v), str(f)): int(n)
        for v, f, n in zip(counts.index.get_level_values(0), counts.index.get_level_values(1), counts)
    }


def _count(values: Any) -> str:
    found = sorted(set(values))
    return "no" if not found else str(found[0]) if len(found) == 1 else f"{found[0]} to {found[-1]}"


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
    columns: Sequence[sweep_tables.TimelineColumn],
    cells: CellsDocument | None = None,
    where: str = "",
    folder: str = "",
) -> Summary:
    """A release timeline's verdict: per workload and XLA-flags column, its releases and the changes found (each
    with its release, ratio, 95% interval and p), then the cells that failed."""
    flags_used = any(c.xla_flags for c in columns)
    found: list[tuple[str, pd.DataFrame]] = []
    closing: list[str] = []
    for column in columns:
        name = f"{column.workload}, steady state" + (
            f", XLA_FLAGS={column.xla_flags}" if column.xla_flags else ", no XLA flags" if flags_used else ""
        )
        found.append((name, timeline_rows(column)))
        if column.changes:
            found.append((f"{name}: changes", change_rows(column.changes)))
        closing.append(
            f"{name}: "
            + (
                "; ".join(c.line() for c in column.changes)
                or f"no change from {column.releases[0]} to {column.releases[-1]}"
            )
        )
    releases = sorted({r for c in columns for r in c.releases}, key=registry.version_key)
    lines = [
        f"{len(releases)} releases, {releases[0] if releases else '?'} to {releases[-1] if releases else '?'}; "
        f"each sample is one process's steady state; {_count(len(s) for c in columns for s in c.samples)} "
        "processes a release, in rotating order",
        CHANGE_RULE,
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
    """A bisection's probes, each as a verdict table (its releases in the probe's order, each against the one
    before it in the probe) under what it decided; then its answer line."""
    s, b = doc.settings, doc.bisection
    probes = sweep_tables.probe_verdicts(doc)
    found = tuple(
        (f"probe {n}: {part['decision'].iloc[0]}", verdict_rows(part)) for n, part in probes.groupby("probe", sort=True)
    )
    flags = f", XLA_FLAGS={s['xla_flags']}" if s.get("xla_flags") else ""
    line = (
        f"jaxmlp sweep bisect {s.get('good')} {s.get('bad')} on the steady state of {s.get('workload')}, "
        f"{s.get('processes')} processes a release a probe{flags}; {len(b.measured)} of {len(b.candidates)} "
        f"releases measured in {len(b.probes)} probe(s), {minutes(doc.seconds)}"
    )
    title = f"Bisection: {where}" if where else "Bisection"
    said = flagged_when(s.get("threshold", THRESHOLD), s.get("alpha", ALPHA), "the release before it in the probe")
    return Summary(title, (f"Verdict: {answer_line(b)}", line, said), found, (answer_line(b),))


# --- benchmark runs, training, the detector's trials -----------------------------------------------------------


def bench_summary(df: pd.DataFrame, title: str = "") -> Summary:
    """A benchmark (or scaling) run's findings first (`jaxmlp.results.findings.run_findings`: one line each), then
    what it ran on, then the findings' tables; the long ones (GEMMs, peak memory) apart."""
    found = [f for f in run_findings(df) if f.answered]
    lines = [f"{f.asked}: {f.answer}" for f in found]
    if not df.empty:
        first = df.iloc[0]
        datasets = ", ".join(sorted(str(x) for x in df["dataset"].dropna().unique())) if "dataset" in df else ""
        if "size" in df and df["size"].isin(["smoke"]).any():
            lines.insert(
                0,
                "size smoke: every step ran once to check it works; its times are too short to answer "
                "how fast (a report leaves it out of its answers)",
            )
        lines.append(
            f"measured with jax {first.jax}, jaxlib {first.jaxlib}, torch {first.torch}, python {first.python}; "
            f"{first.cpu_model}, {first.cpu_affinity} cores; commit {str(first.commit)[:12]}; "
            + (f"size {first['size']}; " if pd.notna(first.get("size")) else "")
            + f"data: {registry.dataset_label(datasets or '?')}"
        )
    shown = tuple((t.caption, t.frame) for f in found for t in f.tables if not t.long and not t.frame.empty)
    long = tuple((t.caption, t.frame) for f in found for t in f.tables if t.long and not t.frame.empty)
    return Summary(title, tuple(lines), shown, (), long)


TTA_HEADERS = (
    "pipeline",
    "precision",
    "reached",
    "time to target (median)",
    "min",
    "max",
    "data",
    "compile",
    "training",
    "evaluation",
    "epochs",
    "best accuracy",
)


def tta_summary(doc: TtaDocument, title: str = "Time to accuracy") -> Summary:
    """A `jaxmlp tta` file: per pipeline and precision, how many runs reached the target and how fast."""
    table = tables.tta_table(tta_rows(doc))
    rows = [
        (
            r.pipeline,
            r.precision,
            f"{r.reached} of {r.runs}",
            duration(r.tta_s),
            duration(r.tta_min_s),
            duration(r.tta_max_s),
            duration(r.data_s),
            duration(r.compile_s),
            duration(r.train_s),
            duration(r.eval_s),
            f"{r.epochs:g}",
            percent(r.best_accuracy),
        )
        for r in table.itertuples()
    ]
    meta, settings = doc.metadata, doc.settings
    every = f"every {settings['eval_every']} steps" if settings.get("eval_every") else "after every epoch"
    line = (
        f"target {percent(settings.get('target'))} test accuracy, {settings.get('runs')} runs each (seeds), "
        f"evaluated {every}; "
        f"{registry.dataset_label(settings.get('dataset'))}; jax {meta.get('jax')}, torch {meta.get('torch')}, "
        f"{meta.get('cpu_model')}, {meta.get('cpu_affinity')} cores; "
        f"commit {str(meta.get('commit'))[:12]}"
    )
    closing = tuple(tables.tta_line(r) for r in table.itertuples())
    return Summary(
        title,
        (line,),
        (("Time to accuracy, per pipeline and precision", pd.DataFrame(rows, columns=list(TTA_HEADERS))),),
        closing,
    )


TRAIN_HEADERS = (
    "file",
    "data",
    "pipeline",
    "backend",
    "epochs",
    "epoch (median after the first)",
    "compile",
    "train accuracy",
    "test accuracy",
    "jax",
)


def train_summary(runs: pd.DataFrame, title: str = "Training") -> Summary:
    """A row per `jaxmlp train --json` file: its steady epoch, its compile time, its accuracies."""
    table = tables.training_table(runs)
    rows = [
        (
            r.file,
            r.dataset,
            r.pipeline,
            r.backend,
            str(r.epochs),
            duration(r.epoch_s_median),
            duration(r.compile_s),
            percent(r.train_accuracy),
            percent(r.test_accuracy),
            r.jax,
        )
        for r in table.itertuples()
    ]
    return Summary(title, (), (("One row per training run", pd.DataFrame(rows, columns=list(TRAIN_HEADERS))),))


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
    """How often the detector caught the injected slowdown, and how often it flagged a release against itself."""
    s, table = doc.settings, sweep_tables.trials_table(doc)
    rows = [
        (
            f"injected {percent(s.inject_slowdown)} slowdown",
            f"{doc.injected_flagged} of {s.trials}",
            ratio(table["injected_ratio"].median()),
        ),
        ("A/A: the same release on both sides", f"{doc.aa_flagged} of {s.trials}", ratio(table["aa_ratio"].median())),
    ]
    line = (
        f"{s.workload}, {s.processes_per_side} processes a side, jax {doc.metadata.get('jax')}, host "
        f"{doc.metadata.get('host')}; flagged when p < {s.alpha:g} and beyond {percent(s.threshold)}"
    )
    return Summary(
        title, (line,), (("Trials flagged", pd.DataFrame(rows, columns=["comparison", "flagged", "median ratio"])),)
    )


# --- every result of a folder ---------------------------------------------------------------------------------


KINDS = (
    "timeline",
    "bisection",
    "sweep",
    "benchmarks",
    "scaling",
    "training",
    "time to accuracy",
    "detector trials",
    "detector validation",
)
"""The kinds of answer, in the order a folder's summary shows them."""


class Found(NamedTuple):
    kind: str  # one of KINDS
    path: Path  # the result's file or folder
    when: str  # its UTC time as `layout.stamp` writes it ("" when unknown): the newest is the largest
    make: Callable[[], Summary]  # its answer, computed when asked: a folder's summary shows the newest of each kind

    @property
    def summary(self) -> Summary:
        return self.make()


def _when(value: Any) -> str:
    stamp = layout.stamp(str(value)) if isinstance(value, str) and value else "undated"
    return "" if stamp == "undated" else stamp


def summaries(results: Results, folder: Path | None = None) -> list[Found]:
    """Every result in ``results`` as its answer, in `KINDS` order; paths shown relative to ``folder``."""
    found = []
    probes = [path.parent for path, _ in results.bisections]
    for path, doc in results.bisections:
        where = shown(path.parent, folder)
        found.append(
            Found("bisection", path.parent, _when(doc.metadata.get("timestamp")), partial(bisect_summary, doc, where))
        )
    cells = {str(path.parent): doc for path, doc in results.cells}
    swept = sweep_tables.sweeps(results.runs, probes)
    lone = {where: pd.DataFrame() for where in cells if where not in swept and not _under(where, probes)}
    for where, rows in {**swept, **lone}.items():
        when = _when(str(rows["timestamp"].max())) if len(rows) else ""
        if sweep_tables.is_timeline(where):
            answer = partial(_timeline, rows, results.samples, cells.get(where), shown(where, folder), where)
            found.append(Found("timeline", Path(where), when, answer))
            continue
        answer = partial(sweep_summary, rows, results.samples, cells.get(where), shown(where, folder), where)
        found.append(Found("sweep", Path(where), when, answer))
    for file, run in tables.benchmark_runs(without_sweeps(results.runs)).items():
        kind = "scaling" if tables.is_scaling(run) else "benchmarks"
        title = f"{kind.capitalize()}: {shown(file, folder)}"
        found.append(Found(kind, Path(file), _when(run["timestamp"].iloc[0]), partial(bench_summary, run, title)))
    train = query(results.runs, TRAIN_EPOCH)
    for train_file, epochs in train.groupby("file") if len(train) else ():
        when = _when(epochs["timestamp"].iloc[0]) if "timestamp" in epochs else ""
        title = f"Training: {shown(str(train_file), folder)}"
        found.append(Found("training", Path(str(train_file)), when, partial(train_summary, epochs, title)))
    for validation_path, validation in results.validations:
        title = f"Change-point detector validation: {shown(validation_path.parent, folder)}"
        when = _when(validation.metadata.get("timestamp"))
        found.append(
            Found("detector validation", validation_path.parent, when, partial(validation_summary, validation, title))
        )
    for tta_path, tta in results.tta_documents:
        title = f"Time to accuracy: {shown(tta_path, folder)}"
        found.append(
            Found("time to accuracy", tta_path, _when(tta.metadata.get("timestamp")), partial(tta_summary, tta, title))
        )
    for trials_path, trials in results.trials:
        title = f"Detector trials: {shown(trials_path.parent, folder)}"
        when = _when(trials.metadata.get("timestamp"))
        found.append(Found("detector trials", trials_path.parent, when, partial(trials_summary, trials, title)))
    return sorted(found, key=lambda f: KINDS.index(f.kind))


def _timeline(
    rows: pd.DataFrame, samples: pd.DataFrame, cells: CellsDocument | None, shown_as: str, where: str
) -> Summary:
    columns = sweep_tables.timeline_columns(rows, samples) if len(rows) else []
    return timeline_summary(columns, cells, shown_as, where)


OLDER_NAMED = 5
"""How many of a kind's older results a folder's summary names (the rest counted, with the oldest's date)."""


def _older_line(kind: str, older: Sequence[Found], folder: Path | None) -> str:
    """One line naming a kind's older results: the newest few, then how many more and since when."""
    named = ", ".join(shown(f.path, folder) for f in older[:OLDER_NAMED])
    rest = older[OLDER_NAMED:]
    if rest:
        since = min((f.when for f in rest if f.when), default="")
        named += f" and {len(rest)} more" + (f" back to {layout.shown_stamp(since)}" if since else "")
    return f"{len(older)} older {kind} result(s): {named} (`jaxmlp summary PATH` for one)"


def _under(where: str, folders: Sequence[Path]) -> bool:
    return any(where == str(f) or where.startswith(f"{f}/") for f in folders)


def newest_of_each(found: Sequence[Found], folder: Path | None = None) -> list[Summary]:
    """A folder's answers kept short: of each kind, the newest result's answer, and the others named in a line."""
    if len(found) == 1:
        return [found[0].summary]
    out = []
    for kind in KINDS:
        mine = sorted((f for f in found if f.kind == kind), key=lambda f: (f.when, str(f.path)), reverse=True)
        if not mine:
            continue
        newest, older = mine[0], mine[1:]
        summary = newest.summary  # the one answer of this kind computed
        closing = summary.closing
        if older:
            closing += (_older_line(kind, older, folder),)
        out.append(summary._replace(closing=closing))
    return out


def folder_summary(found: Sequence[Finding], results: Sequence[Found], folder: Path | None = None) -> Summary:
    """A folder of many results: each question's finding in one line (the report's overview), then how many
    results of each kind it holds."""
    lines = tuple(f.line() for f in found if f.answered)
    counts = ", ".join(f"{n} {kind}" for kind in KINDS if (n := sum(r.kind == kind for r in results)))
    title = f"Findings: {folder.name if folder is not None else 'results'}"
    return Summary(
        title,
        lines,
        (),
        (f"Holds {counts}; `jaxmlp summary PATH` shows one in full, `--all` the newest of each kind.",),
    )
