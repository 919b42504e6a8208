"""Tracking's site (`jaxmlp track --site DIR`): static pages, replaced whole on every call, that need no network."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pandas as pd

from jaxmlp import registry, units
from jaxmlp.errors import JaxmlpError
from jaxmlp.report.escape import html_text
from jaxmlp.report.explain import explain_text
from jaxmlp.report.html import STYLE, cell_html
from jaxmlp.report.plots_track import plot_track
from jaxmlp.report.track_message import link, text_of
from jaxmlp.results.schema.explain import ExplainDocument
from jaxmlp.results.store import confined, layout
from jaxmlp.results.store.reading import read_document
from jaxmlp.results.store.replacing import replace_folder
from jaxmlp.results.sweep.track_answers import (
    EXPLANATIONS,
    INDEX,
    PINNED,
    PREVIOUS,
    Row,
    answer_row,
    answered_first,
    bands,
    in_order,
    newest,
    once,
    page_names,
    python_note,
    question,
    rows_band,
    same_comparison,
    sentence,
    series,
    when,
    why_none,
    within,
)

DATA = "track.csv"
"""The frame the site shows, as CSV, beside its pages."""
SITE_STYLE = STYLE + (
    "p.question{font-size:17px;margin:.5em 0}"
    "p.answer{font-size:15px;margin:.35em 0}p.answer.second{font-size:14px;color:#444;margin-top:0}"
    ".slower{color:#b00020;font-weight:600}.faster{color:#1b7a1b;font-weight:600}"
    ".inconclusive{color:#6a5d00;font-weight:600}.same{color:#225}nav.up{font-size:14px;margin-bottom:1em}"
    "h1{font-size:24px;margin-bottom:.3em}table.track{width:100%}table.track td.text{white-space:normal}"
    "pre.explained{white-space:pre-wrap;font-size:13px}"
)
VERDICT_CLASS = {"slower": "slower", "faster": "faster", "inconclusive": "inconclusive", "the same": "same"}


def _page(title: str, body: Sequence[str]) -> str:
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{html_text(title)}</title><style>{SITE_STYLE}</style></head><body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )


def _verdict(verdict: object) -> str:
    word = str(verdict)
    return f"<span class='{VERDICT_CLASS.get(word, '')}'>{html_text(word)}</span>"


def _coloured(said: str, verdict: object) -> str:
    """``said`` as HTML, its first use of the verdict's word coloured."""
    word = re.escape(html_text(str(verdict)))
    return re.sub(rf"\b{word}\b", lambda _: _verdict(verdict), html_text(said), count=1)


def _answer(row: Row | None, threshold: float, second: bool = False) -> str:
    """A comparison's sentence as a paragraph, its verdict word coloured."""
    if row is None:
        return ""
    return f"<p class='answer{' second' if second else ''}'>{_coloured(sentence(row, threshold), row['verdict'])}</p>"


def _question(row: Row | None, workload: str, threshold: float, page: str = "") -> str:
    """A series' question and answer in one line (`track_answers.question`), linking its ``page`` where given."""
    if row is None:
        return ""
    link = f" <a href='{html_text(page)}'>details</a>" if page else ""
    return f"<p class='question'>{_coloured(question(row, workload, threshold), row['verdict'])}{link}</p>"


def _cells(cells: Sequence[str], header: bool = False) -> str:
    tag = "th" if header else "td"
    return "<tr>" + "".join(f"<{tag}{c}</{tag}>" for c in cells) + "</tr>"


def _text(value: str, raw: bool = False) -> str:
    """A cell of words (left-aligned, wrapping); ``raw``: already HTML."""
    return f" class='text'>{value if raw else cell_html(value)}"


def _number(value: str) -> str:
    return f">{cell_html(value)}"


def _explanation(row: Row, link_base: str, explained: Mapping[str, str]) -> str:
    """A comparison's explanation cell: a link to its page in the site, else to its text, else why it has none."""
    folder = text_of(row.get("explanation")).rstrip("/")  # as `explanation_pages` keys it
    where = explained.get(folder) or link(folder, link_base)
    return _text(f"<a href='{html_text(where)}'>why</a>", raw=True) if where else _text(why_none(row))


def explanation_pages(
    frame: pd.DataFrame, results: Path, warn: Callable[[str], None] | None = None
) -> dict[str, tuple[str, str, str | None]]:
    """Each explanation the frame links to: its page name, page and HLO diff (or None); unreadable ones ``warn``."""
    warn = warn or _warn
    pages: dict[str, tuple[str, str, str | None]] = {}
    named = frame[["explanation", "folder"]] if {"explanation", "folder"} <= set(frame) else pd.DataFrame()
    for e, by in dict.fromkeys((text_of(e).rstrip("/"), text_of(f)) for e, f in named.itertuples(index=False)):
        if not e or e in pages:
            continue
        try:
            page = _explanation_page(results, e, results / by / layout.TRACK_FILE)
        except JaxmlpError as why:
            warn(f"skipped the explanation {e}: {why}")
            continue
        except Exception as why:  # a hostile file costs its own page, never the site (docs/reference/trust.md)
            warn(f"skipped the explanation {e}: {type(why).__name__}: {why}")
            continue
        if page is not None:
            pages[e] = page
    return pages


