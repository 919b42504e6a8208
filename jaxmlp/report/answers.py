"""The report's overview: the questions jaxmlp promises to answer, each in one sentence with its number and a link to
its section, from the newest run of each kind. Pure: computed from the same tables as the sections
(`jaxmlp.report.sections`); where no run answers a question yet, the sentence says which command would.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import pandas as pd

from jaxmlp import registry
from jaxmlp.report import sections as s
from jaxmlp.results import history, layout, sweep_tables, tables
from jaxmlp.results.frames import Results, without_sweeps
from jaxmlp.results.traces import CaptureSummary
from jaxmlp.units import duration, flop_rate, interval, p_value, percent, ratio


class Answer(NamedTuple):
    question: str  # a few words: "What jit buys"
    text: str  # one sentence, with its numbers
    anchor: str  # the section it comes from
    answered: bool = True  # False: no run answers it yet, and ``text`` says which command would


def _newest(runs_by_file: dict[str, pd.DataFrame], table: object) -> tuple[pd.DataFrame, str] | None:
    """The newest benchmark file whose ``table`` (a `jaxmlp.results.tables` function) is not empty, and its name."""
    for rows in runs_by_file.values():  # newest first
        found = table(rows)  # type: ignore[operator]
        if not found.empty:
            return found, layout.shown_stamp(s.run_stamp(rows))
    return None


def _speedups(table: pd.DataFrame, column: str) -> str:
    """``×9.8 at batch 128 (×12.1 at 32, ×4.30 at 512)``: the speed-up at the tutorial's batch size first."""
    by_size = table.set_index("batch_size")[column].dropna()
    if by_size.empty:
        return ""
    first = registry.BATCH_SIZE if registry.BATCH_SIZE in by_size.index else by_size.index[len(by_size) // 2]
    others = ", ".join(f"{ratio(v)} at {b}" for b, v in by_size.items() if b != first)
    return f"{ratio(by_size[first])} at batch {first}" + (f" ({others})" if others else "")


def jit_answer(runs_by_file: dict[str, pd.DataFrame]) -> Answer:
    found = _newest(runs_by_file, tables.jit_vs_eager)
    if found is None:
        return Answer("What jit buys", "No update-step benchmarks yet: `nox -s bench`.", s.BENCHMARKS, False)
    table, when = found
    parts = [f"{_speedups(part, 'jit_speedup')} on {b}" for b, part in table.groupby("backend")]
    text = f"jit makes the update step faster than eager by {'; '.join(parts)} (run of {when})."
    return Answer("What jit buys", text, s.BENCHMARKS)


def vmap_answer(runs_by_file: dict[str, pd.DataFrame]) -> Answer:
    found = _newest(runs_by_file, tables.vmap_vs_loop)
    if found is None:
        return Answer("What vmap buys", "No prediction benchmarks yet: `nox -s bench`.", s.BENCHMARKS, False)
    table, when = found
    parts = [f"{_speedups(part, 'vmap_speedup')} on {b}, and jit(vmap) {_speedups(part, 'jit_vmap_speedup')}"
             for b, part in table.groupby("backend")]  # fmt: skip
    return Answer("What vmap buys", f"vmap predicts faster than a Python loop by {'; '.join(parts)} (run of {when}).",
                  s.BENCHMARKS)  # fmt: skip


def _rung(pipeline: object, workers: object) -> str:
    return tables.rung_name(pipeline, workers).removeprefix(tables.PIPELINE_RUNG)


def loader_answer(runs_by_file: dict[str, pd.DataFrame]) -> Answer:
    found = _newest(runs_by_file, tables.loader_ladder)
    if found is None:
        return Answer("Which loader, how many workers", "No loader benchmarks yet: `nox -s bench`.", s.LOADERS, False)
    table, when = found
    epochs = table.dropna(subset=["epoch_s"]).sort_values("epoch_s")
    parts = []
    if len(epochs):
        best = epochs.iloc[0]
        parts.append(f"the fastest training epoch fed by a loader is {_rung(best.pipeline, best.workers)} "
                     f"({duration(best.epoch_s)}, {ratio(best.epoch_x_floor)} the floor)")  # fmt: skip
        workers = epochs[epochs["pipeline"].isin(registry.WORKER_PIPELINES) & (epochs["workers"] > 0)]
        if len(workers) and workers.iloc[0].pipeline != best.pipeline:
            w = workers.iloc[0]
            parts.append(f"with worker processes, {_rung(w.pipeline, w.workers)} ({duration(w.epoch_s)})")
    alone = table.dropna(subset=["loader_s"])
    with_workers = alone[alone["pipeline"].isin(registry.WORKER_PIPELINES)].sort_values("loader_s")  # 0: in-process
    if len(with_workers):
        w = with_workers.iloc[0]
        parts.append(f"input alone is fastest with {_rung(w.pipeline, w.workers)} ({duration(w.loader_s)} an epoch)")
    text = "; ".join(parts) if parts else "no loader was timed"
    return Answer("Which loader, how many workers", f"{text[0].upper()}{text[1:]} (run of {when}).", s.LOADERS)


def floor_answer(runs_by_file: dict[str, pd.DataFrame]) -> Answer:
    found = _newest(runs_by_file, tables.pipeline_ladder)
    if found is None:
        return Answer("How far from the floor", "No epoch benchmarks yet: `nox -s bench`.", s.BENCHMARKS, False)
    ladder, when = found
    parts = []
    for line in tables.ladder_headlines(ladder):
        fastest, best = line["fastest"], line["best_floor"]
        floor = fastest.epoch_s / fastest.x_floor if fastest.x_floor else float("nan")
        text = (f"on {line['backend']} the fastest pipeline, {fastest.rung.removeprefix(tables.PIPELINE_RUNG)}, "
                f"takes {duration(fastest.epoch_s)} an epoch")  # fmt: skip
        if best is None:
            text += f", {ratio(fastest.x_floor)} the compute floor ({duration(floor)})"
        elif best.library == "xla":
            text += (f", {ratio(fastest.x_floor)} the compute floor ({duration(floor)}): XLA reached the ceiling "
                     f"itself, {flop_rate(best.gflop_per_s * 1e9)}")  # fmt: skip
        else:
            xla = line["floor"]
            text += (f", {ratio(fastest.x_best_floor)} the best floor ({duration(best.epoch_s)}: {best.library} "
                     f"reached the ceiling, {flop_rate(best.gflop_per_s * 1e9)}) and {ratio(fastest.x_floor)} XLA's "
                     f"floor ({duration(floor)}, {flop_rate(xla.gflop_per_s * 1e9)})")  # fmt: skip
        parts.append(text)
    text = "; ".join(parts) or "no pipeline was timed"
    return Answer("How far from the floor", f"{text[0].upper()}{text[1:]} (run of {when}).", s.BENCHMARKS)


def cpu_accelerator_answer(runs_by_file: dict[str, pd.DataFrame]) -> Answer:
    texts = []
    for accelerator in registry.ACCELERATORS:
        table, _ = tables.cpu_vs_accelerator(runs_by_file, accelerator)
        if table.empty:
            continue
        pipelines = table[table["benchmark"].str.startswith(tables.PIPELINE_RUNG)]
        pipelines = pipelines.dropna(subset=["cpu_s", "accelerator_s"])
        if pipelines.empty:
            texts.append(f"the newest CPU and {accelerator.upper()} runs share no pipeline")
            continue
        row = pipelines.sort_values("accelerator_s").iloc[0]
        name = accelerator.upper()
        texts.append(f"{row.benchmark.removeprefix(tables.PIPELINE_RUNG)}: {duration(row.cpu_s)} an epoch on the CPU, "
                     f"{duration(row.accelerator_s)} on the {name} (CPU / {name} "
                     f"{ratio(row.cpu_over_accelerator)})")  # fmt: skip
    if not texts:
        return Answer("CPU against an accelerator", s.accelerator_runs(runs_by_file)[1], s.CPU_ACCELERATOR, False)
    text = "; ".join(texts)
    return Answer("CPU against an accelerator", f"{text[0].upper()}{text[1:]}.", s.CPU_ACCELERATOR)


def _step_words(row: pd.Series) -> str:
    flags = f" [XLA_FLAGS {row['xla_flags']}]" if isinstance(row.get("xla_flags"), str) and row["xla_flags"] else ""
    p = min(row["p_slower"], row["p_faster"])
    return (f"{row['benchmark']}{flags} {row['from']} → {row['to']} {ratio(row['ratio'])} "
            f"({interval(row['ci_low'], row['ci_high'])}, p {p_value(p)})")  # fmt: skip


def matrix_answer(results: Results) -> Answer:
    probes = [path.parent for path, _ in results.bisections]
    found = {k: v for k, v in sweep_tables.sweeps(results.runs, probes).items() if not sweep_tables.is_timeline(k)}
    if not found:
        return Answer("Which release got slower", "No version matrix yet: `jaxmlp sweep`.", s.MATRIX, False)
    where = max(found, key=layout.stamp_in)
    steps = sweep_tables.sweep_steps(found[where], results.samples)
    releases = sorted(found[where]["release"].unique(), key=registry.version_key)
    span = f"releases {', '.join(releases)} ({layout.shown_stamp(layout.stamp_in(where))})"
    flagged = steps[steps["verdict"].isin(["regression", "improvement", "results differ"])] if len(steps) else steps
    if flagged.empty:
        return Answer("Which release got slower", f"No release changed its workloads' time against the previous one, "
                      f"in {span}.", s.MATRIX)  # fmt: skip
    words = {"regression": "slower", "improvement": "faster", "results differ": "results differ"}
    parts = [f"{words[str(v)]}: " + "; ".join(_step_words(r) for _, r in part.iterrows())
             for v, part in flagged.groupby("verdict", sort=False)]  # fmt: skip
    return Answer("Which release got slower", f"{'. '.join(parts)}; in {span}.", s.MATRIX)


def timeline_answer(results: Results) -> Answer:
    """The newest release timeline's changes, workload by workload."""
    found = {k: v for k, v in sweep_tables.sweeps(results.runs).items() if sweep_tables.is_timeline(k)}
    if not found:
        return Answer("Where across releases", "No release timeline yet: `jaxmlp sweep timeline A B`.", s.TIMELINE,
                      False)  # fmt: skip
    where = max(found, key=layout.stamp_in)
    columns = sweep_tables.timeline_columns(found[where], results.samples)
    releases = sorted({r for c in columns for r in c.releases}, key=registry.version_key)
    parts = [f"{c.workload}{f' [{c.xla_flags}]' if c.xla_flags else ''}: "
             + ("; ".join(change.line() for change in c.changes) or "no change") for c in columns]  # fmt: skip
    span = (f"{len(releases)} releases, {releases[0]} to {releases[-1]} "
            f"({layout.shown_stamp(layout.stamp_in(where))})") if releases else "no release measured"  # fmt: skip
    return Answer("Where across releases", f"{'. '.join(parts)}; over {span}.", s.TIMELINE)


def bisection_answer(results: Results) -> Answer:
    if not results.bisections:
        return Answer("Which release did it", "No bisection yet: `jaxmlp sweep bisect GOOD BAD`.", s.BISECTION, False)
    path, doc = max(results.bisections, key=lambda item: layout.stamp_in(item[0]))
    return Answer("Which release did it", f"{doc.line} ({layout.shown_stamp(layout.stamp_in(path))}).", s.BISECTION)


def _scaling_label(row: Any) -> str:
    return f"N = {row.devices:.0f}" + (f", P = {row.processes:.0f}" if row.processes != 1 else "")


def _all_reduce(row: Any) -> str:
    share = getattr(row, "all_reduce_share", None)
    return "" if share is None or pd.isna(share) else f", all-reduce {percent(share)} of the epoch's operations"


def scaling_answer(runs_by_file: dict[str, pd.DataFrame]) -> Answer:
    newest = next((rows for rows in runs_by_file.values() if tables.is_scaling(rows)), None)
    if newest is None:
        return Answer("Scaling", "No scaling run yet: `jaxmlp scaling`.", s.SCALING, False)
    table = tables.scaling_table(newest)
    parts = [f"{_scaling_label(r)}: efficiency {percent(r.efficiency)} (speed-up {ratio(r.speedup)})"
             f"{_all_reduce(r)} on {r.backend}"
             for r in table.itertuples() if (r.devices, r.processes) != (1, 1) and "efficiency" in table]  # fmt: skip
    simulated = " (CPU devices are simulated and share the cores)" if (table["backend"] == "cpu").any() else ""
    return Answer("Scaling", f"{'; '.join(parts) or 'one device only'}{simulated}.", s.SCALING)


def trace_answer(traces: Sequence[CaptureSummary]) -> Answer:
    if not traces:
        return Answer("Where the time goes", "No profiler trace yet: `jaxmlp profile`.", s.PROFILES, False)
    trace = max(traces, key=lambda t: layout.stamp_in(t.run) or layout.stamp_in(t.file))
    if trace.top_ops.empty:
        return Answer("Where the time goes", f"The newest trace ({trace.run}) holds no device operations.", s.PROFILES)
    top = trace.top_ops.iloc[0]
    step = f"; a step takes {duration(trace.median_step_ms / 1e3)}" if trace.median_step_ms is not None else ""
    return Answer("Where the time goes", f"In the newest trace ({trace.run}) the top operation is {top.op}, "
                  f"{percent(top.share)} of the operations' time ({top['count']} calls){step}.",
                  s.PROFILES)  # fmt: skip


def history_answer(results: Results) -> Answer:
    points = history.points(results.runs)
    if points.empty:
        return Answer("Changes across runs", "No benchmark has been run twice on one machine with the same settings "
                      "yet.", s.HISTORY, False)  # fmt: skip
    changes = history.changes(points, results.samples)
    flagged = history.flagged(changes)
    runs = f"{points['file'].nunique()} comparable runs"
    if flagged.empty:
        return Answer("Changes across runs", f"The change-point detector finds no change over {runs}.", s.HISTORY)
    top = flagged.iloc[0]
    return Answer("Changes across runs", f"{len(flagged)} change(s) found over {runs}; the biggest: {top.benchmark} "
                  f"{ratio(top.ratio)} ({top.verdict}, a {top.kind}) at {top['to']}, after {top['from']}.",
                  s.HISTORY)  # fmt: skip


def training_answer(results: Results) -> Answer:
    training = tables.training_table(results.runs)
    if training.empty:
        return Answer("Training", "No training run saved yet: `jaxmlp train --json reports`.", s.TRAINING, False)
    newest = training.iloc[-1]
    return Answer("Training", f"The newest training run ({newest.file}): {newest.pipeline} on {newest.dataset}, "
                  f"{int(newest.epochs)} epochs, test accuracy {percent(newest.test_accuracy)}, "
                  f"{duration(newest.epoch_s_median)} an epoch after the first.", s.TRAINING)  # fmt: skip


def goals_answer(runs_by_file: dict[str, pd.DataFrame], runs: pd.DataFrame) -> Answer:
    accuracy = tables.tutorial_accuracy(runs)
    for rows in runs_by_file.values():  # newest first
        goals = tables.goals(rows, accuracy)
        if goals:
            met = sum(bool(g["met"]) for g in goals)
            text = (f"{met} of {len(goals)} met (run of {layout.shown_stamp(s.run_stamp(rows))}): "
                    + "; ".join(tables.goal_line(g) for g in goals) + ".")  # fmt: skip
            return Answer("Performance goals", text, s.BENCHMARKS)
    return Answer("Performance goals", "No run with the epoch ladder in both precisions yet: `nox -s bench`.",
                  s.BENCHMARKS, False)  # fmt: skip


def tta_answer(results: Results) -> Answer:
    table = tables.tta_table(results.tta)
    if table.empty:
        return Answer("Time to accuracy", "No time-to-accuracy run yet: `jaxmlp tta --target 0.97 --runs 5`.",
                      s.TTA, False)  # fmt: skip
    newest = table[table["file"] == results.tta.sort_values("timestamp")["file"].iloc[-1]]
    reached = newest[newest["reached"] > 0].sort_values("tta_s")
    lines = "; ".join(tables.tta_line(r) for r in newest.itertuples())
    head = (
        f"fastest to {percent(reached['target'].iloc[0])}: {reached['pipeline'].iloc[0]} "
        f"{reached['precision'].iloc[0]} in {duration(reached['tta_s'].iloc[0])}. "
        if len(reached)
        else ""
    )
    return Answer("Time to accuracy", f"{head}{lines}.", s.TTA)


def overview(results: Results, traces: Sequence[CaptureSummary] = ()) -> tuple[Answer, ...]:
    """The overview's answers, in the order the README asks its questions."""
    runs_by_file = tables.benchmark_runs(without_sweeps(results.runs))
    return (
        jit_answer(runs_by_file),
        vmap_answer(runs_by_file),
        loader_answer(runs_by_file),
        floor_answer(runs_by_file),
        cpu_accelerator_answer(runs_by_file),
        matrix_answer(results),
        timeline_answer(results),
        bisection_answer(results),
        scaling_answer(runs_by_file),
        trace_answer(traces),
        history_answer(results),
        training_answer(results),
        goals_answer(runs_by_file, results.runs),
        tta_answer(results),
    )
