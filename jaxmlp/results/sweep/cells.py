"""What a sweep's ``cells.json`` says: the cells not measured or warned about, and each release's take on its flags."""

from __future__ import annotations

import pandas as pd

from jaxmlp import registry
from jaxmlp.results.schema.sweep import Cell, CellsDocument


def flags_ignored(cell: Cell) -> bool:
    """Whether a measured cell's release ignored its XLA flags, so its samples are the release's without them."""
    return bool(cell.xla_flags) and cell.status == "ok" and "no longer supported" in cell.note


def ignored_cells(doc: CellsDocument | None) -> set[tuple[str, str]]:
    """(release, XLA flags) of each cell whose release ignored its flags; none without a ``cells.json``."""
    return {(c.label, c.xla_flags) for c in doc.cells if flags_ignored(c)} if doc is not None else set()


def ignored_words(step: pd.Series, ignored: set[tuple[str, str]]) -> str:
    """Where a release of a step ignored its XLA flags, which, and what the ratio then compares; "" where none did."""
    flags = step.get("xla_flags")
    if not (isinstance(flags, str) and flags):
        return ""
    old, new = ((step[side], flags) in ignored for side in ("from", "to"))
    if not (old or new):
        return ""
    if old and new:
        return f"both releases ignore the flag: this is {step['from']} against {step['to']}, both without it"
    took, dropped = (step["to"], step["from"]) if old else (step["from"], step["to"])
    return f"{dropped} ignores the flag: this is {took} with it against {dropped} without it"


def with_ignored_flags(steps: pd.DataFrame, doc: CellsDocument | None) -> pd.DataFrame:
    """`sweep_steps` with a ``flags`` column where a release that ignored its XLA flags is compared."""
    ignored = ignored_cells(doc)
    said = [ignored_words(row, ignored) for _, row in steps.iterrows()] if ignored and len(steps) else []
    return steps.assign(flags=said) if any(said) else steps


def _cell_status(cell: Cell) -> str:
    if cell.status != "ok":
        return cell.status
    return "measured, its XLA flags ignored" if flags_ignored(cell) else "measured; XLA warned"


def cells_table(doc: CellsDocument) -> pd.DataFrame:
    """A sweep's cells that did not run, or that XLA warned about: the release, its flags, what became of it."""
    rows = [(c.label, c.xla_flags, _cell_status(c), c.note) for c in doc.cells if c.status != "ok" or c.note]
    return pd.DataFrame(rows, columns=["release", "xla_flags", "status", "xla_said"])


def flag_support(cell: Cell) -> str:
    """Whether a cell's release took its XLA flags, in words (``accepted``, ``ignored: ...``, ``unknown in V``, ...)."""
    if cell.status == "ok":
        return f"ignored: {cell.note}" if flags_ignored(cell) else "accepted"
    return cell.status.split(" (", 1)[0] if cell.status.startswith("flag unknown") else cell.status


def flags_table(doc: CellsDocument) -> pd.DataFrame:
    """Whether each release accepts each ``--xla-flags`` value, a row a value; empty without XLA flags."""
    flagged = [c for c in doc.cells if c.xla_flags]
    if not flagged:
        return pd.DataFrame()
    releases = sorted(dict.fromkeys(c.label for c in flagged), key=registry.version_key)
    values = list(dict.fromkeys(c.xla_flags for c in flagged))
    by = {(c.xla_flags, c.label): flag_support(c) for c in flagged}
    return pd.DataFrame(
        [[value, *(by.get((value, r), "-") for r in releases)] for value in values], columns=["xla_flags", *releases]
    )
