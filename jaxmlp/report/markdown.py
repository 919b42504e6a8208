"""The report as Markdown (summary.md): its sections' notes and tables; the plots are the HTML page's."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from jaxmlp.report.sections import ReportSection


def markdown_table(table: pd.DataFrame) -> str:
    def cell(value: object) -> str:
        if value is None or value is pd.NA or (isinstance(value, float) and pd.isna(value)):
            return "-"
        if isinstance(value, float):
            return f"{value:,.4g}"
        return str(value)

    lines = ["| " + " | ".join(map(str, table.columns)) + " |", "|" + "---|" * len(table.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in table.itertuples(index=False)]
    return "\n".join(lines)


def render(sections: Sequence[ReportSection]) -> str:
    out = ["# jaxmlp report", ""]
    for section in sections:
        out += [f"## {section.title}", "", section.note, ""]
        for caption, table in section.tables:
            out += [f"**{caption}**", "", markdown_table(table), ""]
    return "\n".join(out)
