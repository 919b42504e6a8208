"""The report's content, computed before anything is rendered: one section per subject (benchmarks, loaders,
CPU vs accelerator (GPU, TPU), history across runs, version matrix, bisection, scaling, profiles, training runs,
the detector's trials), each with the newest run in full and the earlier runs folded. Pure: no matplotlib, no
HTML; tests read sections as data.

The tables come from `jaxmlp.results.tables`, `sweep_tables` and `history`, their statistics from `jaxmlp.stats`;
`jaxmlp.report.answers` puts the overview's answers together from the same tables, `plots` draws the figures,
`html` and `markdown` render.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from jaxmlp import changepoints, registry, units
from jaxmlp.changepoints import Change
from jaxmlp.measure.sweep.validation import FLAT_GOAL, GOALS
from jaxmlp.registry import ALPHA, CHANGE_ALPHA, CHANGE_THRESHOLD, THRESHOLD
from jaxmlp.report.explain import answer_line, changes_table, op_time_table, operations_table
from jaxmlp.results import history, layout, sweep_tables, tables
from jaxmlp.results.frames import Results, without_sweeps
from jaxmlp.results.schema.bisect import BisectDocument
from jaxmlp.results.schema.explain import ExplainDocument
from jaxmlp.results.schema.roofline import RooflineDocument
from jaxmlp.results.schema.trials import TrialsDocument
from jaxmlp.results.schema.validation import ValidationDocument
from jaxmlp.results.traces import CaptureSummary
from jaxmlp.stats import quantile
from jaxmlp.units import MISSING, duration, interval, p_value, percent, ratio


class Table(NamedTuple):
    caption: str
    frame: pd.DataFrame
    formats: Mapping[str, str] = {}  # the unit of a column its name does not say (`jaxmlp.report.display`)


class Figure(NamedTuple):
    """A plot to draw: its alt text, its kind (`jaxmlp.report.plots.PLOTTERS`) and the data it is drawn from."""

    alt: str
    kind: str
    data: tuple[Any, ...]


@dataclass(frozen=True)
class Run:
    """One run's part of a section: which run (``label``: its date, commit, versions), a line saying where its
    numbers come from, its tables and plots."""

    label: str
    note: str
    tables: tuple[Table, ...] = ()
    plots: tuple[Figure, ...] = ()
    stamp: str = ""  # `jaxmlp.results.layout.stamp_in`: runs sort by it
    backends: str = ""  # where a section shows the newest run of each backend


@dataclass(frozen=True)
class ReportSection:
    """One subject: its title and anchor, a line on how to read it, the runs shown in full (the newest; the newest
    of each backend for benchmarks) and the earlier runs, folded (their tables only)."""

    title: str
    note: str
    shown: tuple[Run, ...] = ()
    earlier: tuple[Run, ...] = ()
    anchor: str = ""

    @property
    def tables(self) -> tuple[Table, ...]:
        return tuple(t for run in self.shown for t in run.tables)

    @property
    def plots(self) -> tuple[Figure, ...]:
        return tuple(p for run in self.shown for p in run.plots)


# Each subject's anchor in the page: the overview links to them.
BENCHMARKS, LOADERS, CPU_ACCELERATOR, HISTORY, MATRIX = "benchmarks", "loaders", "cpu-accelerator", "history", "matrix"
BISECTION, SCALING, PROFILES, TRAINING = "bisection", "scaling", "profiles", "training"
TRIALS, SKIPPED, TIMELINE = "trials", "skipped", "timeline"
EXPLAINED, ROOFLINE = "explained", "roofline"
TTA = "time-to-accuracy"


# --- words ----------------------------------------------------------------------------------------------------


def describe(env: dict[str, Any]) -> str:
    """One run's environment as one line."""
    return (
        f"{env['file']}: {env['timestamp']}, host {env['host']} ({env['cpu_model']}), backends {env['backends']} "
        f"({env['devices']}); jax {env['jax']}, jaxlib {env['jaxlib']}, torch {env['torch']}, python {env['python']}; "
        f"XLA_FLAGS '{env['xla_flags'] or ''}'; commit {env['commit']}; size {env['size']}; "
        f"data {registry.dataset_label(env['dataset'])}"
    )


def run_label(env: Mapping[str, Any], stamp: str) -> str:
    """A run as its folded line reads: ``2026-12-03 08:42 UTC · cpu · commit 3600a678 · jax 0.10.2 · Intel...``."""
    parts = [layout.shown_stamp(stamp), str(env.get("backends") or "")]
    if env.get("commit") not in (None, "", "None"):
        parts.append(f"commit {str(env['commit'])[:8]}")
    parts += [f"jax {env.get('jax')}", str(env.get("cpu_model") or ""), str(env.get("file") or "")]
    return " · ".join(p for p in parts if p)


