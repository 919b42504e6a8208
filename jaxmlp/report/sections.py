"""The report's content as data: a section per subject (`SECTIONS`), its findings, tables, plots and earlier runs."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from jaxmlp.report.content import Figure, Finding, ReportSection, Run, Table, subject
from jaxmlp.report.corpus_sections import corpus_run, trials_run
from jaxmlp.report.run_sections import (
    cpu_accelerator_plots,
    earlier_runs,
    finding_run,
    history_part,
    ladder_plots,
    loader_plots,
    roofline_run,
    summarised_runs,
    trace_run,
)
from jaxmlp.report.sweep_sections import (
    bisection_run,
    explain_run,
    sweep_runs,
    timeline_runs,
)
from jaxmlp.results import history, tables
from jaxmlp.results.findings import findings
from jaxmlp.results.findings.model import ANCHOR
from jaxmlp.results.store import layout
from jaxmlp.results.store.frames import Results, without_sweeps
from jaxmlp.results.tables import CaptureSummary


class Given(NamedTuple):
    """What every section is made from: results, findings, history, profiles, the folder paths are shown from, runs."""

    results: Results
    found: tuple[Finding, ...]
    past: history.RunHistory
    traces: Sequence[CaptureSummary]
    folder: Path | None
    runs_by_file: dict[str, pd.DataFrame]
    envs: dict[str, pd.DataFrame]

    def answers(self, anchor: str) -> tuple[Finding, ...]:
        return tuple(f for f in self.found if f.anchor == anchor)


def _no_plots(finding: Finding, given: Given) -> list[Figure]:
    return []


def _no_runs(given: Given) -> Sequence[Run]:
    return ()


def of_findings(d: Definition, given: Given) -> ReportSection | None:
    """A section of its findings (none unless one is answered), each with the tables and plots of its run."""
    answers = given.answers(d.anchor)
    if not any(f.answered for f in answers):
        return None
    runs: dict[tuple[str, str], Run] = {}
    for f in answers:
        plots = d.plots(f, given)
        if f.answered and (f.tables or plots):
            run = finding_run(f, plots, given.envs)
            had = runs.get((f.machine, f.run))
            runs[(f.machine, f.run)] = (
                run if had is None else replace(had, tables=had.tables + run.tables, plots=had.plots + run.plots)
            )
    return ReportSection(d.title, d.note, tuple(runs.values()), tuple(d.earlier(given)), d.anchor, answers)


def of_files(d: Definition, given: Given) -> ReportSection | None:
    """A section of the runs of a kind of file (none without one): the one answered (else the newest) in full."""
    runs = d.runs(given)
    return subject(d.title, d.anchor, d.note, runs, given.answers(d.anchor)) if runs else None


def in_full(d: Definition, given: Given) -> ReportSection | None:
    """A section that shows each of its runs in full (none without one)."""
    runs = d.runs(given)
    return ReportSection(d.title, d.note, tuple(runs), (), d.anchor, given.answers(d.anchor)) if runs else None


def of_history(d: Definition, given: Given) -> ReportSection | None:
    """The history across runs (`run_sections.history_part`), its note said by what it found."""
    answers = given.answers(d.anchor)
    part = history_part(answers, given.past)
    return None if part is None else ReportSection(d.title, part[0], tuple(part[1]), (), d.anchor, answers)


class Definition(NamedTuple):
    """One section: its title, anchor, how to read it, how it is made (``make``), its plots and runs."""

    title: str
    anchor: str
    note: str
    make: Callable[[Definition, Given], ReportSection | None] = of_findings
    plots: Callable[[Finding, Given], list[Figure]] = _no_plots
    runs: Callable[[Given], Sequence[Run]] = _no_runs
    earlier: Callable[[Given], Sequence[Run]] = _no_runs


def _benchmark_runs_not_cited(given: Given) -> Sequence[Run]:
    found, older = given.answers(ANCHOR.benchmarks), given.results.older
    plain = earlier_runs(given.runs_by_file, found, given.folder, lambda r: not tables.is_scaling(r))
    return plain + summarised_runs(older, given.folder)


def _scaling_plots(finding: Finding, given: Given) -> list[Figure]:
    """The first answered scaling finding's speed-up plot."""
    first = next((f for f in given.found if f.anchor == ANCHOR.scaling and f.answered), None)
    if finding is not first:
        return []
    return [
        Figure(f"Data-parallel scaling ({finding.machine})", "scaling", (t.frame,))
        for t in finding.tables
        if "speedup" in t.frame
    ]


def _skipped(given: Given) -> Sequence[Run]:
    if not given.results.skipped:
        return ()
    files = [(layout.shown(s.path, given.folder), s.why) for s in given.results.skipped]
    return (Run("files", "", (Table("Not results", pd.DataFrame(files, columns=["file", "why it was skipped"])),)),)


