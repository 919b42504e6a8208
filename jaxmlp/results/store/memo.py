"""What is costly to compute again from a results folder, kept in its index under a hash of all it follows from."""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from jaxmlp.results.store.index import Warn, batches, on_stderr, open_index, transaction


def samples_key(said: Any, samples: Iterable[Iterable[float]]) -> str:
    """A key of `IndexMemo`: a hash of ``said`` (JSON) and of each list of raw samples in turn."""
    h = hashlib.sha256(json.dumps(said).encode())
    for values in samples:
        array = np.asarray(list(values), float)
        h.update(len(array).to_bytes(8, "little"))
        h.update(array.tobytes())
    return h.hexdigest()


@dataclass(frozen=True)
class IndexMemo:
    """Values computed from a folder's results, kept in its index under a key that hashes all they were computed from.
    An index another command holds past `BUSY_MS` (or that cannot be read) recalls and keeps nothing."""

    folder: Path
    command: str = "jaxmlp"
    warn: Warn = on_stderr

    def recall(self, kind: str, keys: Collection[str]) -> dict[str, Any]:
        """The values of ``kind`` kept under ``keys`` (those the index holds)."""
        out: dict[str, Any] = {}
        with self._index() as db:
            wanted = list(keys)
            for batch in batches(wanted, 500):
                marks = ",".join("?" * len(batch))
                query = f"SELECT key, value FROM memo WHERE kind = ? AND key IN ({marks})"
                out.update((key, json.loads(value)) for key, value in db.execute(query, (kind, *batch)))
        return out

    def keep(self, kind: str, made: Mapping[str, Any], used: Collection[str]) -> None:
        """Keep ``made`` (key: value) and drop the values of ``kind`` whose key is not in ``used`` (asked no more)."""
        with self._index() as db:
            known = {key for (key,) in db.execute("SELECT key FROM memo WHERE kind = ?", (kind,))}
            stale = [(key,) for key in known - set(used) - set(made)]
            fresh = [(key, kind, json.dumps(value)) for key, value in made.items() if key not in known]
            if stale or fresh:
                with transaction(db):
                    db.executemany("DELETE FROM memo WHERE key = ?", stale)
                    db.executemany("INSERT OR REPLACE INTO memo VALUES (?, ?, ?)", fresh)

    @contextlib.contextmanager
    def _index(self) -> Iterator[sqlite3.Connection]:
        db = open_index(self.folder, self.command, self.warn)
        try:
            yield db
        except sqlite3.Error:  # held by another command past BUSY_MS, or unreadable: computed, not kept
            pass
        finally:
            db.close()