def cpu_vs_accelerator_note(accelerator: str, differ: dict[str, tuple[Any, Any]] | None) -> str:
    name = accelerator.upper()
    if differ is None:
        return f"CPU vs {name}: needs results of both (`nox -s bench` and `nox -s bench-{accelerator}`)."
    if not differ:
        return f"CPU and {name} from the same run."
    return (
        f"CPU and {name} come from different runs; they differ in "
        + ", ".join(f"{key} ({cpu} vs {other})" for key, (cpu, other) in differ.items())
        + "."
    )


def accelerator_runs(runs_by_file: dict[str, pd.DataFrame]) -> tuple[tuple[Run, ...], str]:
    """A run per accelerator with results beside the CPU's: per benchmark CPU, accelerator and the ratio, and the
    accelerator's floor per precision against its fastest pipeline; and the section's note."""
    runs, notes = [], []
    newest = tables.newest_by_backend(runs_by_file)
    for accelerator in registry.ACCELERATORS:
        table, differ = tables.cpu_vs_accelerator(runs_by_file, accelerator)
        if differ is None:
            continue
        notes.append(cpu_vs_accelerator_note(accelerator, differ))
        device = ", ".join(sorted(newest[accelerator]["device_kind"].dropna().astype(str).unique()))
        floor = tables.accelerator_floor(newest[accelerator])
        floor_caption = (f"The {accelerator.upper()}'s floor per precision (the best library's 2048^3 product) "
                         "against its fastest pipeline at that precision")  # fmt: skip
        shown = (Table(f"CPU against {accelerator.upper()} ({device}), per benchmark (medians)", table),
                 *((Table(floor_caption, floor),) if not floor.empty else ()))  # fmt: skip
        figure = Figure(f"CPU vs {accelerator.upper()} epoch times", "cpu_accelerator", (table,))
        runs.append(Run(f"newest CPU and {accelerator.upper()} runs", "", shown, (figure,)))
    note = " ".join(notes) or (
        "CPU vs an accelerator: needs results of both (`nox -s bench`, and `nox -s bench-gpu` or bench-tpu)."
    )
    return tuple(runs), note


def shown_path(path: str | Path, folder: Path | None) -> str:
    """A result's path as a reader wants it: relative to the results folder it was found in."""
    try:
        return str(Path(path).relative_to(folder)) if folder is not None else str(path)
    except ValueError:
        return str(path)


LOADER_CAPTION = (
    "Loader ladder: input alone and the training epoch per loader and worker count (median and IQR), against the "
    "compute floor and the scan epoch of the same run; fastest = the smallest median, ~fastest = its IQR overlaps "
    "the fastest's"
)
GEMM_CAPTION = (
    "The floor's products in each library: 2048³ and the MLP's layers at batch 128 (m×k×n), float32 and bf16 inputs "
    "with float32 accumulation (median a product, and its rate; fastest = the best library of its shape and "
    f"precision; bf16 speed-up = the rate over the same library's f32 rate; {tables.GEMM_UNAVAILABLE})"
)
LADDER_CAPTION = (
    "Epoch ladder: each pipeline's epoch against the compute floor (median and IQR), as times XLA's floor and the "
    "best library's floor of the same run (library and rate on the floors' rows)"
)
SCALING_CAPTION = (
    "Data-parallel scaling of the sharded pipeline: N devices in all over P processes (median; speed-up and "
    "efficiency against N = 1, P = 1 of the same run; the all-reduce's share of one traced epoch's operations)"
)
SCALING_READING = (
    "On the CPU the N devices are simulated (--xla_force_host_platform_device_count) and share the same cores: "
    "this measures the overhead of the sharded program and its all-reduce, not a speed-up; on N GPUs it is one. "
    "With P > 1 the all-reduce crosses processes (jax.distributed, the CPU's collectives over 127.0.0.1 on one host)."
)
FOLDED = "Earlier runs are folded below the newest, with their tables (the plots are the newest run's)."


