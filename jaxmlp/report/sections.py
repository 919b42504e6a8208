"""The report's content, computed before anything is rendered: each section as its title, a note, tables
(DataFrames) and figures (what to draw, with its data). Pure: no matplotlib, no HTML; tests read sections as data.

The tables come from `jaxmlp.results.tables` and `jaxmlp.results.sweep_tables`, their statistics from
`jaxmlp.stats`; `jaxmlp.report.plots` draws the figures, `html` and `markdown` render.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from jaxmlp import registry
from jaxmlp.registry import ALPHA, THRESHOLD
from jaxmlp.results import sweep_tables, tables
from jaxmlp.results.frames import Results, without_sweeps
from jaxmlp.results.schema.trials import TrialsDocument
from jaxmlp.results.traces import CaptureSummary


class Table(NamedTuple):
    caption: str
    frame: pd.DataFrame


class Figure(NamedTuple):
    """A plot to draw: its alt text, its kind (`jaxmlp.report.plots.PLOTTERS`) and the data it is drawn from."""

    alt: str
    kind: str
    data: tuple[Any, ...]


@dataclass(frozen=True)
class ReportSection:
    """One section of a report: a title, a line saying where its numbers come from, its tables and plots."""

    title: str
    note: str
    tables: tuple[Table, ...] = ()
    plots: tuple[Figure, ...] = ()


# --- words ----------------------------------------------------------------------------------------------------


def describe(env: dict[str, Any]) -> str:
    """One run's environment as one line."""
    return (
        f"{env['file']}: {env['timestamp']}, host {env['host']} ({env['cpu_model']}), backends {env['backends']} "
        f"({env['devices']}); jax {env['jax']}, jaxlib {env['jaxlib']}, torch {env['torch']}, python {env['python']}; "
        f"XLA_FLAGS '{env['xla_flags'] or ''}'; commit {env['commit']}; size {env['size']}; "
        f"data {registry.dataset_label(env['dataset'])}"
    )


def cpu_vs_gpu_note(differ: dict[str, tuple[Any, Any]] | None) -> str:
    if differ is None:
        return "CPU vs GPU: needs results of both (`nox -s bench` and `nox -s bench-gpu`)."
    if not differ:
        return "CPU and GPU from the same run."
    return (
        "CPU and GPU come from different runs; they differ in "
        + ", ".join(f"{key} ({cpu} vs {gpu})" for key, (cpu, gpu) in differ.items())
        + "."
    )


def shown_path(path: str | Path, folder: Path | None) -> str:
    """A result's path as a reader wants it: relative to the results folder it was found in."""
    try:
        return str(Path(path).relative_to(folder)) if folder is not None else str(path)
    except ValueError:
        return str(path)


LOADER_CAPTION = (
    "Loader ladder: input alone (loader_*) and the training epoch (epoch_*), median and IQR in s, times the compute "
    "floor and times the scan epoch of the same run; best = fastest, ~best = its IQR overlaps the fastest's"
)


SCALING_CAPTION = (
    "Data-parallel scaling of the sharded pipeline (median s; speedup and efficiency against N = 1 of the same run)"
)
SCALING_READING = (
    "On the CPU the N devices are simulated (--xla_force_host_platform_device_count) and share the same cores: "
    "this measures the overhead of the sharded program and its all-reduce, not a speed-up; on N GPUs it is one."
)


# --- sections -------------------------------------------------------------------------------------------------


