"""The report as one self-contained HTML page (index.html): its sections' notes, tables and plots (no network)."""

from __future__ import annotations

import html
from collections.abc import Sequence

from jaxmlp.report import plots
from jaxmlp.report.sections import ReportSection


def render(sections: Sequence[ReportSection]) -> str:
    style = (
        "body{font-family:system-ui,sans-serif;max-width:1000px;margin:2em auto;padding:0 1em;color:#222}"
        "table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:14px}"
        "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}th{background:#f3f3f3}"
        ".env{color:#555;font-size:13px}img{max-width:100%;margin:.5em 0}"
    )
    out = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>jaxmlp report</title><style>{style}</style>"
        "</head><body><h1>jaxmlp report</h1>"
    ]
    for section in sections:
        out.append(f"<h2>{html.escape(section.title)}</h2><p class='env'>{html.escape(section.note)}</p>")
        for caption, table in section.tables:
            out.append(f"<h3>{html.escape(caption)}</h3>")
            out.append(table.to_html(index=False, na_rep="-", float_format=lambda x: f"{x:,.4g}", border=0))
        for figure in section.plots:
            alt = html.escape(figure.alt)
            out.append(f"<img alt='{alt}' title='{alt}' src='data:image/png;base64,{plots.draw(figure)}'>")
    out.append("</body></html>")
    return "\n".join(out)
