"""The report as Markdown (summary.md): the overview as a table, then each section in the page's words."""

from __future__ import annotations

from collections.abc import Collection, Sequence

import pandas as pd

from jaxmlp.report.content import Finding, ReportSection
from jaxmlp.report.display import readable
from jaxmlp.report.escape import markdown_prose


def markdown_table(table: pd.DataFrame, made: Collection[str] = ()) -> str:
    """A GitHub Markdown table of ``table``'s formatted cells, each never markup of its own but in ``made`` columns."""

    def cell(value: object, column: object = None) -> str:
        if value is None or value is pd.NA or (isinstance(value, float) and pd.isna(value)):
            return "-"
        if isinstance(value, float):
            return f"{value:,.4g}"
        text = str(value) if column in made else markdown_prose(str(value).replace("\n", " "))
        return text.replace("|", "\\|")

    lines = ["| " + " | ".join(cell(c) for c in table.columns) + " |", "|" + "---|" * len(table.columns)]
    lines += [
        "| " + " | ".join(cell(v, c) for v, c in zip(row, table.columns)) + " |"
        for row in table.itertuples(index=False)
    ]
    return "\n".join(lines)


def overview(answers: Sequence[Finding], anchors: Collection[str]) -> str:
    """The overview as a Markdown table: question, answer, run, a link to its section (``anchors``)."""
    rows = pd.DataFrame(
        [(a.asked, a.answer, a.run, f"[details](#{a.anchor})" if a.anchor in anchors else "") for a in answers],
        columns=["question", "answer", "run", ""],
    )
    return markdown_table(rows, made=[""])


def anchor(name: str) -> str:
    """An anchor a link ``#name`` leads to, on a line of its own before a heading."""
    return f'<a id="{name}"></a>'


def render(sections: Sequence[ReportSection], answers: Sequence[Finding] = ()) -> str:
    out = ["# jaxmlp report", ""]
    if answers:
        out += ["## Overview", "", overview(answers, {s.anchor for s in sections if s.anchor}), ""]
    for section in sections:
        out += [anchor(section.anchor), ""] if section.anchor else []
        out += [f"## {section.title}", ""]
        out += [f"- **{markdown_prose(a.asked)}**: {markdown_prose(a.answer)}" for a in section.answers]
        out += [""] if section.answers else []
        if section.note:
            out += [markdown_prose(section.note), ""]
        for run in section.shown:
            if run.label:
                out += [f"### {markdown_prose(run.label)}", ""]
            if run.note:
                out += [markdown_prose(run.note), ""]
            for table in run.tables:
                caption = markdown_prose(table.caption)
                out += [f"**{caption}**", "", markdown_table(readable(table.frame, table.formats)), ""]
        if section.earlier:
            out += [f"Earlier runs: {len(section.earlier)}", ""]
            out += [f"- {markdown_prose(run.label)}" for run in section.earlier]
            out.append("")
    return "\n".join(out)
