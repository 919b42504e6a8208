"""The answer of any result jaxmlp writes (``jaxmlp summary``), as text or Markdown, and the file saved; every result
under a folder rendered into a new report folder (``jaxmlp report``), its answers printed first."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from jaxmlp.errors import JaxmlpError
from jaxmlp.flows.progress import warn_skipped
from jaxmlp.report.summaries import folder_summary, newest_of_each, summaries
from jaxmlp.report.text import render
from jaxmlp.report.write import write_report
from jaxmlp.results import history
from jaxmlp.results.findings import findings
from jaxmlp.results.schema import TYPED, Document
from jaxmlp.results.schema.bench import BenchmarkDocument
from jaxmlp.results.schema.fields import DamagedField
from jaxmlp.results.schema.sweep import CellsDocument
from jaxmlp.results.schema.train import TrainDocument
from jaxmlp.results.schema.tta import TtaDocument
from jaxmlp.results.store import index
from jaxmlp.results.store.frames import Results, load, load_indexed, results
from jaxmlp.results.store.memo import IndexMemo
from jaxmlp.results.store.reading import ReadDocument, Scan, read_document
from jaxmlp.results.store.writing import ResultsStore, check_folder, check_new_folder
from jaxmlp.results.sweep import tracked
from jaxmlp.results.tables import capture_summary

READS = (
    "a pytest-benchmark or `jaxmlp scaling` file, a `jaxmlp train --json` or `jaxmlp tta` file, a sweep, "
    "bisect or detector folder (or a file in one), or a folder of results such as reports/"
)


def summarize(
    *, path: Path, format: str = "text", everything: bool = False, save: str | None = None, name: str | None = None
) -> Path | None:
    """The summary of the result or folder at ``path`` printed in ``format`` (``everything``: every table in full);
    with ``save``, one run's file copied into that folder (as ``name``), where it went returned."""
    if not path.exists():
        raise JaxmlpError(f"{path} does not exist: give {READS}")
    if name is not None:
        _check_name(name, save)
    document = None if path.is_dir() else _document(path)
    if save:  # before any work, and before making a folder it would leave empty
        if not _saved(document):
            what = "a folder" if document is None else f"a {_kind(document)} file"
            raise JaxmlpError(
                f"--save files one benchmark, scaling, training or time-to-accuracy file, and {path} is {what}: "
                "leave --save out (its command filed it where it wrote it)"
            )
        check_folder(save, "--save")
    found, folder = _results(path, document)
    shown = summaries(found, folder, tracking=document is None)
    if not shown:
        if isinstance(document, TrainDocument):
            raise JaxmlpError(f"{path}: holds no epoch records; did `jaxmlp train --json` finish an epoch?")
        if document is not None:
            raise JaxmlpError(f"{path}: holds no benchmarks; did the benchmark run select any?")
        raise JaxmlpError(f"{path}: holds no results: give {READS}")
    if document is None and len(shown) > 1:  # a folder of many: its findings first, as the report opens
        memo = IndexMemo(folder, "jaxmlp summary")  # what was computed before (changes, comparisons): kept
        past = history.of(found, memo)
        print(render((folder_summary(findings(found, (), folder, past, memo), shown, folder),), format))
        if everything:
            print("\n\n" + render(newest_of_each(shown, folder), format, True))
    else:
        print(render(newest_of_each(shown, folder), format, everything))
    return ResultsStore(save).save(document, name) if save and document is not None else None


def _saved(document: Document | None) -> bool:
    """Whether ``--save`` files ``document``: one run's file (a sweep's, a bisection's... live in their folders)."""
    if isinstance(document, BenchmarkDocument):
        return not document.is_sweep
    return isinstance(document, (TrainDocument, TtaDocument))


def _kind(document: Document) -> str:
    """What a result file is, in words."""
    if isinstance(document, BenchmarkDocument) and document.is_sweep:
        return "sweep"
    return {v: k for k, v in TYPED.items()}.get(type(document), "results").replace("-", " ")


def _check_name(name: str, save: str | None) -> None:
    """Before any work: ``--name`` is a plain file name, given with ``--save``."""
    if not save:
        raise JaxmlpError(f"--name {name!r} names the file --save writes: give --save DIR too, or leave --name out")
    if name in ("", ".", "..") or any(sep in name for sep in ("/", os.sep, os.altsep or "/")):
        raise JaxmlpError(
            f"--name {name!r} must be a plain file name (no folder in it), such as bench-mine.json: "
            "give the folder with --save"
        )


def _document(path: Path) -> Document:
    try:
        return read_document(path)
    except DamagedField:  # a results file with a damaged field: its line names the field and the fix
        raise
    except JaxmlpError as e:
        raise JaxmlpError(f"{e} (`jaxmlp summary` reads {READS})") from None


def _results(path: Path, document: Document | None) -> tuple[Results, Path]:
    """What to summarize, and the folder its paths are shown from: a folder, a sweep file's sweep, or one document."""
    if document is None:
        scan = index.scan(path, "jaxmlp summary")
        warn_skipped(scan.skipped, "summary")
        return results(scan), path
    if isinstance(document, CellsDocument) or (isinstance(document, BenchmarkDocument) and document.is_sweep):
        return load(ResultsStore(path.parent)), path.parent
    return results(Scan(path.parent, (ReadDocument(path, document),), (), ())), path.parent


def report(*, results: str, out: str | None = None) -> Sequence[Path]:
    """The report of every result under ``results`` written into the new folder ``out`` (None: a new one beside
    them); its files."""
    if out:  # before reading anything
        check_new_folder(out, "--out")
    store = ResultsStore(results)
    found = load_indexed(store, "jaxmlp report")
    warn_skipped(found.skipped, "report")
    traces = [capture_summary(xplane) for xplane in found.captures]
    tracked_calls, _ = tracked.history(store.folder)
    if found.runs.empty and not traces and not found.trials and not found.bisections and not tracked_calls:
        raise JaxmlpError(
            f"no results in {results}: run `nox -s bench` (or jaxmlp train --json, or jaxmlp track) first"
        )
    memo = IndexMemo(store.folder, "jaxmlp report")  # what was computed before (changes, comparisons): kept
    past = history.of(found, memo)  # the findings' and the report's
    answers = findings(found, traces, store.folder, past, memo)
    paths = write_report(found, store, traces, Path(out) if out else None, answers, past)
    for finding in answers:  # the answers first, as the page opens with them
        if finding.answered:
            print(finding.line())
    n_files = found.runs["file"].nunique() if len(found.runs) else 0
    print(
        f"\nReport of {len(found.runs)} rows from {n_files} files and {len(traces)} traces: "
        + ", ".join(str(p) for p in paths)
    )
    return paths
