"""The report as Markdown (summary.md): the overview's answers, then each section's newest run and the earlier runs'
lines (their tables are in the HTML page, folded), in the same words and units as the page."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from jaxmlp.report.answers import Answer
from jaxmlp.report.display import readable
from jaxmlp.report.sections import ReportSection


def markdown_table(table: pd.DataFrame) -> str:
    """A GitHub Markdown table of ``table``'s cells as they are (format them first: `jaxmlp.report.display`)."""

    def cell(value: object) -> str:
        if value is None or value is pd.NA or (isinstance(value, float) and pd.isna(value)):
            return "-"
        if isinstance(value, float):
            return f"{value:,.4g}"
        return str(value).replace("|", "\\|")

    lines = ["| " + " | ".join(map(str, table.columns)) + " |", "|" + "---|" * len(table.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in table.itertuples(index=False)]
    return "\n".join(lines)


def render(sections: Sequence[ReportSection], answers: Sequence[Answer] = ()) -> str:
    out = ["# jaxmlp report", ""]
    if answers:
        out += ["## Overview", ""]
        out += [f"- **{a.question}**: {a.text} ([details](#{a.anchor}))" for a in answers]
        out.append("")
    for section in sections:
        out += [f"## {section.title}", ""]
        if section.note:
            out += [section.note, ""]
        for run in section.shown:
            out += [f"### {run.label}", ""]
            if run.note:
                out += [run.note, ""]
            for table in run.tables:
                out += [f"**{table.caption}**", "", markdown_table(readable(table.frame, table.formats)), ""]
        if section.earlier:
            out += [f"Earlier runs (tables in index.html): {len(section.earlier)}", ""]
            out += [f"- {run.label}" for run in section.earlier]
            out.append("")
    return "\n".join(out)
