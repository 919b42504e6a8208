"""The report as one self-contained HTML page (index.html): the overview, a table of contents, then a section per
subject with its tables and plots folded. No network: styles inline, plots as data: URIs."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

import pandas as pd

from jaxmlp.report import plots
from jaxmlp.report.content import Finding, ReportSection, Run, Table
from jaxmlp.report.display import readable
from jaxmlp.report.escape import html_text

STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222;"
    "line-height:1.4}h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:2em}"
    "h3{font-size:15px;margin:1.2em 0 .3em}.scroll{overflow-x:auto;max-width:100%}"
    "table{border-collapse:collapse;margin:.3em 0 1.2em;font-size:13px}"
    "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right;vertical-align:top;white-space:nowrap}"
    "th,td.text{white-space:normal}th{background:#f3f3f3;font-weight:600}td.text,th.text{text-align:left}"
    "td.long{min-width:10em}"
    "table.dense{font-size:12px}table.dense td,table.dense th{padding:3px 5px}"
    ".env{color:#555;font-size:13px;overflow-wrap:anywhere}"
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
    escaped = html_text(text)
    escaped = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", escaped)
    return re.sub(r"`(.+?)`", r"<code>\1</code>", escaped)


UNIT = r"(?:[kMGT]?FLOP/s|[kMGT]?/s|ns|µs|ms|s|min|B|KiB|MiB|GiB|TiB|GiB/s|MiB/s)"
LONG_WORD = 16
"""A word longer than this many characters may break after its separators (``-_/[=:+,``)."""
NUMBER = re.compile(rf"[×<>~+\-−]?[\d.,]+(?: ?(?:%|{UNIT}))?(?: \(IQR [^)]*\))?(?:–×?[\d.,]+)?")
"""A cell that is one number (``1.63 s (IQR 338 ms)``, ``×1.26``, ``97.1%``): it never wraps; words wrap."""


def cell_html(text: str) -> str:
    """A cell's text for a table that wraps: a number kept with its unit, a long word broken after its separators."""
    text = re.sub(rf"(?<=\d) (?={UNIT}(?![\w/]))", "\u00a0", text).replace("IQR ", "IQR\u00a0")
    words = []
    for word in text.split(" "):
        if len(word) > LONG_WORD:
            words.append("<wbr>".join(html_text(part) for part in re.split(r"(?<=[-_/\[=:+,])(?=.)", word)))
        else:
            words.append(html_text(word))
    return " ".join(words)


LONG_CELL = 40
"""A column with a cell longer than this many characters is at least `STYLE`'s ``td.long`` wide."""
DENSE_COLUMNS = 12
"""A table of this many columns or more is set a little smaller (`STYLE`'s ``table.dense``), so it fits the page."""


def _classes(cells: Sequence[str]) -> str:
    """A column's classes: ``text`` where it holds words rather than numbers, ``long`` where its text is long."""
    shown = [c for c in cells if c not in ("", "-")]
    text = bool(shown) and sum(not NUMBER.fullmatch(c) for c in shown) * 2 > len(shown)
    long = any(len(c) > LONG_CELL for c in shown)
    return " ".join(name for name, yes in (("text", text), ("long", long)) if yes)


def frame_html(shown: pd.DataFrame) -> str:
    """A table of strings (`display.readable`) as HTML, words left-aligned, long columns kept readable."""
    columns = [[str(v) for v in shown[c]] for c in shown.columns]
    kinds = [f" class='{c}'" if (c := _classes(cells)) else "" for cells in columns]
    head = "".join(f"<th{k}>{cell_html(str(c))}</th>" for c, k in zip(shown.columns, kinds))
    rows = "".join(
        "<tr>" + "".join(f"<td{k}>{cell_html(v)}</td>" for v, k in zip(row, kinds)) + "</tr>" for row in zip(*columns)
    )
    dense = " class='dense'" if len(columns) >= DENSE_COLUMNS else ""
    return f"<table{dense}><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def table_html(table: Table) -> str:
    """A table under its caption; a long one (`Table.long`) only named (its rows are in summary.md)."""
    if table.long:
        return f"<p class='env'>{html_text(table.caption)}: {len(table.frame)} rows, in summary.md and results.csv.</p>"
    body = frame_html(readable(table.frame, table.formats))
    return f"<h3>{html_text(table.caption)}</h3><div class='scroll'>{body}</div>"


def run_html(run: Run) -> str:
    out = [f"<p class='env'>{_bold(run.note)}</p>"] if run.note else []
    out += [table_html(t) for t in run.tables]
    for figure in run.plots:
        alt = html_text(figure.alt)
        out.append(f"<img alt='{alt}' title='{alt}' src='data:image/png;base64,{plots.draw(figure)}'>")
    return "\n".join(out)


def overview_html(answers: Sequence[Finding], anchors: Collection[str]) -> str:
    """The overview: a row per finding (question, answer, run, a link to its section in ``anchors``)."""
    rows = []
    for a in answers:
        kind = " class='unanswered'" if not a.answered else ""
        link = f"<a href='#{a.anchor}'>details</a>" if a.anchor in anchors else ""
        rows.append(
            f"<tr{kind}><td>{html_text(a.asked)}</td><td class='answer'>{_bold(a.answer)}</td>"
            f"<td class='run'>{html_text(a.run)}</td><td>{link}</td></tr>"
        )
    columns = "<colgroup><col style='width:17%'><col><col style='width:19%'><col style='width:5em'></colgroup>"
    return (
        f"<section id='overview'><h2>Overview</h2><table class='overview'>{columns}<tr><th>question</th>"
        f"<th>answer</th><th>run</th><th></th></tr>{''.join(rows)}</table></section>"
    )


def section_html(section: ReportSection) -> str:
    """A section: its answers, then its runs' tables and plots folded, then the earlier runs' labels folded."""
    out = [f"<section id='{section.anchor}'><h2>{html_text(section.title)}</h2>"]
    out += [f"<p class='answer'><b>{html_text(a.asked)}</b>: {_bold(a.answer)}</p>" for a in section.answers]
    if section.note:
        out.append(f"<p class='env'>{_bold(section.note)}</p>")
    for run in section.shown:
        if run.tables or run.plots or run.note:
            out.append(f"<details><summary>{html_text(run.label or 'detail')}</summary>{run_html(run)}</details>")
    if section.earlier:
        items = "".join(f"<li>{html_text(r.label)}</li>" for r in section.earlier)
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
        overview_html(answers, {s.anchor for s in sections}),
        "<nav><h2>Contents</h2><ol>"
        + "".join(f"<li><a href='#{s.anchor}'>{html_text(s.title)}</a></li>" for s in sections)
        + "</ol></nav>",
    ]
    out += [section_html(section) for section in sections]
    out.append("</body></html>")
    return "\n".join(out)