def subject(title: str, anchor: str, note: str, runs: Sequence[Run], per_backend: bool = False) -> ReportSection:
    """A section over runs: the newest shown in full (with ``per_backend``, the newest of each backend), the rest
    folded without plots, newest first."""
    ordered = sorted(runs, key=lambda r: r.stamp, reverse=True)
    shown: list[Run] = []
    seen: set[str] = set()
    for run in ordered:
        group = run.backends if per_backend else ""
        if group not in seen:
            seen.add(group)
            shown.append(run)
    earlier = tuple(replace(r, plots=()) for r in ordered if r not in shown)
    return ReportSection(title, f"{note} {FOLDED}" if earlier else note, tuple(shown), earlier, anchor)


# --- one run of each kind ---------------------------------------------------------------------------------------


def run_stamp(rows: pd.DataFrame) -> str:
    """One file's rows' time: the one in its name, else its run's timestamp."""
    return layout.stamp_in(str(rows["file"].iloc[0])) or layout.stamp(str(rows["timestamp"].iloc[0]))


def _env_run(rows: pd.DataFrame, found: Sequence[Table], plots: Sequence[Figure], folder: Path | None,
             note: str = "") -> Run:  # fmt: skip
    env, stamp = tables.environment(rows), run_stamp(rows)
    where = describe({**env, "file": shown_path(str(rows["file"].iloc[0]), folder)})
    return Run(run_label(env, stamp), f"{where}. {note}".strip(), tuple(found), tuple(plots), stamp, env["backends"])


def benchmark_run(rows: pd.DataFrame, folder: Path | None = None, accuracy: Mapping[str, float] | None = None
                  ) -> Run | None:  # fmt: skip
    """One benchmark file's jit, vmap, floor and epoch-ladder tables and plots (None: it has none)."""
    found: list[Table] = []
    plots: list[Figure] = []
    update = tables.jit_vs_eager(rows)
    if not update.empty:
        found.append(Table("Update step: jit against eager (median and IQR; speed-up = eager / jit)", update))
        plots += [Figure(f"Update step time, jit vs eager ({b})", "update", (p,)) for b, p in update.groupby("backend")]
    predict = tables.vmap_vs_loop(rows)
    if not predict.empty:
        found.append(
            Table(
                "Prediction: vmap and jit(vmap) against a Python loop (median and IQR; speed-up = loop / vmap)", predict
            )
        )
        by_backend = predict.groupby("backend")
        plots += [Figure(f"Prediction time vs batch size ({b})", "predict", (p,)) for b, p in by_backend]
    matmul = tables.matmul_rate(rows)
    if not matmul.empty:
        caption = (
            "The floor's matmul: 2048³ of float32 arrays (median of one product's time; its precision where not "
            "JAX's default)"
        )
        found.append(Table(caption, matmul))
    gemms = tables.gemm_rates(rows)
    if not gemms.empty:
        found.append(Table(GEMM_CAPTION, gemms))
    for caption, extra in (
        ("Memory bandwidth: STREAM kernels in XLA (median of a call)", tables.bandwidth_table(rows)),
        ("The bf16 step's two forms: the scan epoch (median)", tables.bf16_step_table(rows)),
    ):
        if not extra.empty:
            found.append(Table(caption, extra))
    ladder = tables.pipeline_ladder(rows)
    if not ladder.empty:
        found.append(Table(LADDER_CAPTION, ladder))
        plots += [Figure(f"Pipeline ladder with the floor ({b})", "ladder", (p,)) for b, p in ladder.groupby("backend")]
    peaks = tables.memory_table(rows)
    if not peaks.empty:
        found.append(Table("Peak memory of each benchmark (host RSS, its peak reset before the benchmark; the device's "
                           "peak where the backend keeps one), largest first", peaks))  # fmt: skip
    goals = tables.goals(rows, accuracy)  # the accuracy the overview's goals answer reads too
    if goals:
        found.append(Table(GOALS_CAPTION, goals_frame(goals)))
    return _env_run(rows, found, plots, folder) if found else None


GOALS_CAPTION = "Performance goals (issues 24 and 25), read from this run's epochs and GEMMs"


