"""Why two releases differ on a workload (``jaxmlp sweep explain A B``), and the other commands' explanations."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from jaxmlp.errors import JaxmlpError
from jaxmlp.measure import bisection
from jaxmlp.measure.sweep.settings import Matrix, Measuring
from jaxmlp.report.explain import explain_text
from jaxmlp.results.schema.explain import ExplainDocument
from jaxmlp.results.store.writing import ResultsStore, check_folder
from jaxmlp.results.sweep import explain_files  # `explain_files.explain` looked up when called (tests/conftest.py)
from jaxmlp.results.sweep.explain_files import EXPLAIN_PROCESSES, settings_of, spec_of
from jaxmlp.results.sweep.folders import FiledChange
from jaxmlp.units import count


@dataclass(frozen=True)
class ExplainOutcome:
    """An explanation filed: its folder and its document."""

    folder: Path
    document: ExplainDocument


def explain(*, a: str, b: str, workload: str, measuring: Measuring, matrix: Matrix, out: Path) -> ExplainOutcome:
    """Why releases ``a`` and ``b`` differ on ``workload``, filed into a new explain folder under ``out``, printed."""
    store = ResultsStore(check_folder(out, "--out"))
    print(
        f"Explaining {workload} from {a} to {b}: {count(matrix.processes, 'process', 'processes')} a "
        "release in rotating order, the first of each recording its program and a trace"
    )

    def done(label: str) -> None:
        print(f"  a process of {label} done", flush=True)

    doc, folder = explain_files.explain(measuring, a, b, workload, store.folder, matrix, print, done)
    print(f"\n{explain_text(doc, folder)}")
    return ExplainOutcome(folder, doc)


Explained = tuple[ExplainOutcome | None, str]
"""An explanation made (its folder and document) and "", or None and the one line saying why it could not be."""


def explain_change(folder: Path, change: FiledChange, matrix: Matrix) -> Explained:
    """One change a sweep, timeline or `jaxmlp track` found, explained with the sweep's settings into its folder."""
    spec = spec_of(settings_of(folder), change.workload)
    heading = f"Explaining {change.workload}: {change.before} -> {change.at} ({change.kind})"
    flagged = replace(matrix, xla_flags=(change.xla_flags,) if change.xla_flags else ())
    return explained(heading, folder, change.before, change.at, spec, folder, flagged)


def explain_answer(result: bisection.Bisection, measuring: Measuring, spec: str, matrix: Matrix, out: Path) -> None:
    """The bisection's answer explained (`jaxmlp sweep explain AFTER FIRST`), printed."""
    if result.status == "found" and result.first is not None and result.after is not None:
        heading = f"Explaining the answer: {result.after} -> {result.first}"
        explained(heading, measuring, result.after, result.first, spec, out, matrix)


def explained(
    heading: str, settings: Measuring | Path, before: str, after: str, workload: str, out: Path, matrix: Matrix
) -> Explained:
    """A command's own answer explained under ``heading``; a failure to explain is one line, not the command's."""
    print(f"\n{heading}")
    fewer = replace(matrix, processes=min(matrix.processes, EXPLAIN_PROCESSES))
    try:
        doc, folder = explain_files.explain(settings, before, after, workload, out, fewer, print)
    except JaxmlpError as e:
        print(f"could not explain it: {e}")
        return None, f"could not explain it: {e}"
    print(f"\n{explain_text(doc, folder)}")
    return ExplainOutcome(folder, doc), ""
