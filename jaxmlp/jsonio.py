"""How jaxmlp's JSON holds numbers: NaN (a figure that could not be had) as null, read back as NaN."""

from __future__ import annotations

import math


def number(value: object) -> float:
    """A JSON number as a float; null (how NaN is stored) as NaN."""
    return math.nan if value is None else float(value)  # type: ignore[arg-type]


def json_number(value: float) -> float | None:
    """A float as JSON allows it: NaN as null."""
    return None if math.isnan(value) else value
