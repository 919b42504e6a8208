"""``jaxmlp summary PATH``: the answer of any result jaxmlp writes, as text or Markdown, and ``--save``."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from jaxmlp.cli import options
from jaxmlp.cli.report import warn_skipped
from jaxmlp.errors import JaxmlpError
from jaxmlp.report.summaries import folder_summary, newest_of_each, summaries
from jaxmlp.report.text import FORMATS, render
from jaxmlp.results import history
from jaxmlp.results.findings import findings
from jaxmlp.results.schema import TYPED, Document
from jaxmlp.results.schema.bench import BenchmarkDocument
from jaxmlp.results.schema.fields import DamagedField
from jaxmlp.results.schema.sweep import CellsDocument
from jaxmlp.results.schema.train import TrainDocument
from jaxmlp.results.schema.tta import TtaDocument
from jaxmlp.results.store import index, layout
from jaxmlp.results.store.frames import Results, load, results
from jaxmlp.results.store.memo import IndexMemo
from jaxmlp.results.store.reading import ReadDocument, Scan, read_document
from jaxmlp.results.store.writing import ResultsStore, check_folder

READS = (
    "a pytest-benchmark or `jaxmlp scaling` file, a `jaxmlp train --json` or `jaxmlp tta` file, a sweep, "
    "bisect or detector folder (or a file in one), or a folder of results such as reports/"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Print the answer of a result: a benchmark run's speed-ups, best worker count and pipeline ladder; a "
        "sweep's verdict per release (median, ratio to the previous release, 95% interval, p, slower, faster, "
        "the same or inconclusive); a bisection's probes and answer; training runs; the detector's trials; of a "
        "folder of many, the answer to each question from the newest run that can answer it, per machine (--all: "
        "then the newest result of each kind in full)."
    )
    options.add(
        parser,
        options.own("file", f"what to summarize: {READS}", metavar="PATH"),
        options.own(
            "--format",
            "text for a terminal, md for Markdown "
            "(GitHub tables: a pull request, a CI step summary) (default: %(default)s)",
            "text",
            choices=FORMATS,
        ),
        options.own(
            "--all",
            "every table in full, the long ones "
            "too (peak memory, every GEMM); of a folder, the newest result of each kind in full",
            action="store_true",
            dest="everything",
        ),
        options.own(
            "--save",
            "also copy a benchmark, scaling, training or time-to-accuracy file, atomically "
            "and under a new name (never over another run), into DIR",
            metavar="DIR",
        ),
        options.own("--name", f"the saved file's name (default: {layout.BENCH}-<UTC time of the run>-<backends>.json)"),
    )


def run(args: argparse.Namespace) -> int:
    path = Path(args.file)
    if not path.exists():
        raise JaxmlpError(f"{path} does not exist: give {READS}")
    if args.name is not None:
        _check_name(args.name, args.save)
    document = None if path.is_dir() else _document(path)
    if args.save:  # before any work, and before making a folder it would leave empty
        if not _saved(document):
            what = "a folder" if document is None else f"a {_kind(document)} file"
            raise JaxmlpError(
                f"--save files one benchmark, scaling, training or time-to-accuracy file, and {path} is {what}: "
                "leave --save out (its command filed it where it wrote it)"
            )
        check_folder(args.save, "--save")
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
        print(render((folder_summary(findings(found, (), folder, past, memo), shown, folder),), args.format))
        if args.everything:
            print("\n\n" + render(newest_of_each(shown, folder), args.format, True))
    else:
        print(render(newest_of_each(shown, folder), args.format, args.everything))
    if args.save and document is not None:
        print(f"\nSaved {ResultsStore(args.save).save(document, args.name)}")
    return 0


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
