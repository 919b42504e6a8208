"""The report's content, computed before anything is rendered: a section per subject, each opening with its findings
(`jaxmlp.results.findings`, the same answers as the overview and `jaxmlp summary`), then the tables and plots of the
runs those findings rest on (folded in the page), then the earlier runs' labels. Pure: no matplotlib, no HTML; tests
read sections as data. The release sweeps' parts: `jaxmlp.report.release_sections`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd

from jaxmlp import units
from jaxmlp.report.content import (
    BENCHMARKS,
    BISECTION,
    CPU_ACCELERATOR,
    EXPLAINED,
    FLOOR,
    GOALS,
    HISTORY,
    LOADERS,
    MATRIX,
    PROFILES,
    ROOFLINE,
    SCALING,
    SKIPPED,
    TIMELINE,
    TRAINING,
    TRIALS,
    TTA,
    Figure,
    Finding,
    ReportSection,
    Run,
    Table,
    describe,
    run_stamp,
    subject,
)
from jaxmlp.report.release_sections import (
    CHANGE_RULE,
    KNOWN_REGRESSIONS,
    bisection_run,
    corpus_run,
    explain_run,
    roofline_run,
    sweep_runs,
    timeline_runs,
    trace_run,
    trials_run,
)
from jaxmlp.results import history, tables
from jaxmlp.results.findings import findings
from jaxmlp.results.store import layout
from jaxmlp.results.store.frames import Results, without_sweeps
from jaxmlp.results.tables.traces import CaptureSummary

__all__ = [
    "BENCHMARKS",
    "BISECTION",
    "CPU_ACCELERATOR",
    "HISTORY",
    "MATRIX",
    "SCALING",
    "TIMELINE",
    "Figure",
    "ReportSection",
    "build_sections",
    "cpu_vs_accelerator_note",
    "trials_run",
]

SCALING_READING = (
    "On the CPU the N devices are simulated (--xla_force_host_platform_device_count) and share the same cores: "
    "this measures the overhead of the sharded program and its all-reduce, not a speed-up; on N GPUs it is one. "
    "With P > 1 the all-reduce crosses processes (jax.distributed, the CPU's collectives over 127.0.0.1 on one host)."
)
HISTORY_PLOTTED = 8
"""A machine's history plot shows at most this many benchmarks, those with the biggest changes."""
TTA_READING = (
    "MLPerf style: wall time from the start of a run (data preparation and compilation included, each also "
    "shown apart) until the test accuracy first reaches the target; median, min and max over the runs that "
    "reached it (seeds 0..N-1)."
)


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


EVIDENCE = (
    "Each machine's newest environment (its jax, jaxlib and commit), its runs merged: every figure names its run."
)
"""Where the benchmark sections' answers come from (docs/methods/which-run-answers.md)."""


def _run_of(finding: Finding, plots: Sequence[Figure] = (), envs: dict[str, pd.DataFrame] | None = None) -> Run:
    """A finding's tables (and plots) as the run it rests on, with what that run was measured on and with."""
    label = f"{finding.machine}: {finding.run}" if finding.machine else finding.run
    notes = [
        describe({**tables.environment(rows), "file": name})
        for name, rows in (envs or {}).items()
        if finding.run.startswith(f"{name} (") or f"; {name} (" in finding.run
    ]
    return Run(label, " ".join(notes), finding.tables, tuple(plots), layout.stamp_in(finding.run.split(" (")[0]))


def _of(found: Sequence[Finding], *anchors: str) -> tuple[Finding, ...]:
    return tuple(f for f in found if f.anchor in anchors)


def _earlier(
    runs_by_file: dict[str, pd.DataFrame], shown: Sequence[Finding], folder: Path | None, keep: Any = None
) -> tuple[Run, ...]:
    """The benchmark files the findings do not rest on, as labels (newest first)."""
    used = " ".join(f.run for f in shown)
    out = []
    for file, rows in runs_by_file.items():
        if (keep is None or keep(rows)) and layout.shown(file, folder) not in used:
            env = tables.environment(rows)
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