EVIDENCE = (
    "Each machine's newest environment (its jax, jaxlib and commit), its runs merged: every figure names its run."
)
"""Where the benchmark sections' answers come from (docs/methods/which-run-answers.md)."""
SCALING_READING = (
    "On the CPU the N devices are simulated (--xla_force_host_platform_device_count) and share the same cores: "
    "this measures the overhead of the sharded program and its all-reduce, not a speed-up; on N GPUs it is one. "
    "With P > 1 the all-reduce crosses processes (jax.distributed, the CPU's collectives over 127.0.0.1 on one host)."
)
TTA_READING = (
    "MLPerf style: wall time from the start of a run (data preparation and compilation included, each also "
    "shown apart) until the test accuracy first reaches the target; median, min and max over the runs that "
    "reached it (seeds 0..N-1)."
)

SECTIONS = (
    Definition("jit and vmap", ANCHOR.benchmarks, EVIDENCE, earlier=_benchmark_runs_not_cited),
    Definition(
        "The floor and the epoch ladder",
        ANCHOR.floor,
        "The floor of each precision is the best rate the run (or the machine's newest environment that measured "
        "that precision) measured at that precision; every pipeline is set against its own precision's floor.",
        plots=lambda f, g: ladder_plots(f),
    ),
    Definition("Goals", ANCHOR.goals, f"Read from {EVIDENCE[0].lower()}{EVIDENCE[1:]}"),
    Definition("Loaders and workers", ANCHOR.loaders, EVIDENCE, plots=lambda f, g: loader_plots(f)),
    Definition(
        "CPU against an accelerator",
        ANCHOR.cpu_accelerator,
        f"The newest machine of each backend, {EVIDENCE[0].lower()}{EVIDENCE[1:]}",
        plots=lambda f, g: cpu_accelerator_plots(f),
    ),
    Definition("History across runs", ANCHOR.history, "", of_history),
    Definition(
        "Version matrix: jax/jaxlib releases",
        ANCHOR.matrix,
        "Each sample is one fresh process.",
        of_files,
        runs=lambda g: sweep_runs(g.results, g.folder, g.answers(ANCHOR.matrix)),
    ),
    Definition(
        "Release timeline",
        ANCHOR.timeline,
        "Every release from A to B (`jaxmlp sweep timeline A B`): change points, transients and drifts.",
        of_files,
        runs=lambda g: timeline_runs(g.results, g.folder, g.answers(ANCHOR.timeline)),
    ),
    Definition(
        "Bisection across releases",
        ANCHOR.bisection,
        "Which release changed the workload.",
        of_files,
        runs=lambda g: [bisection_run(p, d, g.folder) for p, d in g.results.bisections],
    ),
    Definition(
        "Tracked releases: is the newest safe to take?",
        ANCHOR.tracking,
        "`jaxmlp track`: each new release measured side by side with the pinned release (and the one tracked before "
        "it); its verdict on each workload, its explanation where it changed.",
    ),
    Definition(
        "Why a release changed: the compiled program, or below it",
        ANCHOR.explained,
        "`jaxmlp sweep explain A B`: same optimized HLO or not, then the evidence.",
        of_files,
        runs=lambda g: [explain_run(p, d, g.folder) for p, d in g.results.explanations],
    ),
    Definition(
        "Known regressions: the corpus",
        ANCHOR.known_regressions,
        "`jaxmlp sweep corpus`: each known regression run as a user would, and whether it was found, measured "
        "within its band and explained; controls left clean.",
        of_files,
        runs=lambda g: [corpus_run(p, d, g.folder) for p, d in g.results.corpora],
    ),
    Definition(
        "Roofline",
        ANCHOR.roofline,
        "Each workload against this machine's two ceilings.",
        of_files,
        runs=lambda g: [roofline_run(p, d, g.folder) for p, d in g.results.rooflines],
    ),
    Definition("Scaling", ANCHOR.scaling, SCALING_READING, plots=_scaling_plots),
    Definition(
        "Profiles",
        ANCHOR.profiles,
        "Profiler captures (`jaxmlp profile`).",
        in_full,
        runs=lambda g: [trace_run(t, g.folder) for t in g.traces],
    ),
    Definition("Training runs", ANCHOR.training, "The newest training run of each machine; every run in its table."),
    Definition("Time to accuracy", ANCHOR.tta, TTA_READING),
    Definition(
        "Regression detector trials",
        ANCHOR.trials,
        "The detector checked on itself.",
        of_files,
        runs=lambda g: [trials_run(path, doc, g.folder) for path, doc in g.results.trials],
    ),
    Definition("Skipped files", ANCHOR.skipped, "", in_full, runs=_skipped),
)
"""The report's sections, in their order: each made where it has something to show."""


def build_sections(
    results: Results,
    traces: Sequence[CaptureSummary] = (),
    folder: Path | None = None,
    found: Sequence[Finding] | None = None,
    past: history.RunHistory | None = None,
) -> list[ReportSection]:
    """The report's content, a section per subject, from ``found`` and ``past`` (computed where not given)."""
    past = history.of(results) if past is None else past
    found = tuple(found) if found is not None else findings(results, traces, folder, past)
    runs_by_file = tables.benchmark_runs(without_sweeps(results.runs))
    envs = {layout.shown(file, folder): rows for file, rows in runs_by_file.items()}
    given = Given(results, tuple(found), past, traces, folder, runs_by_file, envs)
    return [s for d in SECTIONS if (s := d.make(d, given)) is not None]
