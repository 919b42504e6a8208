"""What a sweep's ``cells.json`` says beside its samples: the cells not measured or warned about, and whether each
release accepted, ignored or did not know each ``--xla-flags`` value."""

from __future__ import annotations

import pandas as pd

from jaxmlp import registry
from jaxmlp.results.schema.sweep import Cell, CellsDocument


def flags_ignored(cell: Cell) -> bool:
    """Whether a measured cell's release ignored its XLA flags (XLA warned that it no longer supports them): its
    samples are then the release's without them."""
    return bool(cell.xla_flags) and cell.status == "ok" and "no longer supported" in cell.note


def ignored_cells(doc: CellsDocument | None) -> set[tuple[str, str]]:
    """(release, XLA flags) of each cell whose release ignored its flags (`flags_ignored`); none without a
    ``cells.json``."""
    return {(c.label, c.xla_flags) for c in doc.cells if flags_ignored(c)} if doc is not None else set()


def ignored_words(step: pd.Series, ignored: set[tuple[str, str]]) -> str:
    """Where a release of a step (a `sweep_steps` row) ignored the step's XLA flags (``ignored``, `ignored_cells`):
    which, and what the ratio then sets against what; "" where neither did."""
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
    """`sweep_steps` with a ``flags`` column saying which steps set a release that ignored its XLA flags against
    one that took them (`ignored_words`), where any does."""
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
    """Whether a cell's release took its XLA flags, in words: ``accepted``, ``ignored: ...`` (XLA's warning that it
    no longer supports it), ``unknown in V``, or what else stopped its probe."""
    if cell.status == "ok":
        return f"ignored: {cell.note}" if flags_ignored(cell) else "accepted"
    if cell.status.startswith("flag unknown"):
        return cell.status.split(" (", 1)[0]
    return cell.status


def flags_table(doc: CellsDocument) -> pd.DataFrame:
    """For every ``--xla-flags`` value, whether each release accepts it: a row a value, a column a release (oldest
    first); empty for a sweep without XLA flags."""
    flagged = [c for c in doc.cells if c.xla_flags]
    if not flagged:
        return pd.DataFrame()
    releases = sorted(dict.fromkeys(c.label for c in flagged), key=registry.version_key)
    values = list(dict.fromkeys(c.xla_flags for c in flagged))
    by = {(c.xla_flags, c.label): flag_support(c) for c in flagged}
    return pd.DataFrame(
        [[value, *(by.get((value, r), "-") for r in releases)] for value in values], columns=["xla_flags", *releases]
    )
