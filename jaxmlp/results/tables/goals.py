"""The performance goals, read from one benchmark run: its epoch ladder against the floor and the tutorial's seed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from jaxmlp import registry
from jaxmlp.results.tables.floors import floors, gemm_rates
from jaxmlp.results.tables.ladders import STEP_GEMMS, ladder_headlines, pipeline_ladder, rung_name
from jaxmlp.units import duration, flop_rate, percent, ratio

GOAL_FLOOR_FACTOR = 1.3
"""The fastest JAX float32 pipeline within this factor of the f32 floor."""
GOAL_BF16_SPEEDUP = 2.5
"""The fastest bf16 pipeline at least this many times faster an epoch than the float32 scan."""
GOAL_SEED_SPEEDUP = 50.0
"""An accelerator's fastest pipeline at least this many times faster than ``seed`` on the same device."""
GOAL_ACCELERATOR_FLOOR = 3.0
"""An accelerator's fastest pipeline within this factor of its floor at its own precision."""
ACCURACY_KEPT = 0.003
"""bf16's test accuracy after the tutorial's epochs within this of f32's."""


def goal_group(backend: object) -> str:
    """The heading a backend's goals go under."""
    return "Goals: the tutorial's epoch on this CPU" if backend == "cpu" else "Goals: the accelerator"