def _warn(line: str) -> None:
    print(f"jaxmlp track: warning: {line}", file=sys.stderr)


def _explanation_page(results: Path, folder: str, by: Path) -> tuple[str, str, str | None] | None:
    """An explanation's page (its name, the page, its diff's text), its files read only inside ``results``."""
    if confined.relative(folder) and not os.path.lexists(results / folder / layout.EXPLAIN_FILE):
        return None  # not (yet) in this folder: linked into the results folder instead
    where = confined.inside(results, f"{folder}/{layout.EXPLAIN_FILE}", by, "explanation")
    doc = read_document(where)
    if not isinstance(doc, ExplainDocument):
        return None
    name = f"{EXPLANATIONS}/{re.sub(r'[^A-Za-z0-9._]+', '-', folder).strip('-.') or '_'}"
    diff = None
    if doc.diff_file:
        diff = confined.read_text(confined.inside(where.parent, doc.diff_file, where, "diff_file"))
    title = f"Why {doc.workload} changed from jax {doc.a} to {doc.b}"
    body = [
        f"<nav class='up'><a href='../{INDEX}'>All tracked workloads</a></nav><h1>{html_text(title)}</h1>",
        f"<pre class='explained'>{html_text(explain_text(doc))}</pre>",
    ]
    if diff is not None:
        body.append(
            f"<p class='env'>The optimized HLO's whole diff ({html_text(doc.diff_lines)} lines): "
            f"<a href='{html_text(name.split('/')[-1])}.diff.txt'>{html_text(doc.diff_file)}</a></p>"
        )
    body.append(f"<p class='env'>Filed in the results folder as {html_text(folder)}/.</p>")
    return f"{name}.html", _page(f"jaxmlp track: {title}", body), diff


def comparisons_table(rows: pd.DataFrame, link_base: str, explained: Mapping[str, str]) -> str:
    """A series' comparisons against one kind of baseline: a row per release."""
    head = ["release", "Python", "against", "verdict", "ratio", "95% interval", "median", "baseline's median"]
    head += ["measured", "explanation"]
    body = [
        _cells(
            [f" class='text'>{cell_html(h)}" if i in (0, 1, 2, 3, 8, 9) else f">{h}" for i, h in enumerate(head)],
            header=True,
        )
    ]
    for row in rows.to_dict("records"):
        body.append(
            _cells(
                [
                    _text(str(row["release"])),
                    _text(str(row.get("python", ""))),
                    _text(str(row["baseline"])),
                    _text(_verdict(row["verdict"]), raw=True),
                    _number(units.ratio(row["ratio"])),
                    _number(units.interval(row["low"], row["high"])),
                    _number(units.duration(row["median_s"])),
                    _number(units.duration(row["baseline_median_s"])),
                    _text(when(row.get("measured_at", ""))),
                    _explanation(row, link_base, explained),
                ]
            )
        )
    return f"<div class='scroll'><table class='track'>{''.join(body)}</table></div>"


def series_page(
    machine: str, workload: str, rows: pd.DataFrame, threshold: float, link_base: str, explained: Mapping[str, str]
) -> str:
    """A machine's workload: its answers, its plot across releases and a table of each release's comparisons."""
    title, threshold = f"{workload} on {machine}", rows_band(rows, threshold)
    pin, prev = newest(rows, PINNED), newest(rows, PREVIOUS)
    body = [
        f"<nav class='up'><a href='{INDEX}'>All tracked workloads</a></nav><h1>{html_text(title)}</h1>",
        _question(answer_row(rows), workload, threshold),
        _answer(pin, threshold, second=True),
        "" if same_comparison(pin, prev) else _answer(prev, threshold, second=True),
        f"<p class='env'>{html_text(python_note(rows))}; a release is slower or faster only beyond "
        f"{within(threshold)} with its 95% interval past it, the same only with its whole interval within "
        "it, else inconclusive.</p>",
    ]
    pinned = rows[rows["against"] == PINNED]
    if not pinned.empty:
        alt = html_text(f"{title}: time and ratio to the pinned release by release")
        body.append(f"<img alt='{alt}' title='{alt}' src='data:image/png;base64,{plot_track(pinned, threshold)}'>")
    previous = once(rows)
    shared = len(previous) < int((rows["against"] == PREVIOUS).sum())  # pinned rows that were the previous too
    for against in (PINNED, PREVIOUS):
        part = rows[rows["against"] == PINNED] if against == PINNED else previous
        if not part.empty:
            bases = ", ".join(dict.fromkeys(part["baseline"].astype(str)))
            both = ", the previous one too where it was" if shared else ""
            heading = (
                f"Against the pinned release ({bases}){both}"
                if against == PINNED
                else "Against the release tracked before it"
            )
            body.append(f"<h2>{html_text(heading)}</h2>")
            body.append(comparisons_table(part, link_base, explained))
    others = rows[~rows["against"].isin([PINNED, PREVIOUS])]
    if not others.empty:
        body.append("<h2>Other comparisons</h2>" + comparisons_table(others, link_base, explained))
    return _page(f"jaxmlp track: {title}", body)


