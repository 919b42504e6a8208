"""What every table module shares: which benchmarks each table shows (`shows`), precision, fastest marks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from jaxmlp.registry import Benchmark

F = TypeVar("F", bound=Callable[..., Any])
SHOWN: dict[str, tuple[Benchmark, ...]] = {}
"""Each table function's name, and the benchmarks it shows."""

BEST, TIED = "fastest", "~fastest"


def shows(*benchmarks: Benchmark) -> Callable[[F], F]:
    """Declare the benchmarks a table shows."""

    def register(table: F) -> F:
        SHOWN[table.__name__] = benchmarks
        return table

    return register


def precision_of(value: object) -> str:
    """A row's precision: older rows (none recorded) were float32."""
    return "f32" if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)) else str(value)


def precisions(rows: pd.DataFrame) -> pd.Series:
    """Each row's precision (`precision_of`), f32 where the rows have no precision column."""
    if "precision" not in rows:
        return pd.Series("f32", index=rows.index, dtype=object)
    return rows["precision"].map(precision_of)


def mark_best(medians: pd.Series, q1: pd.Series, q3: pd.Series) -> pd.Series:
    """``fastest`` for the smallest median; ``~fastest`` where its IQR overlaps the best's; else empty."""
    marks = pd.Series("", index=medians.index, dtype=object)
    if medians.notna().any():
        best = int(np.nanargmin(medians.to_numpy(dtype=float)))
        marks[(q1 <= q3.iloc[best]) & (q3 >= q1.iloc[best])] = TIED
        marks.iloc[best] = BEST
    return marks
