"""Reading results: one file's document (`read_document`), or a whole results folder in one walk (`scan`)."""

from __future__ import annotations

import dataclasses
import json
import os
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from jaxmlp import errors
from jaxmlp.errors import JaxmlpError
from jaxmlp.results.schema import Document, parse
from jaxmlp.results.schema.bench import BenchmarkDocument
from jaxmlp.results.schema.bisect import BisectDocument
from jaxmlp.results.schema.explain import ExplainDocument
from jaxmlp.results.schema.roofline import CeilingsDocument, RooflineDocument
from jaxmlp.results.schema.sweep import CellsDocument
from jaxmlp.results.schema.train import TrainDocument
from jaxmlp.results.schema.trials import TrialsDocument
from jaxmlp.results.schema.tta import TtaDocument
from jaxmlp.results.schema.validation import ValidationDocument
from jaxmlp.results.store import layout

CAPTURE_SUFFIX = ".xplane.pb"
D = TypeVar(
    "D",
    BenchmarkDocument,
    TrainDocument,
    TrialsDocument,
    BisectDocument,
    CellsDocument,
    ExplainDocument,
    CeilingsDocument,
    RooflineDocument,
    ValidationDocument,
    TtaDocument,
)


@dataclass(frozen=True)
class ReadDocument:
    path: Path
    document: Document


@dataclass(frozen=True)
class Skipped:
    path: Path
    why: str

    def line(self, command: str) -> str:
        """The one warning line a command prints for it."""
        return f"{command}: warning: skipped {self.path}: {self.why}"


@dataclass(frozen=True)
class Summarised:
    """A run not read in full: its kind, its time as its file says it, and its history's points."""

    path: Path
    kind: str
    stamp: str
    points: Mapping[str, Any]  # `jaxmlp.results.store.rows.points`


@dataclass(frozen=True)
class Scan:
    """Everything one walk of a results folder found."""

    folder: Path
    documents: tuple[ReadDocument, ...]
    captures: tuple[Path, ...]  # profiler captures (.xplane.pb), oldest run folder first
    skipped: tuple[Skipped, ...]
    summarised: tuple[Summarised, ...] = ()  # older runs, from the folder's index

    def of(self, kind: type[D]) -> list[tuple[Path, D]]:
        """The documents of one kind, with their paths."""
        return [(f.path, f.document) for f in self.documents if isinstance(f.document, kind)]


MAX_RESULT_BYTES = 64 * 2**20
"""Larger than any results file jaxmlp writes: a file over it is skipped unread."""


def incomplete_sweep(path: str | os.PathLike[str]) -> Path | None:
    """The sweep folder ``path`` is (or is a file of) if that sweep was stopped before its last round, else None."""
    path = Path(path)
    for folder in (path, path.parent):
        if (folder / layout.INCOMPLETE_FILE).is_file():
            return folder
    return None


def _read_json(path: Path) -> object:
    if not path.exists():
        raise JaxmlpError(f"{path} does not exist: give a results file (or a folder of them)")
    try:
        status = path.stat()
        if not stat.S_ISREG(status.st_mode):  # a link to a device, a FIFO, /dev/stdin: never read (it may block)
            raise JaxmlpError(f"{path}: not a regular file; is it a results file?")
        if (size := status.st_size) > MAX_RESULT_BYTES:
            raise JaxmlpError(
                f"{path}: {size / 2**20:,.0f} MiB, larger than any results file "
                f"({MAX_RESULT_BYTES // 2**20} MiB at most); is it a results file?"
            )
        with path.open("rb") as f:
            start = f.read(4096).lstrip()
        if start and not start.startswith(b"{"):  # every results file is one JSON object
            raise JaxmlpError(f"{path}: not a JSON object (it begins {start[:12]!r}); is it a results file?")
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:  # json.JSONDecodeError is a ValueError
        raise JaxmlpError(f"{path}: not readable as JSON ({e}); is it a results file?") from None
    except RecursionError:
        raise JaxmlpError(f"{path}: nested deeper than JSON can be read; is it a results file?") from None


def read_document(path: str | os.PathLike[str]) -> Document:
    """The document in one result file, or a `JaxmlpError` naming the file and what is wrong with it."""
    path = Path(path)
    try:
        return parse(_read_json(path))
    except JaxmlpError as e:
        raise type(e)(str(e) if str(e).startswith(str(path)) else f"{path}: {e}") from None


def read_benchmarks(path: str | os.PathLike[str]) -> BenchmarkDocument:
    """The pytest-benchmark document in one file, or a `JaxmlpError` saying what is wrong with the file."""
    path = Path(path)
    try:
        raw = _read_json(path)
        document = parse(raw) if BenchmarkDocument.recognises(raw) else None  # a folder's files' checks
        if not isinstance(document, BenchmarkDocument):
            raise JaxmlpError("not a pytest-benchmark results file (no 'benchmarks' and 'machine_info')")
        return document
    except JaxmlpError as e:
        raise type(e)(str(e) if str(e).startswith(str(path)) else f"{path}: {e}") from None


def files(folder: Path) -> Iterator[Path]:
    """Every visible file under ``folder``, in sorted order: the one walk of a results folder."""
    errors.file_not_folder(
        "results folder", folder, f"give the folder that holds the results (`jaxmlp summary {folder}` reads one file)"
    )
    if not folder.is_dir():
        raise JaxmlpError(
            f"results folder {folder} does not exist: run `nox -s bench` first, "
            "or give the folder that holds the results"
        )
    seen: set[str] = set()
    for top, dirs, names in os.walk(folder, followlinks=True):
        real = os.path.realpath(top)
        if real in seen:  # a symbolic link back into the tree: each folder once
            dirs[:] = []
            continue
        seen.add(real)
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            path = Path(top) / name
            if not layout.is_hidden(path, folder) and not layout.is_call_record(path):
                yield path


def scan(folder: Path) -> Scan:
    """Every document (typed), profiler capture and skipped file (with why) under ``folder``, in one walk."""
    documents: list[ReadDocument] = []
    captures: list[Path] = []
    skipped: list[Skipped] = []
    for path in files(folder):
        if path.name.endswith(CAPTURE_SUFFIX):
            captures.append(path)
        elif path.suffix == ".json":
            try:
                document = read_document(path)
                if isinstance(document, BenchmarkDocument):  # its typed fields only: not a thousand files' JSON
                    document = dataclasses.replace(document, source={})
                documents.append(ReadDocument(path, document))
            except JaxmlpError as e:
                skipped.append(Skipped(path, str(e).removeprefix(f"{path}: ")))
    return Scan(folder, tuple(documents), tuple(sorted(captures)), tuple(skipped))