def goals_frame(goals: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """The goals as a table of words: backend, goal, met, the numbers."""
    state = {True: "met", False: "MISSED", None: "not measured"}
    return pd.DataFrame([(g["backend"], g["goal"], state[g["met"]], g["text"]) for g in goals],
                        columns=["backend", "goal", "state", "numbers"])  # fmt: skip


def tta_section(results: Results, folder: Path | None = None) -> ReportSection | None:
    """Every `jaxmlp tta` file: per pipeline and precision, the time to the target accuracy (median, min, max),
    how many runs reached it, and its parts; the newest file in full, the others folded."""
    table = tables.tta_table(results.tta)
    if table.empty:
        return None
    runs = []
    for file, rows in table.groupby("file", sort=False):
        stamp = layout.stamp_in(str(file))
        note = f"{shown_path(str(file), folder)}: " + "; ".join(tables.tta_line(r) for r in rows.itertuples()) + "."
        runs.append(Run(layout.shown_stamp(stamp), note, (Table("Time to accuracy", rows.drop(columns="file")),),
                        (), stamp))  # fmt: skip
    runs.sort(key=lambda r: r.stamp, reverse=True)
    note = ("MLPerf style: wall time from the start of a run (data preparation and compilation included, each also "
            "shown apart) until the test accuracy first reaches the target; median, min and max over the runs that "
            "reached it (seeds 0..N-1).")  # fmt: skip
    return ReportSection("Time to accuracy", note, tuple(runs[:1]), tuple(runs[1:]), TTA)


def loader_run(rows: pd.DataFrame, folder: Path | None = None) -> Run | None:
    """One benchmark file's loader ladder and fastest worker counts (None: it has no loader benchmarks)."""
    loader = tables.loader_ladder(rows)
    if loader.empty:
        return None
    plots = [Figure(f"Loader ladder ({b})", "loader_ladder", (p,)) for b, p in loader.groupby("backend", dropna=False)]
    best = tables.best_workers(rows)
    note = "Fastest worker count for input alone: " + ", ".join(f"{p} {w}" for p, w in best.items()) if best else ""
    return _env_run(rows, [Table(LOADER_CAPTION, loader)], plots, folder, f"{note}." if note else "")


def scaling_run(rows: pd.DataFrame, folder: Path | None = None) -> Run:
    """One `jaxmlp scaling` file: its table, a plot per backend, and how to read them."""
    table = tables.scaling_table(rows)
    plots = [Figure(f"Data-parallel scaling ({b})", "scaling", (p,)) for b, p in table.groupby("backend")
             if "speedup" in p]  # fmt: skip
    return _env_run(rows, [Table(SCALING_CAPTION, table)], plots, folder)


def sweep_runs(results: Results, folder: Path | None = None) -> list[Run]:
    """One run per version sweep: medians per release, each release against the previous one, flags' effects."""
    runs = []
    probes = [path.parent for path, _ in results.bisections]
    cells = {str(path.parent): doc for path, doc in results.cells}
    for where, rows in sweep_tables.sweeps(results.runs, probes).items():
        if sweep_tables.is_timeline(where):  # its own section
            continue
        table, steps = sweep_tables.sweep_table(rows), sweep_tables.sweep_steps(rows, results.samples)
        effects = sweep_tables.flag_effects(rows, results.samples)
        s = sweep_tables.sweep_sampling(rows)
        builtin = s["dataset"] is not None and pd.notna(s["dataset"])
        known = (("{:.0f} epochs", s["epochs"]), ("of {:.0f} images", s["samples"])) if builtin else ()
        each = " ".join(text.format(value) for text, value in known if pd.notna(value))
        calls = ", ".join(f"{w} {n} calls" for w, n in s["calls"].items() if w not in registry.SWEEP_PIPELINES)
        each = "; ".join(part for part in (each, calls) if part)
        data = f"data {registry.dataset_label(s['dataset'])}; " if builtin else ""
        note = (f"{shown_path(where, folder)}: host {s['host']} ({s['cpu_model']}), python {s['python']}, "
                f"{data}each sample is one process ({s['processes']} a cell, "
                f"in rotating order{'; ' + each if each else ''}; {s['cpu_affinity']} CPU(s) each); flagged: "
                f"one-sided Mann-Whitney p < {ALPHA} and ratio of medians > {1 + THRESHOLD:g}")  # fmt: skip
        seconds = {c: "s" for c in table.columns if c not in ("release", "xla_flags", "processes", "results_differ")}
        found = [Table("Median per release (sweep_steady is the steady state: the median of the calls after the "
                       "first; one call of a built-in epoch is one epoch)", table, seconds)]  # fmt: skip
        if len(steps):
            found.append(Table("Each release against the previous one", steps))
        if len(effects):
            found.append(Table("Each release with XLA flags against the same release without", effects))
        if where in cells and len(sweep_tables.flags_table(cells[where])):
            found.append(Table("XLA flags per release: does each release accept each --xla-flags value?",
                               sweep_tables.flags_table(cells[where])))  # fmt: skip
        if where in cells and len(sweep_tables.cells_table(cells[where])):
            found.append(Table("Cells not measured, or warned about", sweep_tables.cells_table(cells[where])))
        stamp = layout.stamp_in(where)
        releases = sorted(table["release"].unique(), key=registry.version_key)
        label = f"{layout.shown_stamp(stamp)} · releases {', '.join(releases)} · {shown_path(where, folder)}"
        if where in cells and not cells[where].complete:  # stopped before its last round: say so first
            label = f"INCOMPLETE · {label}"
            note = (
                f"INCOMPLETE: this sweep was stopped before its last round; its samples so far are shown "
                f"(`jaxmlp sweep resume {shown_path(where, folder)}` measures the rest). {note}"
            )
        plot = Figure("Steady state by release, flagged steps marked", "sweep", (rows, steps))
        runs.append(Run(label, note, tuple(found), (plot,), stamp))
    return runs


def timeline_runs(results: Results, folder: Path | None = None) -> list[Run]:
    """One run per release timeline (`jaxmlp sweep timeline`): per workload, a plot of its releases (median and
    interquartile band, changes marked) and its verdict table; the detector's newest validation beside it."""
    runs = []
    cells = {str(path.parent): doc for path, doc in results.cells}
    for where, rows in sweep_tables.sweeps(results.runs).items():
        if not sweep_tables.is_timeline(where):
            continue
        columns = sweep_tables.timeline_columns(rows, results.samples)
        s = sweep_tables.sweep_sampling(rows)
        releases = sorted({r for c in columns for r in c.releases}, key=registry.version_key)
        counts = sorted({len(x) for c in columns for x in c.samples})
        note = (f"{shown_path(where, folder)}: {len(releases)} releases, {', '.join(releases)}; host {s['host']} "
                f"({s['cpu_model']}), data {registry.dataset_label(s['dataset'])}, {s['epochs']} epochs of "
                f"{s['samples']} images a process; each sample is one fresh process ({counts[0] if counts else 0} "
                f"to {counts[-1] if counts else 0} a release, in rotating order). {CHANGE_RULE}.")  # fmt: skip
        found, plots = [], []
        for column in columns:
            name = column.workload + (f", XLA_FLAGS={column.xla_flags}" if column.xla_flags else "")
            said = "; ".join(c.line() for c in column.changes) or "no change"
            plots.append(Figure(f"{name}: steady state by release (median and IQR; {said})", "timeline", (column,)))
            table = change_rows(column.changes) if column.changes else timeline_rows(column)
            found.append(Table(f"{name}: " + ("changes" if column.changes else "no change; the releases"), table))
        if where in cells and len(sweep_tables.cells_table(cells[where])):
            found.append(Table("Cells not measured, or warned about", sweep_tables.cells_table(cells[where])))
        stamp = layout.stamp_in(where)
        span = f"{releases[0]} to {releases[-1]}" if releases else "no release"
        label = f"{layout.shown_stamp(stamp)} · {span}"
        if where in cells and not cells[where].complete:
            label, note = f"INCOMPLETE · {label}", f"INCOMPLETE: stopped before its last round. {note}"
        runs.append(Run(f"{label} · {shown_path(where, folder)}", note, tuple(found), tuple(plots), stamp))
    if runs and results.validations:
        path, doc = max(results.validations, key=lambda v: layout.stamp_in(v[0]))
        g = doc.settings
        note = (f"{shown_path(path, folder)}: {g.get('histories')} synthetic histories a case, {g.get('releases')} "
                f"releases of {g.get('samples')} samples, noise from {g.get('noise_samples')} real fresh-process "
                f"samples; found: within one release of the truth (a transient labelled a transient); chosen: "
                f"{doc.chosen}")  # fmt: skip
        at = max(range(len(runs)), key=lambda k: runs[k].stamp)
        newest = runs[at]
        runs[at] = replace(newest, tables=(*newest.tables, Table(f"The detector's validation ({note})",
                                                                 validation_table(doc))))  # fmt: skip
    return runs


def bisection_run(path: Path, doc: BisectDocument, folder: Path | None = None) -> Run:
    """One `jaxmlp sweep bisect`: its answer line, its probes, a plot of the probed releases."""
    s = doc.settings
    note = (f"{shown_path(path, folder)}: `jaxmlp sweep bisect {s.get('good')} {s.get('bad')}` on the steady "
            f"state of {s.get('workload')}, {s.get('processes')} processes a release a probe"
            f"{', XLA_FLAGS=' + str(s['xla_flags']) if s.get('xla_flags') else ''}; "
            f"{len(doc.bisection.measured)} of {len(doc.bisection.candidates)} releases measured in "
            f"{doc.seconds / 60:.1f} min. **{doc.line}**")  # fmt: skip
    medians = sweep_tables.bisection_medians(doc)
    stamp = layout.stamp_in(path)
    label = f"{layout.shown_stamp(stamp)} · {s.get('good')} → {s.get('bad')} · {doc.line}"
    return Run(label, note, (Table("Probes", sweep_tables.bisection_table(doc), {"from_median_s": "s"}),),
               (Figure("Bisection probes", "bisection", (medians, doc)),), stamp)  # fmt: skip


def explain_run(path: Path, doc: ExplainDocument, folder: Path | None = None) -> Run:
    """One `jaxmlp sweep explain A B`: its answer, what changed in the program or each operation's time."""
    stamp = layout.stamp_in(path)
    note = f"{shown_path(path.parent, folder)}: {answer_line(doc)}" + "".join(f"; {n}" for n in doc.notes)
    found = []
    if doc.operations:
        found.append(Table("Operations and fusion kinds added or removed", operations_table(doc)))
    if doc.op_times:
        found.append(Table("Operations by time per traced call, the biggest change first", op_time_table(doc)))
    if doc.changes:
        found.append(Table("The program: XLA's cost and memory analysis, compile split", changes_table(doc)))
    label = f"{layout.shown_stamp(stamp)} · {doc.workload}, {doc.a} → {doc.b}"
    return Run(label, note, tuple(found), (), stamp)


def roofline_run(path: Path, doc: RooflineDocument, folder: Path | None = None) -> Run:
    """One `jaxmlp roofline`: the ceilings, each workload's point, the plot."""
    c = doc.ceilings
    rows = [{"workload": name, "intensity": p.get("intensity"), "binds": p.get("binds", p.get("why")),
             "attainable_s": p.get("attainable_seconds"), "measured_s": p.get("measured_seconds"),
             "x_attainable": p.get("x_attainable"), "note": p.get("note", "")}
            for name, p in doc.points.items()]  # fmt: skip
    stamp = layout.stamp_in(path)
    note = (f"{shown_path(path, folder)}: FLOP rate {units.flop_rate(c.get('flops_per_second'))} (XLA matmul "
            f"{c.get('best_shape')}), bandwidth {units.size(c.get('bytes_per_second'))}/s (XLA STREAM "
            f"{c.get('best_kernel')}; numpy triad {units.size((c.get('numpy_bytes_per_second') or {}).get('triad'))}"
            f"/s), kept in {c and doc.ceilings_file}; attainable = max(flops / FLOP rate, bytes / bandwidth), from "
            "XLA's cost analysis (a loop's body counted once a batch for the built-in scan; once for a user "
            "workload's loop)")  # fmt: skip
    m = doc.metadata
    machine = f"host {m.get('host')} ({m.get('cpu_model')}, {m.get('cpu_affinity')} CPUs), jax {m.get('jax')}"
    return Run(f"{layout.shown_stamp(stamp)} · {machine}", note,
               (Table("Each workload on the roofline", pd.DataFrame(rows)),),
               (Figure("Roofline", "roofline", (doc,)),), stamp)  # fmt: skip


def trials_run(path: Path, doc: TrialsDocument, folder: Path | None = None) -> Run:
    """The regression detector's own check: injected slowdowns caught, A/A comparisons flagged."""
    s, table = doc.settings, sweep_tables.trials_table(doc)
    note = (
        f"{shown_path(path, folder)}: injected {s.inject_slowdown:.0%} slowdown flagged in {doc.injected_flagged}/"
        f"{s.trials} trials (median ratio {table['injected_ratio'].median():.3f}); A/A flagged in "
        f"{doc.aa_flagged}/{s.trials} (median ratio {table['aa_ratio'].median():.3f}); {s.processes_per_side} "
        f"processes a side, workload {s.workload}, jax {doc.metadata.get('jax')}, host {doc.metadata.get('host')}"
    )
    stamp = layout.stamp_in(path)
    return Run(f"{layout.shown_stamp(stamp)} · {shown_path(path, folder)}", note, (Table("Trials", table),), (), stamp)


def trace_run(trace: CaptureSummary, folder: Path | None = None) -> Run:
    """One profiler capture: where its steps' time went, and its top operations."""
    steps, where = trace.steps, shown_path(trace.file, folder)
    found = [Table("Top operations by total time", trace.top_ops)]
    if len(steps):
        note = (f"{where}: {len(steps)} marked steps, median {duration((trace.median_step_ms or 0) / 1e3)} "
                f"(load {duration((trace.median_load_ms or 0) / 1e3)}, compute "
                f"{duration((trace.median_compute_ms or 0) / 1e3)}). Open with `jaxmlp tensorboard --logdir` on "
                "its folder.")  # fmt: skip
        found.insert(0, Table("Step time breakdown", tables.step_stats(steps)))
    else:
        note = f"{where}: no step markers."
    stamp = layout.stamp_in(trace.run) or layout.stamp_in(trace.file)
    return Run(f"{layout.shown_stamp(stamp)} · {trace.run}", note, tuple(found), (), stamp)


# --- the release timeline and its detector ------------------------------------------------------------------


TIMELINE_HEADERS = ("release", "median", "IQR", "processes", "change")
CHANGE_HEADERS = ("kind", "release", "before", "ratio", "95% interval", "p", "direction")


def change_rows(changes: Sequence[Change]) -> pd.DataFrame:
    """A column's changes as a verdict table: each one's kind, release, ratio, 95% interval and p."""
    rows = [(c.kind, c.at, c.before, ratio(c.comparison.ratio), interval(c.comparison.ci_low, c.comparison.ci_high),
             p_value(c.comparison.p_one_sided()), c.direction) for c in changes]  # fmt: skip
    return pd.DataFrame(rows, columns=list(CHANGE_HEADERS))


def timeline_rows(column: sweep_tables.TimelineColumn) -> pd.DataFrame:
    """A timeline column's releases: median and interquartile range of its samples, and the change marked at each."""
    marked = changepoints.at_each(column.changes)
    rows = []
    for release, values in zip(column.releases, column.samples):
        ordered = sorted(values)
        change = marked.get(release)
        said = "" if change is None else f"{change.kind}: {change.direction} {ratio(change.comparison.ratio)}"
        rows.append((release, duration(statistics.median(ordered)),
                     f"{duration(quantile(ordered, 0.25))} to {duration(quantile(ordered, 0.75))}",
                     str(len(ordered)), said))  # fmt: skip
    return pd.DataFrame(rows, columns=list(TIMELINE_HEADERS))


CHANGE_RULE = (f"changes: ruptures' PELT over the releases' log medians, each candidate confirmed between every sample "
               f"of the segments either side (ratio of medians beyond {percent(CHANGE_THRESHOLD)}, one-sided "
               f"Mann-Whitney p < {CHANGE_ALPHA:g}); a release unlike both neighbours while they agree is a transient, "
               "consecutive small steps one way a drift")  # fmt: skip


def validation_table(doc: ValidationDocument) -> pd.DataFrame:
    """The validation as a table: a row per case, a recall and a false-alarm column per detector (a flat history's
    "recall" is its false alarms: any change in it is one)."""
    detectors = list(dict.fromkeys(r.detector for r in doc.rows))
    cases = list(dict.fromkeys(r.case for r in doc.rows))
    by = {(r.detector, r.case): r for r in doc.rows}
    rows = []
    for case in cases:
        goal = GOALS.get(case)
        row = [case, f">= {percent(goal)} found" if goal else (f"<= {percent(FLAT_GOAL)} flagged" if case == "flat"
                                                               else "")]  # fmt: skip
        for name in detectors:
            r = by.get((name, case))
            row += [MISSING, MISSING] if r is None else [MISSING if case == "flat" else percent(r.recall),
                                                         percent(r.false_alarms)]  # fmt: skip
        rows.append(row)
    columns = ["case", "goal"] + [f"{d} {what}" for d in detectors for what in ("found", "false alarms")]
    return pd.DataFrame(rows, columns=columns)


# --- subjects -------------------------------------------------------------------------------------------------


def history_section(results: Results) -> ReportSection | None:
    """Every benchmark seen in more than one comparable run, time-ordered, and its changes by the change-point
    detector the release timeline uses (`jaxmlp.results.history.changes`)."""
    points = history.points(results.runs)
    if points.empty:
        return None
    changes = history.changes(points, results.samples)
    flagged = history.flagged(changes)
    n_runs = points["file"].nunique()
    note = (f"{points['benchmark'].nunique()} benchmarks seen in more than one of {n_runs} comparable runs (same "
            "machine and settings); changes found by the detector the release timeline uses, over every run's raw "
            f"samples: {CHANGE_RULE}; {len(flagged)} change(s) found.")  # fmt: skip
    shown = flagged.drop(columns=["from_file", "to_file"]) if len(flagged) else flagged
    if points["setting"].nunique() == 1:
        note += f" Machine and settings: {points['setting'].iloc[0]}."
        shown = shown.drop(columns="setting")
    found = (Table("Changes across runs (biggest first)", shown),) if len(flagged) else ()
    plots = tuple(Figure(f"History of the {test} benchmarks (median and IQR per run; changes marked)",
                         "history", (part, changes[changes["benchmark"].isin(part["benchmark"])]))
                  for test, part in points.groupby("test", sort=True))  # fmt: skip
    run = Run("all comparable runs", note, found, plots, "")
    return ReportSection("History across runs", note, (replace(run, note=""),), (), HISTORY)


def build_sections(results: Results, traces: Sequence[CaptureSummary] = (), folder: Path | None = None
                   ) -> list[ReportSection]:  # fmt: skip
    """The report's content, a section per subject. ``traces`` are `jaxmlp.results.traces.capture_summary`
    results; paths are shown relative to ``folder``."""
    runs_by_file = tables.benchmark_runs(without_sweeps(results.runs))
    accuracy = tables.tutorial_accuracy(results.runs)
    bench = [r for rows in runs_by_file.values() if not tables.is_scaling(rows)
             if (r := benchmark_run(rows, folder, accuracy))]  # fmt: skip
    loaders = [r for rows in runs_by_file.values() if not tables.is_scaling(rows) if (r := loader_run(rows, folder))]
    scaling = [scaling_run(rows, folder) for rows in runs_by_file.values() if tables.is_scaling(rows)]
    sections = []
    if bench:
        sections.append(subject("Benchmarks: jit, vmap, the floor, the epoch ladder", BENCHMARKS,
                                "The newest run of each backend in full.", bench, True))  # fmt: skip
    if loaders:
        sections.append(subject("Loaders and workers", LOADERS, "The newest run of each backend in full.", loaders,
                                True))  # fmt: skip
    side_by_side, note = accelerator_runs(runs_by_file)
    sections.append(ReportSection("CPU vs accelerator", note, side_by_side, (), CPU_ACCELERATOR))
    if (past := history_section(results)) is not None:
        sections.append(past)
    if sweeps := sweep_runs(results, folder):
        sections.append(subject("Version matrix: jax/jaxlib releases", MATRIX, "Each sample is one fresh process.",
                                sweeps))  # fmt: skip
    if timelines := timeline_runs(results, folder):
        sections.append(subject("Release timeline", TIMELINE, "Every release from A to B (`jaxmlp sweep timeline "
                                "A B`): change points, transients and drifts.", timelines))  # fmt: skip
    if results.bisections:
        runs = [bisection_run(path, doc, folder) for path, doc in results.bisections]
        sections.append(subject("Bisection across releases", BISECTION, "Which release changed the workload.", runs))
    if results.explanations:
        runs = [explain_run(path, doc, folder) for path, doc in results.explanations]
        sections.append(subject("Why a release changed: the compiled program, or below it", EXPLAINED,
                                "`jaxmlp sweep explain A B`: same optimized HLO or not, then the evidence.",
                                runs))  # fmt: skip
    if results.rooflines:
        runs = [roofline_run(path, doc, folder) for path, doc in results.rooflines]
        sections.append(subject("Roofline", ROOFLINE, "Each workload against this machine's two ceilings.", runs))
    if scaling:
        sections.append(subject("Scaling", SCALING, SCALING_READING, scaling))
    if traces:
        sections.append(subject("Profiles", PROFILES, "Profiler captures (`jaxmlp profile`).",
                                [trace_run(t, folder) for t in traces]))  # fmt: skip
    training = tables.training_table(results.runs)
    if not training.empty:
        run = Run("every training run", "", (Table("Training: one row per `jaxmlp train --json` file", training),))
        sections.append(ReportSection("Training runs", "One row per `jaxmlp train --json` file.", (run,), (),
                                      TRAINING))  # fmt: skip
    if (tta := tta_section(results, folder)) is not None:
        sections.append(tta)
    if results.trials:
        runs = [trials_run(path, doc, folder) for path, doc in results.trials]
        sections.append(subject("Regression detector trials", TRIALS, "The detector checked on itself.", runs))
    if results.skipped:
        skipped = pd.DataFrame([(shown_path(s.path, folder), s.why) for s in results.skipped],
                               columns=["file", "why it was skipped"])  # fmt: skip
        run = Run("files", "", (Table("Not results", skipped),))
        sections.append(ReportSection("Skipped files", "", (run,), (), SKIPPED))
    return sections
