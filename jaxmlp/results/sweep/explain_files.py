"""`explain`: run an explanation of two releases and file it (docs/reference/results-files.md)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from jaxmlp.measure.environment import metadata
from jaxmlp.measure.programs import HLO_TEXT
from jaxmlp.measure.sweep import explain as running
from jaxmlp.measure.sweep.matrix import Say
from jaxmlp.measure.sweep.settings import Matrix, Measuring
from jaxmlp.measure.workload_names import workload_name
from jaxmlp.results.schema.explain import ExplainDocument
from jaxmlp.results.store import layout
from jaxmlp.results.store.writing import ResultsStore, write_gzip_new, write_json_new, write_new
from jaxmlp.results.sweep.explain import explanation, hlo_diff
from jaxmlp.results.sweep.files import PROCESS_FACTS, RunLog
from jaxmlp.results.tables import trace_events

EXPLAIN_PROCESSES = 3
"""Processes per release of an explanation made on its own: enough to see a change, not to test it."""


def settings_of(where: Measuring | Path) -> Measuring:
    """What to measure: given, or a sweep (or bisection probe) folder's own settings (its log's plan)."""
    if isinstance(where, Measuring):
        return where
    plan, _ = RunLog(Path(where)).read()
    return plan.runners[0].measuring


def spec_of(measuring: Measuring, workload: str) -> str:
    """The spec among ``measuring``'s that ``workload`` (a spec, or its results' name) names."""
    return next((spec for spec in measuring.specs if workload in (spec, workload_name(spec))), workload)


def explain(
    where: Measuring | Path,
    a: str,
    b: str,
    workload: str,
    out: Path | str = layout.RESULTS_DIR,
    matrix: Matrix | None = None,
    say: Say = print,
    tick: Callable[[str], None] | None = None,
) -> tuple[ExplainDocument, Path]:
    """Explain ``workload``'s change from ``a`` to ``b`` into
    a new ``explain-<time>/`` in ``out``; it and its folder."""
    measuring = dataclasses.replace(settings_of(where), program_facts=False, profile_dir=None)
    workload = spec_of(measuring, workload)
    matrix = matrix or Matrix(processes=EXPLAIN_PROCESSES)
    settings = running.Explain(a, b, workload)
    name = workload_name(workload)
    with ResultsStore(out).new_folder(layout.EXPLAIN) as folder:
        found = running.run(settings, measuring, matrix, folder.path / "traces", say, tick)
        texts: dict[str, str | None] = {}
        events: dict[str, pd.DataFrame | None] = {}
        for label in (a, b):
            first = found.processes[label][0]
            program = dict(first.workloads[name].program or {})
            texts[label] = program.pop(HLO_TEXT, None)
            flags = matrix.xla_flags[0] if matrix.xla_flags else ""
            if texts[label] is not None:
                file = layout.hlo_file(label, 1 if flags else 0, name)
                write_gzip_new(folder.path / file, str(texts[label]))
                program["hlo_file"] = file
            found.processes[label][0] = dataclasses.replace(
                first, workloads={**first.workloads, name: dataclasses.replace(first.workloads[name], program=program)}
            )
            xplanes = sorted((found.traces[label] / name).glob("plugins/profile/*/*.xplane.pb"))
            events[label] = trace_events(xplanes[-1]) if xplanes else None
        diff_file, lines = None, []
        text_a, text_b = texts[a], texts[b]
        if text_a is not None and text_b is not None:
            lines = hlo_diff(text_a, text_b, a, b)
            if lines:
                diff_file = layout.HLO_DIFF_FILE
                write_new(folder.path / diff_file, "\n".join(lines) + "\n")
        recorded = {
            **dataclasses.asdict(measuring),
            "workloads": [workload],
            "processes": matrix.processes,
            "xla_flags": list(matrix.xla_flags),
            "traced_calls": found.traced_calls,
            "jax": {label: p[0].metadata.get("jax") for label, p in found.processes.items()},
            "process_facts": {
                label: {k: p[0].metadata.get(k) for k in PROCESS_FACTS} for label, p in found.processes.items()
            },
        }
        doc = explanation(
            name, a, b, found.processes, texts, events, found.traced_calls, metadata(), recorded, diff_file, len(lines)
        )
        write_json_new(folder.path / layout.EXPLAIN_FILE, doc.to_json())
    return doc, folder.path
