"""What every result's summary is (`Summary`): pure; `jaxmlp.report.text` renders one as plain text or Markdown."""

from __future__ import annotations

from typing import NamedTuple

import pandas as pd


class Summary(NamedTuple):
    """One result's answer: its title (None: not shown), lines, tables, and long tables (shown with `--all`)."""

    title: str
    lines: tuple[str, ...] = ()
    tables: tuple[tuple[str, pd.DataFrame], ...] = ()
    closing: tuple[str, ...] = ()
    long: tuple[tuple[str, pd.DataFrame], ...] = ()