def _summarised(older: pd.DataFrame, folder: Path | None) -> tuple[Run, ...]:
    """The benchmark runs the folder's index summarised (`Results.older`), as labels (newest first)."""
    runs = older[older["kind"] == "bench"] if len(older) else older
    if runs.empty:
        return ()
    backends = runs.dropna(subset=["backend"]).groupby("file", sort=False)["backend"].unique()
    out = []
    for row in runs.drop_duplicates("file").sort_values("timestamp", ascending=False).itertuples():
        file = str(row.file)
        stamp = layout.stamp_in(file) or layout.stamp(str(row.timestamp))
        joined = ", ".join(sorted(str(b) for b in backends.get(file, ())))
        cpu = row.cpu_model if isinstance(row.cpu_model, str) and row.cpu_model else units.MISSING
        label = f"{layout.shown_stamp(stamp)} · {joined} · {cpu} · {layout.shown(file, folder)}"
        out.append(Run(label, "", (), (), stamp))
    return tuple(out)


def _section(
    title: str, anchor: str, note: str, answers: Sequence[Finding], runs: Sequence[Run], earlier: Sequence[Run] = ()
) -> ReportSection:
    return ReportSection(title, note, tuple(runs), tuple(earlier), anchor, tuple(answers))


def _ladder_plots(finding: Finding) -> list[Figure]:
    ladder = next((t.frame for t in finding.tables if t.caption.startswith("Epoch ladder")), None)
    if ladder is None or ladder.empty:
        return []
    return [Figure(f"Epoch ladder with the floor of each precision ({finding.machine})", "ladder", (ladder,))]


def _loader_plots(finding: Finding) -> list[Figure]:
    return [Figure(f"Loader ladder ({finding.machine})", "loader_ladder", (t.frame,)) for t in finding.tables[:1]]


def _history_plots(points: pd.DataFrame, changes: pd.DataFrame) -> tuple[dict[str, Figure], list[str]]:
    """A plot for each machine with changes (its `HISTORY_PLOTTED` benchmarks with the biggest changes, its own
    runs), and the sentences saying what each plot shows and which machines have none."""
    flagged = history.flagged(changes) if len(changes) else changes
    order = list(dict.fromkeys(points.sort_values("timestamp", ascending=False)["machine"]))  # newest run first
    plots: dict[str, Figure] = {}
    said = []
    for machine in order:
        mine = flagged[flagged["machine"] == machine] if len(flagged) else flagged
        names = list(dict.fromkeys(mine["benchmark"])) if len(mine) else []
        if not names:
            said.append(f"{machine}: no change, so no plot.")
            continue
        top = names[:HISTORY_PLOTTED]
        which = (
            f"its {len(top)} benchmarks with the biggest changes (of {len(names)} with one)"
            if len(names) > len(top)
            else f"its {units.count(len(top), 'benchmark')} with a change"
        )
        said.append(f"{machine}: the plot shows {which}.")
        shown = points[(points["machine"] == machine) & points["benchmark"].isin(top)]
        plots[str(machine)] = Figure(
            f"History on {machine}: the benchmarks with the biggest changes (median and IQR per run; changes marked)",
            "history",
            (shown, mine[mine["benchmark"].isin(top)]),
        )
    return plots, said


def history_section(
    results: Results, answers: Sequence[Finding], past: history.RunHistory | None = None
) -> ReportSection | None:
    """Every benchmark seen in more than one comparable run, per machine, and its changes by the change-point
    detector the release timeline uses; a plot for each machine with changes, beside its changes' table. Of each
    machine the newest `history.RECENT_RUNS` runs are drawn and searched, the older summarised in a table."""
    past = history.of(results) if past is None else past
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
    runs = [_run_of(f, [plots.pop(f.machine)] if f.machine in plots else []) for f in answers if f.tables]
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
    return _section("History across runs", HISTORY, note, answers, runs)


