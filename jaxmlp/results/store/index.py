"""A results folder's index (`INDEX_NAME`, SQLite): what each result file held when last read, so that a folder is read
again without parsing unchanged files, and what is costly to compute again (`IndexMemo`). The JSON files stay the truth
(docs/results/store.md)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from jaxmlp.errors import JaxmlpError
from jaxmlp.results.schema import Document
from jaxmlp.results.schema.bench import BenchmarkDocument
from jaxmlp.results.schema.common import CURRENT
from jaxmlp.results.schema.machines import MACHINE
from jaxmlp.results.store import layout, reading, rows
from jaxmlp.results.store.reading import CAPTURE_SUFFIX, ReadDocument, Scan, Skipped, Summarised

INDEX_NAME = ".jaxmlp-index.sqlite"
"""The index's file in a results folder: a dot-name, so no walk of the folder reads it as a result."""
FORMAT = 2
"""The index's own form; raised when its tables or what they hold change."""
VERSION = f"{FORMAT}.{CURRENT}.{hashlib.sha1(repr(rows.POINT_FIELDS).encode()).hexdigest()[:8]}"
"""What a file's row was made by: the index's form, the result files' schema and the fields kept of a run."""
RECENT_RUNS = 30
"""How many of each machine's newest runs are read in full; the older come from the index as history points."""
RECENT_SWEEPS = 10
"""How many of the newest sweeps and timelines are read in full; the older are named from the index."""
BATCH = 200
"""Files parsed between two commits of the index: a stopped command keeps what it parsed."""
BUSY_MS = 60_000
"""How long a command waits for another one's write to the index before it reads the folder without it."""
DAMAGED = "damaged"
RUN_KINDS = ("bench", "scaling")
CELL = "cell"  # a file of a sweep or timeline folder at the folder's top (a bisection's probes: read in full)
SWEEP_KINDS = {layout.SWEEP: "sweep", layout.SWEEP_BEFORE: "sweep", layout.TIMELINE: "timeline"}

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,   -- relative to the folder
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    version TEXT NOT NULL,   -- VERSION when the row was made
    kind TEXT NOT NULL,      -- 'bench', 'scaling' (a run: its points kept), 'cell' (a sweep's), 'other', 'damaged'
    why TEXT,                -- a damaged file: why it is not a result
    stamp TEXT,              -- a run's time, as its file says it; a cell's folder's
    machines TEXT,           -- a run's machines: a JSON list of `MACHINE` values, one list per machine
    points TEXT              -- a run's `rows.points`; a cell's release: {"release": ...}
);
CREATE TABLE IF NOT EXISTS memo (
    key TEXT PRIMARY KEY,    -- a hash of all the value was computed from (`IndexMemo`)
    kind TEXT NOT NULL,      -- what the value is: 'changes' (a history series'), 'comparisons ...' (a sweep's)...
    value TEXT NOT NULL      -- JSON
);
"""


@dataclass(frozen=True)
class Entry:
    size: int
    mtime_ns: int
    version: str
    kind: str
    why: str | None
    stamp: str | None
    machines: tuple[tuple[Any, ...], ...]


Warn = Callable[[str], None]


def on_stderr(line: str) -> None:
    print(line, file=sys.stderr)


def cache_path(folder: Path) -> Path:
    """Where the index of a folder that cannot be written lives: the user's cache folder, one file a folder."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    key = hashlib.sha1(os.path.realpath(folder).encode()).hexdigest()[:16]
    return base / "jaxmlp" / "index" / f"{key}.sqlite"


def _connect(path: Path | str) -> sqlite3.Connection:
    db = sqlite3.connect(path, timeout=BUSY_MS / 1000, isolation_level=None)
    db.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
    with contextlib.suppress(sqlite3.OperationalError):  # a file system without shared memory: the rollback journal
        db.execute("PRAGMA journal_mode = WAL")
    db.executescript(SCHEMA)
    return db


def _set_aside(path: Path, why: str, command: str, warn: Warn) -> None:
    """Move a damaged index (and its log) aside under a name of its own, saying so in one line."""
    aside = path.with_name(f"{path.name}.damaged-{layout.stamp()}")
    n = 1
    while aside.exists():
        n += 1
        aside = path.with_name(f"{path.name}.damaged-{layout.stamp()}-{n}")
    os.replace(path, aside)
    for suffix in ("-wal", "-shm"):
        with contextlib.suppress(OSError):
            os.unlink(f"{path}{suffix}")
    warn(f"{command}: warning: the results index {path} was damaged ({why}); moved to {aside.name} and rebuilt")


