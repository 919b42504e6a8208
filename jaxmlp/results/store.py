"""The results store: a folder of result files, written atomically and never over an earlier run, read in one walk.

Writing: `write_new` puts a whole file in place or nothing, and never over an existing file;
`ResultsStore.save` names a document by `jaxmlp.results.layout`'s rule; `ResultsStore.new_folder` builds a
result of several files in a hidden folder and moves it into place once it is complete.

Reading: `ResultsStore.scan` walks the folder once (symbolic links followed, each folder once; the parts
below the folder that start with a dot are hidden) and returns every document, typed, every profiler
capture, and every file it skipped with why. Skipped files are never modified. A benchmark file's document from
the walk keeps its typed fields only, not the file's JSON as read (`read_document` keeps that, for a copy).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from jaxmlp.errors import JaxmlpError
from jaxmlp.results import layout
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


# --- writing ----------------------------------------------------------------------------------------------------


class Exists(JaxmlpError):
    """The file a result was to be written as exists (results are never overwritten)."""


def check_new_path(path: str | os.PathLike[str]) -> Path:
    """``path`` as a Path, if a result may be written there (it is new and its folder exists)."""
    path = Path(path)
    if path.exists():
        raise Exists(f"{path} already exists and results are never overwritten: choose a new file name")
    if not path.parent.is_dir():
        raise JaxmlpError(f"cannot write {path}: folder {path.parent} does not exist; create it or choose another path")
    return path


def _try_writing(folder: Path, option: str) -> None:
    try:
        fd, tmp = tempfile.mkstemp(prefix=".jaxmlp-check-", dir=folder)
        os.close(fd)
        os.unlink(tmp)
    except OSError as e:
        raise JaxmlpError(
            f"{option} {folder}: cannot write there ({e.strerror}); choose a folder you can write to"
        ) from None


def check_folder(folder: str | os.PathLike[str], option: str) -> Path:
    """Before any work: results can be written in ``folder`` (made if missing), or one line saying why not and
    what to do (``option`` names the setting that gave it)."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise JaxmlpError(f"{option} {folder}: that is a file, not a folder; choose a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise JaxmlpError(
            f"{option} {folder}: cannot create it ({e.strerror}); choose a folder you can write to"
        ) from None
    _try_writing(folder, option)
    return folder


def check_new_file(path: str | os.PathLike[str], option: str) -> Path:
    """Before any work: ``path`` is new, its folder exists and can be written (one line otherwise)."""
    path = Path(path)
    try:
        check_new_path(path)
    except JaxmlpError as e:
        raise JaxmlpError(f"{option}: {e}") from None
    _try_writing(path.parent, option)
    return path


def check_new_folder(path: str | os.PathLike[str], option: str) -> Path:
    """Before any work: ``path`` does not exist and can be made (its parent made if missing, and writable)."""
    path = Path(path)
    if path.exists():
        raise JaxmlpError(f"{option} {path} already exists and results are never overwritten: choose a new folder")
    check_folder(path.parent, option)
    return path


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