def build_sections(
    results: Results,
    traces: Sequence[CaptureSummary] = (),
    folder: Path | None = None,
    found: Sequence[Finding] | None = None,
    past: history.RunHistory | None = None,
) -> list[ReportSection]:
    """The report's content, a section per subject, from ``found`` (`findings` of the same results, computed here
    when not given) and ``past`` (`history.found`, likewise). ``traces`` are
    `jaxmlp.results.tables.traces.capture_summary` results; paths relative to ``folder``."""
    past = history.of(results) if past is None else past
    found = tuple(found) if found is not None else findings(results, traces, folder, past)
    runs_by_file = tables.benchmark_runs(without_sweeps(results.runs))
    envs = {layout.shown(file, folder): rows for file, rows in runs_by_file.items()}
    sections = []

    def add(title: str, anchor: str, note: str, plots: Any = lambda f: [], earlier: Sequence[Run] = ()) -> None:
        answers = _of(found, anchor)
        if any(f.answered for f in answers):
            runs: dict[tuple[str, str], Run] = {}
            for f in answers:
                if f.answered and (f.tables or plots(f)):
                    run = _run_of(f, plots(f), envs)
                    had = runs.get((f.machine, f.run))  # the findings of one run: one part
                    runs[(f.machine, f.run)] = (
                        run
                        if had is None
                        else replace(had, tables=had.tables + run.tables, plots=had.plots + run.plots)
                    )
            sections.append(_section(title, anchor, note, answers, list(runs.values()), earlier))

    add(
        "jit and vmap",
        BENCHMARKS,
        EVIDENCE,
        earlier=_earlier(runs_by_file, _of(found, BENCHMARKS), folder, lambda r: not tables.is_scaling(r))
        + _summarised(results.older, folder),
    )
    add(
        "The floor and the epoch ladder",
        FLOOR,
        "The floor of each precision is the best rate the run (or the machine's newest environment that measured "
        "that precision) measured at that precision; every pipeline is set against its own precision's floor.",
        _ladder_plots,
    )
    add("Goals", GOALS, f"Read from {EVIDENCE[0].lower()}{EVIDENCE[1:]}")
    add("Loaders and workers", LOADERS, EVIDENCE, _loader_plots)
    add(
        "CPU against an accelerator",
        CPU_ACCELERATOR,
        "The newest machine of each backend, " + EVIDENCE[0].lower() + EVIDENCE[1:],
        lambda f: (
            [Figure("CPU vs accelerator epoch times", "cpu_accelerator", (f.tables[0].frame,))]
            if f.tables and len(f.tables[0].frame) and "cpu_over_accelerator" in f.tables[0].frame
            else []
        ),  # the CPU-against-accelerator table's plot, not the operation tables'
    )
    if (drawn := history_section(results, _of(found, HISTORY), past)) is not None:
        sections.append(drawn)
    for title, anchor, note, runs in (
        (
            "Version matrix: jax/jaxlib releases",
            MATRIX,
            "Each sample is one fresh process.",
            sweep_runs(results, folder, _of(found, MATRIX)),
        ),
        (
            "Release timeline",
            TIMELINE,
            "Every release from A to B (`jaxmlp sweep timeline A B`): change points, transients and drifts.",
            timeline_runs(results, folder, _of(found, TIMELINE)),
        ),
        (
            "Bisection across releases",
            BISECTION,
            "Which release changed the workload.",
            [bisection_run(p, d, folder) for p, d in results.bisections],
        ),
        (
            "Why a release changed: the compiled program, or below it",
            EXPLAINED,
            "`jaxmlp sweep explain A B`: same optimized HLO or not, then the evidence.",
            [explain_run(p, d, folder) for p, d in results.explanations],
        ),
        (
            "Known regressions: the corpus",
            KNOWN_REGRESSIONS,
            "`jaxmlp sweep corpus`: each known regression run as a user would, and whether it was found, measured "
            "within its band and explained; controls left clean.",
            [corpus_run(p, d, folder) for p, d in results.corpora],
        ),
        (
            "Roofline",
            ROOFLINE,
            "Each workload against this machine's two ceilings.",
            [roofline_run(p, d, folder) for p, d in results.rooflines],
        ),
    ):
        if runs:
            sections.append(subject(title, anchor, note, runs, _of(found, anchor)))
    first_scaling = next((f for f in found if f.anchor == SCALING and f.answered), None)

    def scaling_plots(finding: Finding) -> list[Figure]:
        return [
            Figure(f"Data-parallel scaling ({finding.machine})", "scaling", (t.frame,))
            for t in finding.tables
            if "speedup" in t.frame and finding is first_scaling
        ]

    add("Scaling", SCALING, SCALING_READING, scaling_plots)
    if traces:
        sections.append(
            _section(
                "Profiles",
                PROFILES,
                "Profiler captures (`jaxmlp profile`).",
                _of(found, PROFILES),
                [trace_run(t, folder) for t in traces],
            )
        )
    add("Training runs", TRAINING, "The newest training run of each machine; every run in its table.")
    add("Time to accuracy", TTA, TTA_READING)
    if results.trials:
        sections.append(
            subject(
                "Regression detector trials",
                TRIALS,
                "The detector checked on itself.",
                [trials_run(path, doc, folder) for path, doc in results.trials],
            )
        )
    if results.skipped:
        skipped = pd.DataFrame(
            [(layout.shown(s.path, folder), s.why) for s in results.skipped], columns=["file", "why it was skipped"]
        )
        sections.append(
            _section("Skipped files", SKIPPED, "", (), [Run("files", "", (Table("Not results", skipped),))])
        )
    return sections