def _writable(folder: Path) -> bool:
    return os.access(folder, os.W_OK | os.X_OK) and (
        not (folder / INDEX_NAME).exists() or os.access(folder / INDEX_NAME, os.R_OK | os.W_OK)
    )


def open_index(folder: Path, command: str = "jaxmlp", warn: Warn = on_stderr) -> sqlite3.Connection:
    """The folder's index, made if missing (in the folder, the user's cache, else memory); a damaged one rebuilt."""
    places: list[Path] = [folder / INDEX_NAME] if _writable(folder) else []
    places.append(cache_path(folder))
    for path in places:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        for _ in range(2):
            db = None
            try:
                db = _connect(path)
                db.execute("SELECT count(*) FROM files").fetchone()
                return db
            except sqlite3.DatabaseError as e:
                if db is not None:
                    db.close()
                if isinstance(e, sqlite3.OperationalError) and not path.exists():
                    break  # cannot be made there: the next place
                if "locked" in str(e) or "readonly" in str(e) or "unable to open" in str(e):
                    break
                try:
                    _set_aside(path, str(e), command, warn)
                except OSError:
                    break
    return _connect(":memory:")


def _machines(points: Mapping[str, Any]) -> list[list[Any]]:
    """The distinct `MACHINE` values of a run's rows (`rows.points`)."""
    n, same, each = points["n"], points["same"], points["each"]
    keys = [each[field] if field in each else [same.get(field)] * n for field in MACHINE]
    return [list(k) for k in dict.fromkeys(zip(*keys, strict=True))]


def _row(rel: str, stat: os.stat_result, path: Path, folder: Path) -> tuple[Any, ...]:
    """The index's row of one result file, read now."""
    head = (rel, stat.st_size, stat.st_mtime_ns, VERSION)
    try:
        document = reading.read_document(path)
    except JaxmlpError as e:
        return (*head, DAMAGED, str(e).removeprefix(f"{path}: "), None, None, None)
    if isinstance(document, BenchmarkDocument) and not document.is_sweep:
        points = rows.points(document)
        kind = "scaling" if document.is_scaling else "bench"
        return (*head, kind, None, str(document.datetime), json.dumps(_machines(points)), json.dumps(points))
    if isinstance(document, BenchmarkDocument) and _sweep_kind(path, folder):
        release = document.metadata.get("sweep_label") or document.metadata.get("jax")
        stamp = layout.stamp_in(path.parent.name)
        return (*head, CELL, None, stamp, None, json.dumps({"release": None if release is None else str(release)}))
    return (*head, "other", None, None, None, None)


def _sweep_kind(path: Path, folder: Path) -> str | None:
    """ "sweep" or "timeline" for a file at the top of a sweep or timeline folder of the results folder."""
    if path.parent.parent != folder:
        return None
    return next((kind for prefix, kind in SWEEP_KINDS.items() if path.parent.name.startswith(f"{prefix}-")), None)


def _entries(db: sqlite3.Connection) -> dict[str, Entry]:
    out = {}
    names = [f.name for f in fields(Entry)]
    for path, *known in db.execute(f"SELECT path, {', '.join(names)} FROM files"):
        entry = dict(zip(names, known))
        machines = entry.pop("machines")
        out[path] = Entry(**entry, machines=tuple(tuple(k) for k in json.loads(machines)) if machines else ())
    return out


