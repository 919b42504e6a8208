"""The findings of benchmark runs: jit, vmap, loaders, the floor, CPU against an accelerator, per backend."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from jaxmlp import registry
from jaxmlp.results import tables
from jaxmlp.results.findings.citing import (
    cite,
    epoch_cite,
    floor_cite,
    floor_source,
    ladder_run,
    loader_run,
    older_note,
    runs_read,
    with_runs,
)
from jaxmlp.results.findings.model import (
    Finding,
    Table,
)
from jaxmlp.results.findings.questions import CPU_VS_ACCELERATOR, FLOOR_DISTANCE, JIT, LOADER, VMAP, Question
from jaxmlp.results.findings.select import Parts, machine_of, newest_per_backend
from jaxmlp.results.tables import LOOP_MEASURED, LOOP_NOT_MEASURED, RunTables
from jaxmlp.units import count, duration, flop_rate, ratio

LOADER_CAPTION = (
    "Loader ladder: input alone and the training epoch per loader, worker count and precision (median "
    "and IQR), against the floor of its precision and the scan epoch of its precision in the same run (or the "
    "machine's newest environment: run = the file each row comes from); "
    "fastest = the smallest median, ~fastest = its IQR overlaps the fastest's"
)
GEMM_CAPTION = (
    "The floor's products in each library and precision: 2048³ (and any larger size the run measured) "
    "and the MLP's layers at batch 128 (m×k×n), f32 and bf16 inputs with float32 accumulation (median a "
    "product, and its rate; fastest = the best library of its shape and precision; bf16 speed-up = the "
    f"rate over the same library's f32 rate; {tables.GEMM_UNAVAILABLE})"
)
FLOORS_CAPTION = (
    "The floor per precision: the best rate this run (or the machine's newest environment that measured that "
    "precision) measured at that precision (every GEMM row and the f32 matmul), and the epoch's FLOPs at that rate; "
    "every table of the run reads it"
)
LADDER_CAPTION = (
    "Epoch ladder: each pipeline's epoch (median and IQR) as times the floor of its own precision in "
    "the same run or environment (library and rate on the floors' rows; run = the file each row comes from)"
)


def _speedups(table: pd.DataFrame, column: str) -> str:
    """``×9.8 at batch 128 (×12.1 at 32, ×4.30 at 512)``: the speed-up at the tutorial's batch size first."""
    by_size = table.set_index("batch_size")[column].dropna()
    if by_size.empty:
        return ""
    first = registry.BATCH_SIZE if registry.BATCH_SIZE in by_size.index else by_size.index[len(by_size) // 2]
    others = ", ".join(f"{ratio(v)} at {b}" for b, v in by_size.items() if b != first)
    return f"{ratio(by_size[first])} at batch {first}" + (f" ({others})" if others else "")


NEEDS: dict[str, tuple[registry.Benchmark, ...]] = {
    "jit_vs_eager": (registry.UPDATE,),
    "vmap_vs_loop": (registry.PREDICT,),
    "loader_ladder": (registry.LOADER, registry.EPOCH),
    "pipeline_ladder": (registry.EPOCH,),
}
"""The benchmarks of which a run must hold one for each table to have rows (`newest_per_backend`'s ``needs``)."""

READS: dict[str, tuple[registry.Benchmark, ...]] = {
    "jit_vs_eager": (registry.UPDATE,),
    "vmap_vs_loop": (registry.PREDICT,),
    "loader_ladder": (registry.LOADER, registry.EPOCH, registry.GEMM, registry.MATMUL),
}
"""The benchmarks each table reads (the runs its answer cites); a table not named reads every row."""


def _read(part: pd.DataFrame, table: Any) -> pd.DataFrame:
    ids = [b.id for b in READS.get(table.__name__, ())]
    return part[part["test"].isin(ids)] if ids else part


def _made(part: RunTables, table: Any) -> pd.DataFrame:
    """``table`` of ``part``, as its `tables.RunTables` made it (once): the member named as the table."""
    made: pd.DataFrame = getattr(part, table.__name__)
    return made


def per_backend(
    parts: Parts,
    question: Question,
    table: Any,
    missing: str,
    answer: Any,
    folder: Path | None,
    timed_only: bool = True,
) -> list[Finding]:
    """A finding per backend from its newest timed run with ``table``, its sentence and tables by ``answer``."""
    found = newest_per_backend(
        parts, lambda part: not _made(part, table).empty, timed_only, NEEDS.get(table.__name__, ())
    )
    if not found:
        return [Finding(question.text, missing, question.anchor, False)]
    out = []
    for tabled in found.values():
        part = tabled.rows
        text, shown_tables = answer(tabled, _made(tabled, table))
        read = _read(part, table)
        out.append(
            Finding(
                question.text,
                text + older_note(read),
                question.anchor,
                True,
                runs_read(read, folder),
                machine_of(part),
                shown_tables,
            )
        )
    return out


def jit(parts: Parts, folder: Path | None = None, timed_only: bool = True) -> list[Finding]:
    return per_backend(
        parts,
        JIT,
        tables.jit_vs_eager,
        "No update-step benchmarks yet: `nox -s bench`.",
        lambda _, t: (
            f"jit makes the update step faster than eager by {_speedups(t, 'jit_speedup')}.",
            (Table("Update step: jit against eager (median and IQR; speed-up = eager / jit)", t),),
        ),
        folder,
        timed_only,
    )


def vmap(parts: Parts, folder: Path | None = None, timed_only: bool = True) -> list[Finding]:
    return per_backend(
        parts,
        VMAP,
        tables.vmap_vs_loop,
        "No prediction benchmarks yet: `nox -s bench`.",
        lambda _, t: (
            f"vmap predicts faster than a Python loop by {_speedups(t, 'vmap_speedup')}, "
            f"and jit(vmap) by {_speedups(t, 'jit_vmap_speedup')}.",
            (
                Table(
                    "Prediction: vmap and jit(vmap) against a Python loop (median and IQR; speed-up = loop / vmap)", t
                ),
            ),
        ),
        folder,
        timed_only,
    )


def _rung(row: Any) -> str:
    return tables.rung_name(row.pipeline, row.workers, row.precision).removeprefix(tables.PIPELINE_RUNG)


def _loader(row: Any) -> str:
    """A loader of the input-alone rows as the answer names it: ``seed_batched without workers``."""
    if row.pipeline not in registry.WORKER_PIPELINES:
        return str(row.pipeline)
    workers = 0 if pd.isna(row.workers) else int(row.workers)
    return f"{row.pipeline}, {count(workers, 'worker')}" if workers else f"{row.pipeline} without workers"


def _loader_answer(tabled: RunTables, table: pd.DataFrame) -> tuple[str, tuple[Table, ...]]:
    part = tabled.rows
    epochs = table.dropna(subset=["epoch_s"]).sort_values("epoch_s")
    parts = []
    if len(epochs):
        best = epochs.iloc[0]
        parts.append(
            f"the fastest training epoch fed by a loader is {_rung(best)} ({duration(best.epoch_s)}, "
            f"{ratio(best.epoch_x_floor)} the {best.precision} floor){epoch_cite(part, best)}"
        )
        workers = epochs[epochs["pipeline"].isin(registry.WORKER_PIPELINES) & (epochs["workers"] > 0)]
        if len(workers):
            w = workers.iloc[0]
            parts.append(f"with worker processes, {_rung(w)} ({duration(w.epoch_s)}){epoch_cite(part, w)}")
    alone = table.dropna(subset=["loader_s"]).sort_values("loader_s", kind="stable")
    if len(alone):
        best = alone.iloc[0]  # the row the table marks fastest: the smallest median
        parts.append(
            f"input alone is fastest with {_loader(best)} ({duration(best.loader_s)} an epoch)"
            + cite(part, registry.LOADER, pipeline=best.pipeline, workers=best.workers)
        )
        with_workers = alone[alone["pipeline"].isin(registry.WORKER_PIPELINES)]
        if len(with_workers) and with_workers.index[0] != alone.index[0]:
            w = with_workers.iloc[0]
            parts.append(
                f"of the loaders that can use worker processes, {_loader(w)} ({duration(w.loader_s)} an epoch)"
                + cite(part, registry.LOADER, pipeline=w.pipeline, workers=w.workers)
            )
    text = "; ".join(parts) or "no loader was timed"
    return f"{text[0].upper()}{text[1:]}.", (Table(LOADER_CAPTION, with_runs(table, part, loader_run)),)


def loaders(parts: Parts, folder: Path | None = None, timed_only: bool = True) -> list[Finding]:
    return per_backend(
        parts,
        LOADER,
        tables.loader_ladder,
        "No loader benchmarks yet: `nox -s bench`.",
        _loader_answer,
        folder,
        timed_only,
    )


def _floor_answer(tabled: RunTables, ladder: pd.DataFrame) -> tuple[str, tuple[Table, ...]]:
    part = tabled.rows
    parts = []
    for line in tables.ladder_headlines(ladder):
        fastest, floor = line["fastest"], line["floor"]
        if floor is None:
            continue
        parts.append(
            f"{line['precision']}: the fastest pipeline, {fastest.rung.removeprefix(tables.PIPELINE_RUNG)}, "
            f"takes {duration(fastest.epoch_s)} an epoch{epoch_cite(part, fastest)}, {ratio(fastest.x_floor)} the "
            f"{line['precision']} floor ({duration(floor.epoch_s)} at {flop_rate(floor.gflop_per_s * 1e9)}, "
            f"{floor.library}){floor_cite(part, floor)}"
        )
    text = "; ".join(parts) or "No pipeline was timed against a floor"
    roof = tabled.epoch_roofline
    bounds = [
        b
        for line in tables.ladder_headlines(ladder)
        for pipeline in dict.fromkeys(("scan", str(line["fastest"].pipeline)))
        if (b := _bound(roof, line["precision"], pipeline))
    ]
    if bounds:
        text += (
            ". Against the bound of what its steps must do (FLOPs at the floor, parameters and batches at the "
            "bandwidth, the loop's own cost): " + "; ".join(bounds)
        )
    shown_tables = [
        Table(FLOORS_CAPTION, with_runs(tabled.floors.drop(columns="flops"), part, floor_source)),
        Table(LADDER_CAPTION, with_runs(ladder, part, ladder_run)),
    ]
    gemm = tabled.gemm_rates
    if len(gemm):
        shown_tables.append(Table(GEMM_CAPTION, gemm, long=True))
    for caption, extra in (
        (BANDWIDTH_CAPTION, tabled.bandwidth_table),
        (ROOFLINE_CAPTION, roof),
        (BF16_STEP_CAPTION, tabled.bf16_step_table),
    ):
        if len(extra):
            shown_tables.append(Table(caption, extra))
    return f"{text}.", tuple(shown_tables)


def _bound(roof: pd.DataFrame, precision: str, pipeline: str) -> str | None:
    """``scan, bf16: 4.06 ms against a bound of 4.62 ms (memory binds; loop not measured in this run), ×0.878``."""
    at = roof[(roof["pipeline"] == pipeline) & (roof["precision"] == precision)]
    if at.empty or pd.isna(at["bound_s"].iloc[0]):
        return None
    row = at.sort_values("epoch_s").iloc[0]
    loop = (
        f"a loop of {duration(row.loop_s)}"
        if row.loop == LOOP_MEASURED
        else "the loop not measured in this run"
        if row.loop == LOOP_NOT_MEASURED
        else row.loop
    )
    return (
        f"{pipeline}, {precision}: {duration(row.epoch_s)} against a bound of {duration(row.bound_s)} "
        f"({row.binds} binds; {loop}), {ratio(row.x_bound)}"
    )


BANDWIDTH_CAPTION = "Memory bandwidth: STREAM kernels in XLA (median of a call)"
ROOFLINE_CAPTION = (
    "Each epoch against the bound of what its steps must do: its FLOPs at its precision's floor (compute); its "
    "parameters read and written once a step (once an epoch where a kernel keeps them on chip) and its batches read, "
    "at the run's best STREAM bandwidth (memory); the loop's own cost, the run's empty scan a step over the scan's "
    "iterations (loop). Bound = max(compute, memory) + loop; × bound under 1: the parameters did not all go through "
    "memory every step (XLA can keep a loop's carried buffers on chip) or the epoch moved them faster than STREAM"
)
BF16_STEP_CAPTION = (
    "The bf16 step's two forms, the scan epoch timed with each side by side in a benchmark of their own (median; the "
    "ladder's scan bf16 row times the chosen form again, apart); a backend trains with the faster"
)


def floor(parts: Parts, folder: Path | None = None, timed_only: bool = True) -> list[Finding]:
    return per_backend(
        parts,
        FLOOR_DISTANCE,
        tables.pipeline_ladder,
        "No epoch benchmarks yet: `nox -s bench`.",
        _floor_answer,
        folder,
        timed_only,
    )


def cpu_vs_accelerator(runs_by_file: Mapping[str, pd.DataFrame], folder: Path | None = None) -> list[Finding]:
    """Per accelerator, its newest run beside the newest CPU run: the fastest shared pipeline's epoch on each."""
    out = []
    newest = tables.newest_by_backend(runs_by_file)
    for accelerator in registry.ACCELERATORS:
        table, differ = tables.cpu_vs_accelerator(runs_by_file, accelerator, newest)
        if differ is None:
            continue
        name = accelerator.upper()
        pipelines = table[table["benchmark"].str.startswith(tables.PIPELINE_RUNG)] if len(table) else table
        if pipelines.empty:
            text = f"The newest CPU and {name} runs share no pipeline."
        else:
            row = pipelines.sort_values("accelerator_s").iloc[0]
            text = (
                f"{row.benchmark.removeprefix(tables.PIPELINE_RUNG)}: {duration(row.cpu_s)} an epoch on the CPU, "
                f"{duration(row.accelerator_s)} on the {name} (CPU / {name} {ratio(row.cpu_over_accelerator)})."
            )
        cpu, other = newest["cpu"], newest[accelerator]
        differs = "; they differ in " + ", ".join(f"{k} ({a} vs {b})" for k, (a, b) in differ.items()) if differ else ""
        shown_tables = (
            Table(f"CPU against {name}, each benchmark both ran (medians){differs}", table),
            Table(
                f"The {name}'s floor per precision against its fastest pipeline of that precision",
                other.floor_vs_fastest,
            ),
        )
        out.append(
            Finding(
                CPU_VS_ACCELERATOR.text,
                text[0].upper() + text[1:],
                CPU_VS_ACCELERATOR.anchor,
                True,
                f"{runs_read(cpu.rows, folder)}; {runs_read(other.rows, folder)}",
                f"{machine_of(cpu.rows)} against {machine_of(other.rows)}",
                shown_tables,
            )
        )
    return out or [
        Finding(
            CPU_VS_ACCELERATOR.text,
            "Needs runs of both: `nox -s bench` here and `bench/accelerator/run.sh` on a GPU or TPU host.",
            CPU_VS_ACCELERATOR.anchor,
            False,
        )
    ]
