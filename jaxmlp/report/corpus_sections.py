"""The report's runs of the regression detector's own checks: its trials and the corpus of known regressions."""

from __future__ import annotations

from pathlib import Path

from jaxmlp.report.content import Run, Table
from jaxmlp.results.schema.corpus import CorpusDocument
from jaxmlp.results.schema.trials import TrialsDocument
from jaxmlp.results.store import layout
from jaxmlp.results.sweep.corpus_totals import (
    controls_line,
    corpus_table,
    injected_line,
    kind_line,
    kinds_table,
    totals,
)
from jaxmlp.results.sweep.views import trials_table
from jaxmlp.results.tables import partial_note


def trials_run(path: Path, doc: TrialsDocument, folder: Path | None = None) -> Run:
    """The regression detector's own check: the injected slowdown called slower, the A/A comparisons the same."""
    s, table = doc.settings, trials_table(doc)
    start = f"{s.processes_per_side} processes a side" + (" at first" if s.budget_minutes else "")
    note = (
        f"{layout.shown(path, folder)}: {rates_line(doc)}; {start}, workload {s.workload}, jax "
        f"{doc.metadata.get('jax')}, on {doc.metadata.get('host') or doc.metadata.get('machine_cpu')}"
        + partial_note(doc.metadata.get("partial") or None)
    )
    stamp = layout.stamp_in(path)
    return Run(
        f"{layout.shown_stamp(stamp)} · {layout.shown(path, folder)}", note, (Table("Trials", table),), (), stamp
    )


def rates_line(doc: TrialsDocument) -> str:
    """The trials' found rates with their 95% intervals, in a line."""
    said = {
        "injected_slower": f"injected x{1 + doc.settings.inject_slowdown:g} slower",
        "aa_same": "A/A the same",
        "aa_slower": "A/A slower",
    }
    return f"Found (noise {doc.settings.noise}): " + "; ".join(
        f"{said[k]} {r['found']:g} of {r['of']:g} (95% interval {r['low']:.0%} to {r['high']:.0%})"
        for k, r in doc.rates().items()
    )


def corpus_lines(doc: CorpusDocument) -> tuple[str, ...]:
    """The corpus's lines: its total, each kind, the injected slowdowns' found rates, the controls, each miss."""
    rates = (injected_line(doc.scores), controls_line(doc.scores))
    return (total_line(doc), *kind_lines(doc), *rates, *missed_lines(doc))


def total_line(doc: CorpusDocument) -> str:
    """The corpus in a line: its cases and kinds, where and at which commit they were measured, those that failed."""
    t = totals(doc.scores)
    failed = f"; failed: {', '.join(t['failed'])}" if t["failed"] else ""
    return f"Corpus: {t['cases']} case(s) of {len(t['kinds'])} kind(s), {measured_on(doc)}{failed}"


def measured_on(doc: CorpusDocument) -> str:
    """The machine and commit the scored run measured on, and the commit that re-scored it where one did."""
    m = doc.metadata
    cores = m.get("machine_cores") or m.get("cpu_count")
    machine = f"{m.get('machine_cpu') or m.get('cpu_model') or 'an unnamed CPU'}" + (
        f", {cores} cores" if cores else ""
    )
    said = f"measured on {machine} at commit {str(m.get('commit') or 'unknown')[:7]}"
    rescored = m.get("rescored")
    if isinstance(rescored, dict):
        said += f", re-scored at commit {str(rescored.get('commit') or 'unknown')[:7]} ({rescored.get('timestamp')})"
    return said


def kind_lines(doc: CorpusDocument) -> tuple[str, ...]:
    """A line a kind of case, each count over the cases it applies to."""
    return tuple(kind_line(k, v) for k, v in totals(doc.scores)["kinds"].items())


def missed_lines(doc: CorpusDocument) -> tuple[str, ...]:
    """A line for each case missed or failed: what, and why."""
    return tuple(f"{s.case.name}: {'; '.join(s.why)}" for s in doc.scores if s.why)


def corpus_run(path: Path, doc: CorpusDocument, folder: Path | None = None) -> Run:
    """A corpus run: its total and what was missed and why, then a row a case."""
    lines = corpus_lines(doc)
    partial = partial_note(doc.metadata.get("partial") or None)
    note = f"{layout.shown(path, folder)}{partial}: " + "; ".join(lines)
    stamp = layout.stamp_in(path)
    label = f"{layout.shown_stamp(stamp)} · {layout.shown(path, folder)}" + (" · partial" if partial else "")
    tables = (Table("Each kind", kinds_table(doc.scores)), Table("Each case", corpus_table(doc.scores)))
    return Run(label, note, tables, (), stamp)
