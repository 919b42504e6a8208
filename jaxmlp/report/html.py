"""The report as one self-contained HTML page (index.html): the overview (a row per finding: question, answer, run,
link), a table of contents, then a section per subject: its answers, the tables and plots they rest on folded
(``<details>``), the earlier runs' labels folded. No network: styles
inline, plots as data: URIs. Nothing is wider than the page: a wide table scrolls inside its own box.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from jaxmlp.report import plots
from jaxmlp.report.content import Finding, ReportSection, Run, Table
from jaxmlp.report.display import readable

STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222;"
    "line-height:1.4}h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:2em}"
    "h3{font-size:15px;margin:1.2em 0 .3em}.scroll{overflow-x:auto;max-width:100%}"
    "table{border-collapse:collapse;margin:.3em 0 1.2em;font-size:13px}"
    "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right;white-space:nowrap}th{background:#f3f3f3}"
    "td:first-child,th:first-child{text-align:left}.env{color:#555;font-size:13px;overflow-wrap:anywhere}"
    "img{max-width:100%;height:auto;margin:.5em 0;display:block}"
    "details{margin:.4em 0;padding:.3em .6em;border:1px solid #e3e3e3;border-radius:4px}"
    "summary{cursor:pointer;font-size:14px;overflow-wrap:anywhere}"
    "table.overview{width:100%;table-layout:fixed}"
    "table.overview td,table.overview th{white-space:normal;text-align:left;vertical-align:top;font-size:13px}"
    "table.overview td.run{font-size:12px;color:#555;overflow-wrap:anywhere}"
    "p.answer{margin:.3em 0;font-size:14px}"
    ".unanswered{color:#777}nav ol{columns:2;font-size:14px}h3.run{font-size:14px;color:#335;overflow-wrap:anywhere}"
)


def _bold(text: str) -> str:
    """Escaped text, with Markdown's ``**bold**`` and ```code``` kept as such."""
    escaped = html.escape(text)
    escaped = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", escaped)
    return re.sub(r"`(.+?)`", r"<code>\1</code>", escaped)


def table_html(table: Table) -> str:
    """A table under its caption; a long one (`Table.long`) named only: its rows are in summary.md and
    results.csv."""
    if table.long:
        return (
            f"<p class='env'>{html.escape(table.caption)}: {len(table.frame)} rows, in summary.md and results.csv.</p>"
        )
    shown = readable(table.frame, table.formats)
    body = shown.to_html(index=False, border=0, escape=True)
    return f"<h3>{html.escape(table.caption)}</h3><div class='scroll'>{body}</div>"


def run_html(run: Run) -> str:
    out = [f"<p class='env'>{_bold(run.note)}</p>"] if run.note else []
    out += [table_html(t) for t in run.tables]
    for figure in run.plots:
        alt = html.escape(figure.alt)
        out.append(f"<img alt='{alt}' title='{alt}' src='data:image/png;base64,{plots.draw(figure)}'>")
    return "\n".join(out)


def overview_html(answers: Sequence[Finding]) -> str:
    """The overview: a row per finding (question, answer, the run it rests on, a link to its section)."""
    rows = []
    for a in answers:
        kind = " class='unanswered'" if not a.answered else ""
        rows.append(
            f"<tr{kind}><td>{html.escape(a.asked)}</td><td class='answer'>{_bold(a.answer)}</td>"
            f"<td class='run'>{html.escape(a.run)}</td><td><a href='#{a.anchor}'>details</a></td></tr>"
        )
    columns = "<colgroup><col style='width:17%'><col><col style='width:19%'><col style='width:5em'></colgroup>"
    return (
        f"<section id='overview'><h2>Overview</h2><table class='overview'>{columns}<tr><th>question</th>"
        f"<th>answer</th><th>run</th><th></th></tr>{''.join(rows)}</table></section>"
    )


def section_html(section: ReportSection) -> str:
    """A section: its answers, then its runs' tables and plots folded, then the earlier runs' labels folded."""
    out = [f"<section id='{section.anchor}'><h2>{html.escape(section.title)}</h2>"]
    out += [f"<p class='answer'><b>{html.escape(a.asked)}</b>: {_bold(a.answer)}</p>" for a in section.answers]
    if section.note:
        out.append(f"<p class='env'>{_bold(section.note)}</p>")
    for run in section.shown:
        if run.tables or run.plots or run.note:
            out.append(f"<details><summary>{html.escape(run.label or 'detail')}</summary>{run_html(run)}</details>")
    if section.earlier:
        items = "".join(f"<li>{html.escape(r.label)}</li>" for r in section.earlier)
        out.append(
            f"<details><summary>Earlier runs ({len(section.earlier)})</summary><ul class='env'>{items}</ul></details>"
        )
    out.append("</section>")
    return "".join(out)


def render(sections: Sequence[ReportSection], answers: Sequence[Finding] = ()) -> str:
    out = [
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<meta name='viewport' content='width=device-width, initial-scale=1'><title>jaxmlp report</title>"
        f"<style>{STYLE}</style></head><body><h1>jaxmlp report</h1>",
        overview_html(answers),
        "<nav><h2>Contents</h2><ol>"
        + "".join(f"<li><a href='#{s.anchor}'>{html.escape(s.title)}</a></li>" for s in sections)
        + "</ol></nav>",
    ]
    out += [section_html(section) for section in sections]
    out.append("</body></html>")
    return "\n".join(out)