def benchmark_section(rows: pd.DataFrame) -> ReportSection:
    """One benchmark file: its tables and plots."""
    found: list[Table] = []
    plots: list[Figure] = []
    update = tables.jit_vs_eager(rows)
    if not update.empty:
        found.append(Table("Update step, jit vs eager (median ms; speedup = eager / jit)", update))
        plots += [Figure(f"Update step time, jit vs eager ({b})", "update", (p,)) for b, p in update.groupby("backend")]
    predict = tables.vmap_vs_loop(rows)
    if not predict.empty:
        found.append(Table("Prediction, vmap vs Python loop vs jit(vmap) (median ms; speedups over the loop)", predict))
        by_backend = predict.groupby("backend")
        plots += [Figure(f"Prediction time vs batch size ({b})", "predict", (p,)) for b, p in by_backend]
    loader = tables.loader_ladder(rows)
    if not loader.empty:
        found.append(Table(LOADER_CAPTION, loader))
        plots += [Figure(f"Loader ladder ({b})", "loader_ladder", (p,))
                  for b, p in loader.groupby("backend", dropna=False)]  # fmt: skip
    matmul = tables.matmul_rate(rows)
    if not matmul.empty:
        caption = "The floor's matmul: 2048^3 of float32 arrays (median; precision: JAX's, where a run set it)"
        found.append(Table(caption, matmul))
    ladder = tables.pipeline_ladder(rows)
    if not ladder.empty:
        found.append(Table("Epoch ladder (median s; x_floor = times the compute floor)", ladder))
        plots += [Figure(f"Pipeline ladder with the floor ({b})", "ladder", (p,)) for b, p in ladder.groupby("backend")]
    return ReportSection("Benchmarks", describe(tables.environment(rows)), tuple(found), tuple(plots))


def scaling_section(rows: pd.DataFrame) -> ReportSection:
    """One `jaxmlp scaling` file: its table, a plot per backend, and how to read them."""
    table = tables.scaling_table(rows)
    plots = tuple(Figure(f"Data-parallel scaling ({b})", "scaling", (p,)) for b, p in table.groupby("backend")
                  if "speedup" in p)  # fmt: skip
    note = f"{describe(tables.environment(rows))}. {SCALING_READING}"
    return ReportSection("Scaling", note, (Table(SCALING_CAPTION, table),), plots)


def cpu_vs_gpu_section(runs_by_file: dict[str, pd.DataFrame]) -> ReportSection:
    table, differ = tables.cpu_vs_gpu(runs_by_file)
    if table.empty:
        return ReportSection("CPU vs GPU", cpu_vs_gpu_note(differ))
    return ReportSection("CPU vs GPU", cpu_vs_gpu_note(differ), (Table("Epoch ladder by backend", table),),
                         (Figure("CPU vs GPU epoch times", "cpu_gpu", (table,)),))  # fmt: skip


def training_section(runs: pd.DataFrame) -> list[ReportSection]:
    training = tables.training_table(runs)
    if training.empty:
        return []
    return [ReportSection("Training runs", "One row per `jaxmlp train --json` file.",
                          (Table("Training (epoch_s_median: epochs 1 and later)", training),))]  # fmt: skip


def sweep_sections(results: Results, folder: Path | None = None) -> list[ReportSection]:
    sections = []
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
        found = [Table("Median per release (s; sweep_steady is the steady state: median of the calls after the "
                       "first; one call of a built-in epoch is one epoch)", table)]  # fmt: skip
        if len(steps):
            found.append(Table("Each release against the previous one", steps))
        if len(effects):
            found.append(Table("Each release with XLA flags against the same release without", effects))
        if where in cells and len(sweep_tables.cells_table(cells[where])):
            found.append(Table("Cells not measured, or warned about", sweep_tables.cells_table(cells[where])))
        plot = Figure("Steady state by release, flagged steps marked", "sweep", (rows, steps))
        title = "jax/jaxlib versions"
        if where in cells and not cells[where].complete:  # stopped before its last round: say so first
            title += " (INCOMPLETE)"
            note = (
                f"INCOMPLETE: this sweep was stopped before its last round; its samples so far are shown "
                f"(`jaxmlp sweep resume {shown_path(where, folder)}` measures the rest). {note}"
            )
        sections.append(ReportSection(title, note, tuple(found), (plot,)))
    return sections


