"""Numbers in human units, one format for each quantity everywhere (the terminal, the report, progress lines)."""

from __future__ import annotations


def minutes(seconds: float) -> str:
    """A duration of minutes: ``2.5 min``."""
    return f"{seconds / 60:.1f} min"