def overview_table(pages: Mapping[tuple[str, str], str], found: Mapping[tuple[str, str], pd.DataFrame]) -> str:
    """A row per machine's workload: its newest release, its verdicts against the pinned and the previous one."""
    head = ["workload", "newest", "against pinned", "ratio", "95% interval", "against the one before", "ratio", ""]
    body = [_cells([f" class='text'>{h}" if i in (0, 1, 2, 5) else f">{h}" for i, h in enumerate(head)], True)]
    for key, rows in found.items():
        pin, prev = newest(rows, PINNED), newest(rows, PREVIOUS)
        first, once_ = pin or prev or {}, same_comparison(pin, prev)  # the pinned release was the one before: once
        body.append(
            _cells(
                [
                    _text(key[1]),
                    _text(str(first.get("release", ""))),
                    _text(f"{_verdict(pin['verdict'])} ({html_text(str(pin['baseline']))})" if pin else "-", True),
                    _number(units.ratio(pin["ratio"]) if pin else units.MISSING),
                    _number(units.interval(pin["low"], pin["high"]) if pin else units.MISSING),
                    _text("the pinned one")
                    if once_
                    else _text(
                        f"{_verdict(prev['verdict'])} ({html_text(str(prev['baseline']))})" if prev else "-", True
                    ),
                    _number("" if once_ else units.ratio(prev["ratio"]) if prev else units.MISSING),
                    _text(f"<a href='{html_text(pages[key])}'>details</a>", raw=True),
                ]
            )
        )
    return f"<div class='scroll'><table class='track'>{''.join(body)}</table></div>"


def index_page(frame: pd.DataFrame, pages: Mapping[tuple[str, str], str], threshold: float) -> str:
    """The answers per machine and workload first, then a table of them, each row linking to its page."""
    found = series(frame)
    body = ["<h1>Is the newest jax/jaxlib release safe to take?</h1>"]
    if not found:
        body.append("<p class='answer'>Nothing tracked yet: no comparison in the results folder.</p>")
        return _page("jaxmlp track", body)
    times = sorted(frame["measured_at"].astype(str))
    body.append(
        f"<p class='env'>Each release measured side by side with the pinned release and with the one tracked before "
        f"it, in fresh processes; threshold {bands(frame, threshold)}; measured {html_text(when(times[0]))} to "
        f"{html_text(when(times[-1]))}. The data: <a href='{DATA}'>{DATA}</a>.</p>"
    )
    ordered = answered_first(found)
    for machine in sorted({m for m, _ in found}):
        mine = {key: found[key] for key in ordered if key[0] == machine}
        body.append(f"<section><h2>{html_text(machine)}</h2>")
        for (_, workload), rows in mine.items():
            body.append(_question(answer_row(rows), workload, threshold, pages[(machine, workload)]))
        body.append(overview_table(pages, mine) + "</section>")
    return _page("jaxmlp track", body)


def site_link_base(site: Path, results: Path) -> str:
    """The results folder as seen from the site's pages (``../reports/``), where explanations are linked."""
    return os.path.relpath(results, site).replace(os.sep, "/").rstrip("/") + "/"


def write_site(
    frame: pd.DataFrame,
    site: str | os.PathLike[str],
    *,
    threshold: float = registry.THRESHOLD,
    link_base: str | None = None,
    results: str | os.PathLike[str] | None = None,
    warn: Callable[[str], None] | None = None,
) -> list[Path]:
    """Write the site of ``frame`` as ``site``, swapped in whole; returns the files written, index first."""
    site = Path(site)
    if link_base is None:
        link_base = site_link_base(site, Path(results)) if results is not None else ""
    ordered = in_order(frame)
    found, pages = series(ordered), page_names(ordered)
    explanations = explanation_pages(ordered, Path(results), warn) if results is not None else {}
    explained = {folder: name for folder, (name, _, _) in explanations.items()}
    with replace_folder(site) as building:
        (building / INDEX).write_text(index_page(ordered, pages, threshold), encoding="utf-8")
        for key, rows in found.items():
            page = series_page(*key, rows, threshold, link_base, explained)
            (building / pages[key]).write_text(page, encoding="utf-8")
        for name, page, diff in explanations.values():
            (building / EXPLANATIONS).mkdir(exist_ok=True)
            (building / name).write_text(page, encoding="utf-8")
            if diff is not None:
                (building / f"{name.removesuffix('.html')}.diff.txt").write_text(diff, encoding="utf-8")
        ordered.to_csv(building / DATA, index=False)
    return [site / name for name in (INDEX, *pages.values(), *explained.values(), DATA)]
