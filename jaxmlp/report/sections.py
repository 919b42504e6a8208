"""The report's content, computed before anything is rendered: one section per subject (benchmarks, loaders,
CPU vs accelerator (GPU, TPU), history across runs, version matrix, bisection, scaling, profiles, training runs,
the detector's trials), each with the newest run in full and the earlier runs folded. Pure: no matplotlib, no
HTML; tests read sections as data.

The tables come from `jaxmlp.results.tables`, `sweep_tables` and `history`, their statistics from `jaxmlp.stats`;
`jaxmlp.report.answers` puts the overview's answers together from the same tables, `plots` draws the figures,
`html` and `markdown` render.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from jaxmlp import registry
from jaxmlp.registry import ALPHA, THRESHOLD
from jaxmlp.results import history, layout, sweep_tables, tables
from jaxmlp.results.frames import Results, without_sweeps
from jaxmlp.results.schema.bisect import BisectDocument
from jaxmlp.results.schema.trials import TrialsDocument
from jaxmlp.results.traces import CaptureSummary
from jaxmlp.units import duration


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
TRIALS, SKIPPED = "trials", "skipped"


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
        shown = (Table(f"CPU against {accelerator.upper()} ({device}), per benchmark (medians)", table),
                 *((Table(f"The {accelerator.upper()}'s floor per precision (2048^3 XLA product) against its fastest "
                          "pipeline", floor),) if not floor.empty else ()))  # fmt: skip
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
    "Data-parallel scaling of the sharded pipeline (median; speed-up and efficiency against N = 1 of the same run)"
)
SCALING_READING = (
    "On the CPU the N devices are simulated (--xla_force_host_platform_device_count) and share the same cores: "
    "this measures the overhead of the sharded program and its all-reduce, not a speed-up; on N GPUs it is one."
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


def benchmark_run(rows: pd.DataFrame, folder: Path | None = None) -> Run | None:
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
        caption = "The floor's matmul: 2048³ of float32 arrays (median; precision: JAX's, where a run set it)"
        found.append(Table(caption, matmul))
    gemms = tables.gemm_rates(rows)
    if not gemms.empty:
        found.append(Table(GEMM_CAPTION, gemms))
    ladder = tables.pipeline_ladder(rows)
    if not ladder.empty:
        found.append(Table(LADDER_CAPTION, ladder))
        plots += [Figure(f"Pipeline ladder with the floor ({b})", "ladder", (p,)) for b, p in ladder.groupby("backend")]
    return _env_run(rows, found, plots, folder) if found else None


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


# --- subjects -------------------------------------------------------------------------------------------------


def history_section(results: Results) -> ReportSection | None:
    """Every benchmark seen in more than one comparable run, time-ordered, and the changes between consecutive
    runs, tested like `jaxmlp compare` does."""
    points = history.points(results.runs)
    if points.empty:
        return None
    changes = history.changes(points, results.samples)
    flagged = history.flagged(changes)
    n_runs = points["file"].nunique()
    note = (f"{points['benchmark'].nunique()} benchmarks seen in more than one of {n_runs} comparable runs (same "
            "machine and settings); each run against the previous one, from both runs' raw samples: flagged when "
            f"one-sided Mann-Whitney p < {ALPHA} and the ratio of medians beyond {1 + THRESHOLD:g} (or below "
            f"{1 / (1 + THRESHOLD):.3g}); {len(flagged)} of {len(changes)} steps flagged.")  # fmt: skip
    shown = flagged.drop(columns=["from_file", "to_file"]) if len(flagged) else flagged
    if points["setting"].nunique() == 1:
        note += f" Machine and settings: {points['setting'].iloc[0]}."
        shown = shown.drop(columns="setting")
    found = (Table("Changes across runs (flagged, biggest first)", shown),) if len(flagged) else ()
    plots = tuple(Figure(f"History of the {test} benchmarks (median and IQR per run; flagged changes marked)",
                         "history", (part, changes[changes["benchmark"].isin(part["benchmark"])]))
                  for test, part in points.groupby("test", sort=True))  # fmt: skip
    run = Run("all comparable runs", note, found, plots, "")
    return ReportSection("History across runs", note, (replace(run, note=""),), (), HISTORY)


def build_sections(results: Results, traces: Sequence[CaptureSummary] = (), folder: Path | None = None
                   ) -> list[ReportSection]:  # fmt: skip
    """The report's content, a section per subject. ``traces`` are `jaxmlp.results.traces.capture_summary`
    results; paths are shown relative to ``folder``."""
    runs_by_file = tables.benchmark_runs(without_sweeps(results.runs))
    bench = [r for rows in runs_by_file.values() if not tables.is_scaling(rows) if (r := benchmark_run(rows, folder))]
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
    if results.bisections:
        runs = [bisection_run(path, doc, folder) for path, doc in results.bisections]
        sections.append(subject("Bisection across releases", BISECTION, "Which release changed the workload.", runs))
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
    if results.trials:
        runs = [trials_run(path, doc, folder) for path, doc in results.trials]
        sections.append(subject("Regression detector trials", TRIALS, "The detector checked on itself.", runs))
    if results.skipped:
        skipped = pd.DataFrame([(shown_path(s.path, folder), s.why) for s in results.skipped],
                               columns=["file", "why it was skipped"])  # fmt: skip
        run = Run("files", "", (Table("Not results", skipped),))
        sections.append(ReportSection("Skipped files", "", (run,), (), SKIPPED))
    return sections
