"""The table of cited runs in ``reports/README.md``: each run's name and file, and the pages its row says cite it.

A new reference run is one row changed there; the docs build checks the "cited by" column against the pages that
really read each run (`citation_problems`).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUNS_TABLE = ROOT / "reports" / "README.md"


def _rows(table: Path) -> list[list[str]]:
    """The ``| `name` | `file` | what | cited by |`` rows of the table in reports/README.md, as cells."""
    rows = []
    for line in table.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0].startswith("`") and cells[1].startswith("`"):
            rows.append(cells)
    return rows


def runs(table: Path = RUNS_TABLE) -> dict[str, Path]:
    """The cited runs, by name: each row's file."""
    return {cells[0].strip("`"): table.parent / cells[1].strip("`") for cells in _rows(table)}


def cited_by(table: Path = RUNS_TABLE) -> dict[str, set[str]]:
    """The pages each run's row says cite it (its last column's `docs/...` paths), by name."""
    return {cells[0].strip("`"): set(re.findall(r"`docs/([^`]+)`", cells[-1])) for cells in _rows(table)}


def citation_problems(table: Path, used: dict[str, set[str]]) -> list[str]:
    """Where the table's "cited by" column differs from the pages that read each run (``used``)."""
    problems = []
    shown = table.relative_to(ROOT) if table.is_relative_to(ROOT) else table
    for name, said in sorted(cited_by(table).items()):
        really = used.get(name, set())
        if said != really:
            problems.append(
                f"{shown}: run {name!r} is cited by {sorted(really) or 'no page'}, "
                f"its row says {sorted(said) or 'none'}"
            )
    return problems
