"""Which run each figure of a benchmark answer comes from, and what an answer says of older or other runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from jaxmlp import registry
from jaxmlp.results import tables
from jaxmlp.results.findings.select import OLDER, runs_of
from jaxmlp.results.store import layout
from jaxmlp.results.tables import FLOOR_RUNG


def runs_read(rows: pd.DataFrame, folder: Path | None) -> str:
    """The runs rows come from, newest first: ``bench-…-tpu.json (12-06 01:20); bench-…-tpu.json (12-05 20:46)``."""
    stamps = rows.drop_duplicates("file").set_index("file")["timestamp"]
    return "; ".join(layout.cited(f, folder, layout.stamp_in(f) or layout.stamp(str(stamps[f]))) for f in runs_of(rows))


def older_note(rows: pd.DataFrame) -> str:
    """What an answer says of its figures from an older environment or other settings; "" where none is."""
    if OLDER not in rows:
        return ""
    older = rows[rows[OLDER].astype(bool)]
    said = [
        f"from {env}: {', '.join(Path(f).name for f in runs_of(part))}"
        for env, part in older.groupby(OLDER, sort=False)
    ]
    return f" Figures {'; '.join(said)}." if said else ""


def param_text(value: Any) -> str:
    """A parameter as a name spells it (``2``, not ``2.0``)."""
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def run_of(rows: pd.DataFrame, bench: registry.Benchmark, **params: Any) -> str:
    """The run (its file's name) of the newest row of ``bench`` with ``params``; "" where none is."""
    mine = rows[rows["test"] == bench.id]
    for key, value in params.items():
        if key in mine:
            column = mine[key].astype(object).where(mine[key].notna(), bench.defaults.get(key, ""))
            mine = mine[column.map(param_text) == param_text(value)]
    return Path(str(mine["file"].iloc[0])).name if len(mine) else ""


def cite(rows: pd.DataFrame, bench: registry.Benchmark, **params: Any) -> str:
    """`` [bench-….json]``: the run a figure comes from, where the answer rests on several runs; else ""."""
    source = run_of(rows, bench, **params) if rows["file"].nunique() > 1 else ""
    return f" [{source}]" if source else ""


def epoch_source(part: pd.DataFrame, row: Any) -> str:
    return run_of(
        part, registry.EPOCH, backend=row.backend, pipeline=row.pipeline, workers=row.workers, precision=row.precision
    )


def floor_source(part: pd.DataFrame, floor: Any) -> str:
    """The run of a floor's product: a GEMM row of its library and precision, else the float32 matmul."""
    gemm = run_of(part, registry.GEMM, backend=floor.backend, library=floor.library, precision=floor.precision)
    return gemm or run_of(part, registry.MATMUL, backend=floor.backend)


def ladder_run(part: pd.DataFrame, row: Any) -> str:
    """The run of a pipeline ladder's row: its floor's product, the step's matmuls or its epoch."""
    if str(row.rung).startswith(FLOOR_RUNG):
        return floor_source(part, row)
    if row.rung == tables.STEP_GEMMS:
        return run_of(part, registry.STEP_GEMMS, backend=row.backend)
    return epoch_source(part, row)


def loader_run(part: pd.DataFrame, row: Any) -> str:
    """The runs of a loader ladder's row: its input alone's and its epoch's."""
    said = [
        run_of(part, registry.LOADER, pipeline=row.pipeline, workers=row.workers) if pd.notna(row.loader_s) else "",
        epoch_source(part, row) if pd.notna(row.epoch_s) else "",
    ]
    return "; ".join(dict.fromkeys(s for s in said if s))


def with_runs(table: pd.DataFrame, part: pd.DataFrame, run: Any) -> pd.DataFrame:
    """``table`` with a ``run`` column (each row's file) where ``part`` spans several runs, else as it is."""
    if table.empty or part["file"].nunique() < 2:
        return table
    return table.assign(run=[run(part, row) for row in table.itertuples()])


def epoch_cite(part: pd.DataFrame, row: Any) -> str:
    """`cite` of a ladder row's epoch."""
    return cite(
        part, registry.EPOCH, backend=row.backend, pipeline=row.pipeline, workers=row.workers, precision=row.precision
    )


def floor_cite(part: pd.DataFrame, floor: Any) -> str:
    """`cite` of a floor's product (`floor_source`)."""
    source = floor_source(part, floor) if part["file"].nunique() > 1 else ""
    return f" [{source}]" if source else ""
