"""The report's runs of the regression detector's own checks: its trials (injected slowdowns, A/A) and the corpus of
known regressions (`jaxmlp sweep corpus`)."""

from __future__ import annotations

from pathlib import Path

from jaxmlp.report.content import Run, Table
from jaxmlp.results.schema.corpus import CorpusDocument
from jaxmlp.results.schema.trials import TrialsDocument
from jaxmlp.results.store import layout
from jaxmlp.results.sweep.corpus import corpus_table, totals
from jaxmlp.results.sweep.views import trials_table
from jaxmlp.results.tables import partial_note


def trials_run(path: Path, doc: TrialsDocument, folder: Path | None = None) -> Run:
    """The regression detector's own check: injected slowdowns caught, A/A comparisons flagged."""
    s, table = doc.settings, trials_table(doc)
    note = (
        f"{layout.shown(path, folder)}: injected {s.inject_slowdown:.0%} slowdown flagged in {doc.injected_flagged}/"
        f"{len(doc.trials)} trials (median ratio {table['injected_ratio'].median():.3f}); A/A flagged in "
        f"{doc.aa_flagged}/{len(doc.trials)} (median ratio {table['aa_ratio'].median():.3f}); "
        f"{s.processes_per_side} processes a side, workload {s.workload}, jax {doc.metadata.get('jax')}, host "
        f"{doc.metadata.get('host')}" + partial_note(doc.metadata.get("partial") or None)
    )
    stamp = layout.stamp_in(path)
    return Run(
        f"{layout.shown_stamp(stamp)} · {layout.shown(path, folder)}", note, (Table("Trials", table),), (), stamp
    )


def corpus_lines(doc: CorpusDocument) -> tuple[str, ...]:
    """The corpus's total in a line, then a line for each case missed or failed (what, and why)."""
    t = totals(doc.scores)
    parts = [
        f"{name} {t[key][0]} of {t[key][1]}"
        for key, name in (
            ("found", "found"),
            ("in_band", "ratio in its band"),
            ("bisected", "bisected"),
            ("explained", "explained"),
            ("clean", "controls clean (shown the same)"),
        )
        if t[key][1]
    ]
    failed = f"; failed: {', '.join(t['failed'])}" if t["failed"] else ""
    lines = [f"Corpus: {t['cases']} case(s): {', '.join(parts) or 'nothing scored'}{failed}"]
    for s in doc.scores:
        if s.why:
            lines.append(f"{s.case.name}: {'; '.join(s.why)}")
    return tuple(lines)


"""The report's section of corpus runs (`jaxmlp sweep corpus`)."""


def corpus_run(path: Path, doc: CorpusDocument, folder: Path | None = None) -> Run:
    """A corpus run: its total and what was missed and why, then a row a case."""
    lines = corpus_lines(doc)
    partial = partial_note(doc.metadata.get("partial") or None)
    note = f"{layout.shown(path, folder)}{partial}: " + "; ".join(lines)
    stamp = layout.stamp_in(path)
    label = f"{layout.shown_stamp(stamp)} · {layout.shown(path, folder)}" + (" · partial" if partial else "")
    return Run(label, note, (Table("Each case", corpus_table(doc.scores)),), (), stamp)