def batches(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def update(db: sqlite3.Connection, folder: Path, paths: Sequence[Path]) -> dict[str, Entry]:
    """Bring the index up to the folder's result files ``paths``; returns every file's entry."""
    known = _entries(db)
    stats = {}
    for path in paths:
        with contextlib.suppress(OSError):
            stats[path.relative_to(folder).as_posix()] = (path, path.stat())
    stale = [
        rel
        for rel, (_, st) in stats.items()
        if (e := known.get(rel)) is None or (e.size, e.mtime_ns, e.version) != (st.st_size, st.st_mtime_ns, VERSION)
    ]
    for batch in batches(stale, BATCH):
        made = [_row(rel, stats[rel][1], stats[rel][0], folder) for rel in batch]
        with transaction(db):
            db.executemany("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", made)
    gone = [(rel,) for rel in known if rel not in stats]
    if gone:
        with transaction(db):
            db.executemany("DELETE FROM files WHERE path = ?", gone)
    return _entries(db) if stale or gone else known


@contextlib.contextmanager
def transaction(db: sqlite3.Connection) -> Iterator[None]:
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def newest_runs(entries: Mapping[str, Entry], keep: int = RECENT_RUNS) -> set[str]:
    """The runs read in full: of each machine (`MACHINE` values), its newest ``keep`` runs."""
    by_machine: dict[tuple[Any, ...], list[tuple[str, str]]] = {}
    for rel, e in entries.items():
        if e.kind in RUN_KINDS:
            for key in e.machines or ((),):
                by_machine.setdefault(key, []).append((e.stamp or "", rel))
    kept: set[str] = set()
    for runs in by_machine.values():
        kept.update(rel for _, rel in sorted(runs, reverse=True)[:keep])
    return kept


def newest_sweeps(entries: Mapping[str, Entry], keep: int = RECENT_SWEEPS) -> set[str]:
    """The sweep and timeline cells read in full: those of the newest ``keep`` sweep folders, and timeline folders."""
    folders: dict[str, set[str]] = {}
    for rel, e in entries.items():
        if e.kind == CELL:
            parent = rel.rsplit("/", 1)[0]
            folders.setdefault(parent.split("-", 1)[0], set()).add(parent)
    newest = {f for named in folders.values() for f in sorted(named, key=layout.stamp_in, reverse=True)[:keep]}
    return {rel for rel, e in entries.items() if e.kind == CELL and rel.rsplit("/", 1)[0] in newest}


def _points(db: sqlite3.Connection, folder: Path, rels: Sequence[str]) -> list[Summarised]:
    out = []
    for batch in batches(rels, 500):
        marks = ",".join("?" * len(batch))
        for rel, kind, stamp, points in db.execute(
            f"SELECT path, kind, stamp, points FROM files WHERE path IN ({marks})", tuple(batch)
        ):
            path = folder / rel
            kind = (_sweep_kind(path, folder) or kind) if kind == CELL else kind
            out.append(Summarised(path, kind, stamp or "", json.loads(points)))
    return sorted(out, key=lambda s: str(s.path))


def scan(
    folder: Path,
    command: str = "jaxmlp",
    warn: Warn = on_stderr,
    keep: int = RECENT_RUNS,
    keep_sweeps: int = RECENT_SWEEPS,
) -> Scan:
    """`reading.scan` of ``folder`` through its index: every result file's document, except each machine's runs older
    than its newest ``keep`` (their history's points, `Scan.summarised`) and the sweep and timeline folders older than
    the newest ``keep_sweeps``; damaged files skipped with why."""
    paths, captures = [], []
    for path in reading.files(folder):
        if path.name.endswith(CAPTURE_SUFFIX):
            captures.append(path)
        elif path.suffix == ".json":
            paths.append(path)
    db = open_index(folder, command, warn)
    try:
        try:
            entries = update(db, folder, paths)
        except sqlite3.OperationalError:  # another command held the index past BUSY_MS: the files alone
            return reading.scan(folder)
        kept = newest_runs(entries, keep) | newest_sweeps(entries, keep_sweeps)
        documents: list[ReadDocument] = []
        skipped: list[Skipped] = []
        older: list[str] = []
        for path in paths:
            rel = path.relative_to(folder).as_posix()
            entry = entries.get(rel)
            if entry is not None and entry.kind == DAMAGED:
                skipped.append(Skipped(path, entry.why or "not a results file"))
            elif entry is not None and entry.kind in (*RUN_KINDS, CELL) and rel not in kept:
                older.append(rel)
            else:
                found = _read(path)
                if isinstance(found, Skipped):
                    skipped.append(found)
                else:
                    documents.append(found)
        summarised = _points(db, folder, older)
    finally:
        db.close()
    return Scan(folder, tuple(documents), tuple(sorted(captures)), tuple(skipped), tuple(summarised))


def _read(path: Path) -> ReadDocument | Skipped:
    """One result file read in full (a changed file since the index was updated: skipped with why)."""
    try:
        document: Document = reading.read_document(path)
    except JaxmlpError as e:
        return Skipped(path, str(e).removeprefix(f"{path}: "))
    if isinstance(document, BenchmarkDocument):
        document = replace(document, source={})
    return ReadDocument(path, document)