def floor_vs_fastest(
    run: pd.DataFrame, floor_table: pd.DataFrame | None = None, ladder: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Per backend and precision: the floor (`floors`) and the fastest pipeline of that precision against it.
    ``floor_table``, ``ladder``: `floors` and `pipeline_ladder` of the same run, where the caller has them."""
    table = floors(run) if floor_table is None else floor_table
    ladder = pipeline_ladder(run, table) if ladder is None else ladder
    fastest = {(h["backend"], h["precision"]): h["fastest"] for h in ladder_headlines(ladder)} if len(ladder) else {}
    rows = []
    for f in table.itertuples():
        row: dict[str, Any] = {
            "backend": f.backend,
            "precision": f.precision,
            "library": f.library,
            "gflop_per_s": f.gflop_per_s,
            "floor_s": f.floor_s,
        }
        if (best := fastest.get((f.backend, f.precision))) is not None:
            row.update(pipeline=best.rung.removeprefix("pipeline "), epoch_s=best.epoch_s, x_floor=best.x_floor)
        rows.append(row)
    return pd.DataFrame(rows)


def _goal(backend: object, goal: str, met: bool | None, text: str) -> dict[str, Any]:
    return {"backend": backend, "group": goal_group(backend), "goal": goal, "met": met, "text": text}


def _floor_goal(backend: Any, fastest: pd.Series, floor: pd.Series) -> dict[str, Any]:
    """The fastest JAX f32 pipeline against the f32 floor."""
    x = float(fastest["x_floor"])
    met = x <= GOAL_FLOOR_FACTOR
    return _goal(
        backend,
        f"fastest JAX f32 pipeline within {GOAL_FLOOR_FACTOR}x the f32 floor",
        met,
        f"{fastest.rung} {duration(fastest.epoch_s)} an epoch = {ratio(x)} the f32 floor "
        f"({duration(floor['epoch_s'])}, {floor['library']})"
        + ("" if met else f": missed by {ratio(x / GOAL_FLOOR_FACTOR)}"),
    )


def _against_torch(backend: Any, jax_rows: pd.DataFrame, torch_rows: pd.DataFrame) -> list[dict[str, Any]]:
    """At each precision, the fastest JAX pipeline against the fastest PyTorch one."""
    out = []
    for precision in ("f32", "bf16"):
        mine, theirs = (r[r["precision"] == precision] for r in (jax_rows, torch_rows))
        if len(mine) and len(theirs):
            a, b = mine.iloc[0], theirs.iloc[0]
            x = float(a.epoch_s) / float(b.epoch_s)
            out.append(
                _goal(
                    backend,
                    f"fastest JAX pipeline faster than the fastest PyTorch one ({precision})",
                    x < 1,
                    f"{a.rung} {duration(a.epoch_s)} against {b.rung} {duration(b.epoch_s)}: "
                    f"{ratio(x)}" + ("" if x < 1 else f": missed by {ratio(x)}"),
                )
            )
    return out


def goals(
    df: pd.DataFrame,
    accuracy: Mapping[str, float] | None = None,
    ladder: pd.DataFrame | None = None,
    gemm_table: pd.DataFrame | None = None,
) -> list[dict[str, Any]]:
    """Per backend, the goals read from one run: ``group``, ``goal``, ``met`` (None: not measurable in this run) and
    ``text``. ``accuracy``: test accuracy per precision, where known; ``ladder``, ``gemm_table``: of the same run, where
    the caller has them."""
    out: list[dict[str, Any]] = []
    ladder = pipeline_ladder(df) if ladder is None else ladder
    square = gemm_rates(df) if gemm_table is None else gemm_table
    for backend, rungs in ladder.groupby("backend") if not ladder.empty else ():
        runs = rungs[rungs["pipeline"] != ""]
        jax_rows = runs[~runs["pipeline"].isin(registry.TORCH_PIPELINES)]
        torch_rows = runs[runs["pipeline"].isin(registry.TORCH_PIPELINES)]
        floor = rungs[rungs["rung"] == "floor, f32"]
        f32 = jax_rows[jax_rows["precision"] == "f32"]
        if len(f32) and len(floor):
            out.append(_floor_goal(backend, f32.iloc[0], floor.iloc[0]))
        scan = runs[(runs["pipeline"] == "scan") & (runs["precision"] == "f32")]
        bf16 = runs[runs["precision"] == "bf16"]
        if len(scan) and len(bf16):
            out.append(
                _bf16_goal(
                    backend,
                    bf16.iloc[0],
                    float(scan["epoch_s"].iloc[0]),
                    accuracy,
                    square[square["backend"] == backend],
                )
            )
        if backend != "cpu" and len(runs):
            out += _accelerator_goals(str(backend), runs, rungs)
        out += _against_torch(backend, jax_rows, torch_rows)
    return out


def _bf16_goal(
    backend: object, fastest: Any, base: float, accuracy: Mapping[str, float] | None, gemm: pd.DataFrame
) -> dict[str, Any]:
    speedup = base / float(fastest.epoch_s)
    known = bool(accuracy) and {"f32", "bf16"} <= set(accuracy or {})
    kept = None if not known or accuracy is None else abs(accuracy["bf16"] - accuracy["f32"]) <= ACCURACY_KEPT
    xla = gemm[(gemm["library"] == "xla") & (gemm["precision"] == "bf16")].sort_values("gflop_per_s")["bf16_speedup"]
    machine = f"; this machine's fastest XLA bf16 GEMM: {ratio(float(xla.iloc[-1]))} its f32" if len(xla) else ""
    acc = (
        "; accuracy: no 8-epoch scan training run of each precision here (`jaxmlp train --pipeline scan "
        "--precision bf16 --json reports`)"
        if kept is None or accuracy is None
        else f"; accuracy after 8 epochs f32 {percent(accuracy['f32'])}, bf16 {percent(accuracy['bf16'])} "
        f"({'kept' if kept else 'not kept'})"
    )
    met = speedup >= GOAL_BF16_SPEEDUP and kept is not False
    return _goal(
        backend,
        f"fastest bf16 pipeline >= {GOAL_BF16_SPEEDUP}x faster than f32 scan, accuracy kept",
        met,
        f"{fastest.rung} {duration(fastest.epoch_s)} against scan f32 {duration(base)}: {ratio(speedup)}"
        + ("" if met else f": missed by {ratio(GOAL_BF16_SPEEDUP / speedup)}")
        + acc
        + machine,
    )


def _seed_goal(backend: str, fastest: pd.Series, seed: pd.DataFrame) -> dict[str, Any]:
    """An accelerator's fastest pipeline against the tutorial's ``seed`` on the same device."""
    goal = f"fastest pipeline >= {GOAL_SEED_SPEEDUP:g}x faster an epoch than the tutorial's seed on this device"
    if len(seed):
        speedup = float(seed["epoch_s"].iloc[0]) / float(fastest.epoch_s)
        met = speedup >= GOAL_SEED_SPEEDUP
        return _goal(
            backend,
            goal,
            met,
            f"{fastest.rung} {duration(fastest.epoch_s)} against "
            f"{seed['rung'].iloc[0]} {duration(seed['epoch_s'].iloc[0])}: {ratio(speedup)}"
            + ("" if met else f": missed by {ratio(GOAL_SEED_SPEEDUP / speedup)}"),
        )
    return _goal(
        backend,
        goal,
        None,
        "no seed epoch in this run (its DataLoader needs torch and "
        "torchvision: the bench skips it, saying why, where they are missing, as on a TPU host)",
    )


def _accelerator_goals(backend: str, runs: pd.DataFrame, rungs: pd.DataFrame) -> list[dict[str, Any]]:
    """An accelerator's two goals from its own run: its fastest pipeline against ``seed`` and against the floor."""
    fastest = runs.iloc[0]
    out = [_seed_goal(backend, fastest, runs[runs["rung"] == rung_name("seed")])]
    precision = str(fastest.precision) or "f32"
    goal = f"fastest pipeline within {GOAL_ACCELERATOR_FLOOR:g}x this device's floor at its precision"
    floor_rows = rungs[rungs["rung"] == f"floor, {precision}"]
    if floor_rows.empty:
        out.append(_goal(backend, goal, None, f"no {precision} GEMM in this run to set the floor"))
        return out
    at = floor_rows.iloc[0]
    floor, x = float(at.epoch_s), float(fastest.x_floor)
    text = (
        f"{fastest.rung} {duration(fastest.epoch_s)} = {ratio(x)} the {precision} floor ({duration(floor)} at "
        f"{flop_rate(float(at.gflop_per_s) * 1e9)}, {at.library})"
    )
    if x > GOAL_ACCELERATOR_FLOOR:
        text += f": missed by {ratio(x / GOAL_ACCELERATOR_FLOOR)}"
        alone = rungs[rungs["rung"] == STEP_GEMMS]
        if len(alone) and precision == "f32":
            matmuls = float(alone["epoch_s"].iloc[0])
            part = "compute" if matmuls / floor > GOAL_ACCELERATOR_FLOOR else "the rest of the epoch"
            text += (
                f"; the step's matrix products alone take {duration(matmuls)} ({ratio(matmuls / floor)} the "
                f"floor), the rest of the epoch {duration(max(0.0, float(fastest.epoch_s) - matmuls))}: "
                f"{part} holds it back"
            )
        else:
            text += (
                "; which part holds it back: this run has the step's products alone in f32 only; the "
                "pipeline's trace (`jaxmlp profile`) splits its epoch"
            )
    out.append(_goal(backend, goal, x <= GOAL_ACCELERATOR_FLOOR, text))
    return out


def goal_line(goal: Mapping[str, Any]) -> str:
    """``goal: met|MISSED|not measured: the numbers``."""
    state = "not measured" if goal["met"] is None else "met" if goal["met"] else "MISSED"
    return f"{goal['goal']}: {state}: {goal['text']}"