def write_new(path: str | os.PathLike[str], text: str | bytes) -> Path:
    """Write ``text`` (or bytes) to a NEW file: all of it or nothing, and never over an existing file.

    The text goes to a temporary (hidden) file in the same folder, which is then linked to
    ``path`` (a hard link fails, atomically, if ``path`` exists) and removed.
    """
    path = check_new_path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes it private; a result file is as readable as any other
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode() if isinstance(text, str) else text)
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise Exists(f"{path} appeared while writing and is never overwritten: choose a new file name") from None
        except OSError:  # a file system without hard links: check, then rename
            check_new_path(path)
            os.rename(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def write_json_new(path: str | os.PathLike[str], obj: object) -> Path:
    return write_new(path, json.dumps(obj, indent=1, allow_nan=False) + "\n")


def write_gzip_new(path: str | os.PathLike[str], text: str) -> Path:
    """``text`` gzipped into a NEW file (`write_new`); the folder made first. A fixed mtime: the same text
    gives the same bytes."""
    import gzip

    Path(path).parent.mkdir(parents=True, exist_ok=True)
    return write_new(path, gzip.compress(text.encode(), mtime=0))


def read_gzip(path: str | os.PathLike[str]) -> str:
    import gzip

    return gzip.decompress(Path(path).read_bytes()).decode()


def numbered(name: str, n: int) -> str:
    """The n-th name for ``name`` when earlier ones are taken: ``stem.ext``, ``stem-2.ext``, ``stem-3.ext``, ..."""
    if n == 1:
        return name
    path = Path(name)
    return f"{path.stem}-{n}{path.suffix}"


def unique_path(folder: Path, name: str) -> Path:
    """``folder / name``, or the first of `numbered`'s names that does not exist yet."""
    if not folder.is_dir():
        raise JaxmlpError(f"results folder {folder} does not exist: create it or choose another")
    n = 1
    while (folder / numbered(name, n)).exists():
        n += 1
    return folder / numbered(name, n)


def new_dir(parent: Path, name: str) -> Path:
    """Create and return a NEW folder ``parent / name`` (or `numbered`'s next), race-free; makes ``parent``."""
    parent.mkdir(parents=True, exist_ok=True)
    n = 1
    while True:
        path = parent / numbered(name, n)
        try:
            path.mkdir()
            return path
        except FileExistsError:
            n += 1


def _claim(path: Path) -> Path:
    """Make ``path`` as an empty folder, so that no other writer can take the name, or say it is taken."""
    try:
        path.mkdir()
    except FileExistsError:
        raise JaxmlpError(f"{path} appeared while writing and is never overwritten: choose a new folder") from None
    return path


def new_trace_run(logdir: str | os.PathLike[str], pipeline: str) -> Path:
    """A fresh folder for one profiler capture under the TensorBoard ``logdir``: never one an earlier capture
    used (`layout.trace_run`)."""
    return new_dir(Path(logdir), layout.trace_run(pipeline))


def document_name(document: Document) -> str:
    """The file name `layout` gives a new document."""
    if isinstance(document, BenchmarkDocument):
        kind = layout.SCALING if document.is_scaling else layout.BENCH
        return layout.name(kind, document.datetime, "-".join(document.backends) or "host", suffix=".json")
    if isinstance(document, TrainDocument):
        first = document.records[0] if document.records else {}
        return layout.name(
            layout.TRAIN, first.get("timestamp"), first.get("dataset"), first.get("config_pipeline"), suffix=".json"
        )
    if isinstance(document, TtaDocument):
        return layout.name(
            layout.TTA, document.metadata.get("timestamp"), document.settings.get("dataset"), suffix=".json"
        )
    if isinstance(document, BisectDocument):
        return layout.BISECT_FILE
    if isinstance(document, CellsDocument):
        return layout.CELLS_FILE
    if isinstance(document, ExplainDocument):
        return layout.EXPLAIN_FILE
    if isinstance(document, CeilingsDocument):
        return layout.name(layout.CEILINGS, document.metadata.get("timestamp"), suffix=".json")
    if isinstance(document, RooflineDocument):
        return layout.name(layout.ROOFLINE, document.metadata.get("timestamp"), suffix=".json")
    if isinstance(document, ValidationDocument):
        return layout.VALIDATION_FILE
    return layout.TRIALS_FILE


# --- reading ----------------------------------------------------------------------------------------------------


@dataclass
class NewFolder:
    """A result folder being written: ``path`` is where to write, and where the folder is once it is complete."""

    path: Path


@dataclass(frozen=True)
class Found:
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
class Scan:
    """Everything one walk of a results folder found."""

    folder: Path
    documents: tuple[Found, ...]
    captures: tuple[Path, ...]  # profiler captures (.xplane.pb), oldest run folder first
    skipped: tuple[Skipped, ...]

    def of(self, kind: type[D]) -> list[tuple[Path, D]]:
        """The documents of one kind, with their paths."""
        return [(f.path, f.document) for f in self.documents if isinstance(f.document, kind)]


MAX_RESULT_BYTES = 64 * 2**20
"""Larger than any results file jaxmlp writes (a full bench run with raw samples is a few MB): a file over it is
skipped unread, so a stray large .json in a results folder costs no memory."""


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
        size = path.stat().st_size
        if size > MAX_RESULT_BYTES:
            raise JaxmlpError(
                f"{path}: {size / 2**20:,.0f} MiB, larger than any results file "
                f"({MAX_RESULT_BYTES // 2**20} MiB at most); is it a results file?"
            )
        with path.open("rb") as f:
            start = f.read(4096).lstrip()
        if start and not start.startswith(b"{"):  # every results file is one JSON object
            raise JaxmlpError(f"{path}: not a JSON object (it begins {start[:12]!r}); is it a results file?")
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise JaxmlpError(f"{path}: not readable as JSON ({e}); is it a results file?") from None


def read_document(path: str | os.PathLike[str]) -> Document:
    """The document in one result file, or a `JaxmlpError` naming the file and what is wrong with it."""
    path = Path(path)
    try:
        return parse(_read_json(path))
    except JaxmlpError as e:
        raise JaxmlpError(str(e) if str(e).startswith(str(path)) else f"{path}: {e}") from None


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
        raise JaxmlpError(str(e) if str(e).startswith(str(path)) else f"{path}: {e}") from None


class ResultsStore:
    """A results folder (``reports/`` by default): new results go in by one naming rule; it is read in one walk."""

    def __init__(self, folder: str | os.PathLike[str] = layout.RESULTS_DIR):
        self.folder = Path(folder)

    def __repr__(self) -> str:
        return f"ResultsStore({str(self.folder)!r})"

    def _require(self) -> None:
        if not self.folder.is_dir():
            raise JaxmlpError(
                f"results folder {self.folder} does not exist: run `nox -s bench` first, "
                "or give the folder that holds the results"
            )

    # writing

    def save(self, document: Document, name: str | None = None) -> Path:
        """Write ``document`` as a new file in the folder (named by `layout`, unless ``name``), atomically."""
        self.folder.mkdir(parents=True, exist_ok=True)
        while True:  # another run saving at the same second takes the name first: take the next
            try:
                return write_json_new(unique_path(self.folder, name or document_name(document)), document.to_json())
            except Exists:
                if name is not None:
                    raise

    @contextlib.contextmanager
    def new_folder(self, kind: str, final: Path | None = None) -> Iterator[NewFolder]:
        """A result of several files: yields a hidden folder to write them in, then moves it into place whole.

        The folder becomes ``final`` (which must not exist) or the next ``<kind>-<time>`` in the store. If the
        block fails, nothing is left behind.
        """
        if final is not None and final.exists():
            raise JaxmlpError(f"{final} already exists and results are never overwritten: choose a new folder")
        parent = final.parent if final is not None else self.folder
        parent.mkdir(parents=True, exist_ok=True)
        building = Path(tempfile.mkdtemp(prefix=f".{kind}-", suffix=".tmp", dir=parent))
        folder = NewFolder(building)
        target: Path | None = None
        try:
            yield folder
            # the name is taken by making it (another run finishing in the same second takes the next one), then
            # the whole folder is renamed onto that empty folder of ours
            target = _claim(final) if final is not None else new_dir(parent, layout.name(kind))
            os.rename(building, target)
        except BaseException:
            shutil.rmtree(building, ignore_errors=True)
            if target is not None:
                with contextlib.suppress(OSError):
                    target.rmdir()  # the name claimed, if the folder never arrived
            raise
        os.chmod(target, 0o777 & ~_umask())  # mkdtemp makes it private; a result folder is as readable as any
        folder.path = target

    # reading

    def files(self) -> Iterator[Path]:
        """Every visible file under the folder, in sorted order: the store's one walk."""
        self._require()
        seen: set[str] = set()
        for top, dirs, names in os.walk(self.folder, followlinks=True):
            real = os.path.realpath(top)
            if real in seen:  # a symbolic link back into the tree: each folder once
                dirs[:] = []
                continue
            seen.add(real)
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(names):
                path = Path(top) / name
                if not layout.is_hidden(path, self.folder):
                    yield path

    def scan(self) -> Scan:
        documents: list[Found] = []
        captures: list[Path] = []
        skipped: list[Skipped] = []
        for path in self.files():
            if path.name.endswith(CAPTURE_SUFFIX):
                captures.append(path)
            elif path.suffix == ".json":
                try:
                    document = read_document(path)
                    if isinstance(document, BenchmarkDocument):  # its typed fields only: not a thousand files' JSON
                        document = dataclasses.replace(document, source={})
                    documents.append(Found(path, document))
                except JaxmlpError as e:
                    skipped.append(Skipped(path, str(e).removeprefix(f"{path}: ")))
        return Scan(self.folder, tuple(documents), tuple(sorted(captures)), tuple(skipped))
