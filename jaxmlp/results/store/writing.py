"""The results store: result files and folders written atomically, never over an earlier run, and named by
`jaxmlp.results.store.layout`'s rule (reading them: `jaxmlp.results.store.reading`)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from jaxmlp import errors
from jaxmlp.errors import JaxmlpError
from jaxmlp.results.schema import Document
from jaxmlp.results.schema.bench import BenchmarkDocument
from jaxmlp.results.schema.bisect import BisectDocument
from jaxmlp.results.schema.explain import ExplainDocument
from jaxmlp.results.schema.roofline import CeilingsDocument, RooflineDocument
from jaxmlp.results.schema.sweep import CellsDocument
from jaxmlp.results.schema.track import TrackDocument
from jaxmlp.results.schema.train import TrainDocument
from jaxmlp.results.schema.tta import TtaDocument
from jaxmlp.results.schema.validation import ValidationDocument
from jaxmlp.results.store import layout, reading
from jaxmlp.results.store.reading import Scan


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


def writable(folder: Path, said: str, where: str = "there") -> None:
    """A file can be made in ``folder`` (made if missing), or one line: ``said``, why not and the fix."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".jaxmlp-check-", dir=folder)
        os.close(fd)
        os.unlink(tmp)
    except OSError as e:
        raise JaxmlpError(f"{said}: cannot write {where} ({e.strerror}); choose a folder you can write to") from None


def check_folder(folder: str | os.PathLike[str], option: str) -> Path:
    """Before any work: results can be written in ``folder`` (made if missing), or one line saying why not and
    what to do (``option`` names the setting that gave it)."""
    folder = Path(folder)
    errors.file_not_folder(option, folder, "choose a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise JaxmlpError(
            f"{option} {folder}: cannot create it ({e.strerror}); choose a folder you can write to"
        ) from None
    writable(folder, f"{option} {folder}")
    return folder


def check_new_file(path: str | os.PathLike[str], option: str) -> Path:
    """Before any work: ``path`` is new, its folder exists and can be written (one line otherwise)."""
    path = Path(path)
    try:
        check_new_path(path)
    except JaxmlpError as e:
        raise JaxmlpError(f"{option}: {e}") from None
    writable(path.parent, f"{option} {path.parent}")
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
    if isinstance(document, (CeilingsDocument, RooflineDocument)):  # ceilings-<time>.json, roofline-<time>.json
        return layout.name(document.written_kind, document.metadata.get("timestamp"), suffix=".json")
    return FILES.get(type(document), layout.TRIALS_FILE)


FILES: dict[type, str] = {
    BisectDocument: layout.BISECT_FILE,
    CellsDocument: layout.CELLS_FILE,
    ExplainDocument: layout.EXPLAIN_FILE,
    ValidationDocument: layout.VALIDATION_FILE,
    TrackDocument: layout.TRACK_FILE,
}
"""The name of each kind of document that is one file in its folder (any other: the detector trials')."""


@dataclass
class NewFolder:
    """A result folder being written: ``path`` is where to write, and where the folder is once it is complete."""

    path: Path


class ResultsStore:
    """A results folder (``reports/`` by default): new results go in by one naming rule; it is read in one walk
    (`jaxmlp.results.store.reading`)."""

    def __init__(self, folder: str | os.PathLike[str] = layout.RESULTS_DIR):
        self.folder = Path(folder)

    def __repr__(self) -> str:
        return f"ResultsStore({str(self.folder)!r})"

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
        """A result of several files: yields a hidden folder to write them in, then moves it into place whole as
        ``final`` (which must not exist) or the next ``<kind>-<time>`` in the store; nothing is left if it fails."""
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

    def files(self) -> Iterator[Path]:
        """Every visible file under the folder, in sorted order: the store's one walk (`reading.files`)."""
        return reading.files(self.folder)

    def scan(self) -> Scan:
        return reading.scan(self.folder)
