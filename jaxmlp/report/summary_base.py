"""What every result's summary is (`Summary`): pure; `jaxmlp.report.text` renders one as plain text or Markdown."""

from __future__ import annotations

from typing import NamedTuple

import pandas as pd


class Summary(NamedTuple):
    """One result's answer: its title (none: not shown), lines before its tables (the verdict first), its tables (a
    caption and a table of strings or numbers each), lines after them, and its long tables (shown when all are
    asked for, else named in a line)."""

    title: str
    lines: tuple[str, ...] = ()
    tables: tuple[tuple[str, pd.DataFrame], ...] = ()
    closing: tuple[str, ...] = ()
    long: tuple[tuple[str, pd.DataFrame], ...] = ()
