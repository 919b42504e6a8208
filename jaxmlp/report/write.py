"""Writing a report: summary.md, index.html, results.csv and samples.csv (and trace_ops.csv) into a NEW folder."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from jaxmlp.report import html, markdown
from jaxmlp.report.sections import build_sections
from jaxmlp.results import history
from jaxmlp.results.findings import Finding, findings
from jaxmlp.results.store import layout
from jaxmlp.results.store.frames import Results
from jaxmlp.results.store.writing import ResultsStore, write_new
from jaxmlp.results.tables import CaptureSummary

REPORT_FILES = ("summary.md", "index.html", "results.csv", "samples.csv")
TRACE_OPS_FILE = "trace_ops.csv"


def write_report(
    results: Results,
    store: ResultsStore,
    traces: Sequence[CaptureSummary] = (),
    out: Path | None = None,
    found: Sequence[Finding] | None = None,
    past: history.RunHistory | None = None,
) -> list[Path]:
    """Write the report into a NEW folder (``out``, else the store's next ``report-<time>``), whole or not."""
    past = history.of(results) if past is None else past
    answers = tuple(found) if found is not None else findings(results, traces, store.folder, past)
    sections = build_sections(results, traces, store.folder, answers, past)
    with store.new_folder(layout.REPORT, out) as folder:
        texts = [
            markdown.render(sections, answers),
            html.render(sections, answers),
            results.runs.to_csv(index=False),
            results.samples.to_csv(index=False),
        ]
        names = list(REPORT_FILES)
        if traces:
            ops = pd.concat([t.top_ops.assign(run=t.run, file=t.file) for t in traces], ignore_index=True)
            texts.append(ops.to_csv(index=False))
            names.append(TRACE_OPS_FILE)
        for name, text in zip(names, texts):
            write_new(folder.path / name, text)
    return [folder.path / name for name in names]