def bisection_sections(results: Results, folder: Path | None = None) -> list[ReportSection]:
    """One section per `jaxmlp sweep bisect`: its answer line, its probes, a plot of the probed releases."""
    sections = []
    for path, doc in results.bisections:
        s = doc.settings
        note = (f"{shown_path(path, folder)}: `jaxmlp sweep bisect {s.get('good')} {s.get('bad')}` on the steady "
                f"state of {s.get('workload')}, {s.get('processes')} processes a release a probe"
                f"{', XLA_FLAGS=' + str(s['xla_flags']) if s.get('xla_flags') else ''}; "
                f"{len(doc.bisection.measured)} of {len(doc.bisection.candidates)} releases measured in "
                f"{doc.seconds / 60:.1f} min. **{doc.line}**")  # fmt: skip
        medians = sweep_tables.bisection_medians(doc)
        sections.append(ReportSection("Bisection across releases", note,
                                      (Table("Probes", sweep_tables.bisection_table(doc)),),
                                      (Figure("Bisection probes", "bisection", (medians, doc)),)))  # fmt: skip
    return sections


def detector_sections(trials: Sequence[tuple[Path, TrialsDocument]], folder: Path | None = None) -> list[ReportSection]:
    """The regression detector's own check: injected slowdowns caught, A/A comparisons flagged."""
    sections = []
    for path, doc in trials:
        s, table = doc.settings, sweep_tables.trials_table(doc)
        note = (
            f"{shown_path(path, folder)}: injected {s.inject_slowdown:.0%} slowdown flagged in {doc.injected_flagged}/"
            f"{s.trials} trials (median ratio {table['injected_ratio'].median():.3f}); A/A flagged in "
            f"{doc.aa_flagged}/{s.trials} (median ratio {table['aa_ratio'].median():.3f}); {s.processes_per_side} "
            f"processes a side, workload {s.workload}, jax {doc.metadata.get('jax')}, host {doc.metadata.get('host')}"
        )
        sections.append(ReportSection("Regression detector trials", note, (Table("Trials", table),)))
    return sections


def trace_sections(traces: Sequence[CaptureSummary], folder: Path | None = None) -> list[ReportSection]:
    """One section per profiler capture: where its steps' time went, and its top operations."""
    sections = []
    for trace in traces:
        steps, where = trace.steps, shown_path(trace.file, folder)
        found = [Table("Top operations by total time", trace.top_ops)]
        if len(steps):
            note = (f"{where}: {len(steps)} marked steps, median {trace.median_step_ms:.3g} ms "
                    f"(load {trace.median_load_ms:.3g} ms, compute {trace.median_compute_ms:.3g} ms). "
                    "Open with `jaxmlp tensorboard --logdir` on its folder.")  # fmt: skip
            found.insert(0, Table("Step time breakdown (ms)", tables.step_stats(steps)))
        else:
            note = f"{where}: no step markers."
        sections.append(ReportSection(f"Trace {trace.run}", note, tuple(found)))
    return sections


def build_sections(results: Results, traces: Sequence[CaptureSummary] = (), folder: Path | None = None
                   ) -> list[ReportSection]:  # fmt: skip
    """The report's content. ``traces`` are `jaxmlp.measure.traces.capture_summary` results; paths are shown relative to
    ``folder``."""
    runs_by_file = tables.benchmark_runs(without_sweeps(results.runs))
    sections = [scaling_section(rows) if tables.is_scaling(rows) else benchmark_section(rows)
                for rows in runs_by_file.values()]  # fmt: skip
    sections.append(cpu_vs_gpu_section(runs_by_file))
    sections += training_section(results.runs)
    sections += sweep_sections(results, folder)
    sections += bisection_sections(results, folder)
    sections += detector_sections(results.trials, folder)
    sections += trace_sections(traces, folder)
    if results.skipped:
        skipped = pd.DataFrame([(shown_path(s.path, folder), s.why) for s in results.skipped],
                               columns=["file", "why it was skipped"])  # fmt: skip
        sections.append(ReportSection("Skipped files", "", (Table("Not results", skipped),)))
    return sections
