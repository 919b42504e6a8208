"""Writing results: atomically, and never over an earlier run."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from jaxmlp.errors import JaxmlpError


def check_new_path(path: str | os.PathLike) -> Path:
    """``path`` as a Path, if a result may be written there (it is new and its folder exists)."""
    path = Path(path)
    if path.exists():
        raise JaxmlpError(f"{path} already exists and results are never overwritten: choose a new file name")
    if not path.parent.is_dir():
        raise JaxmlpError(f"cannot write {path}: folder {path.parent} does not exist; create it or choose another path")
    return path


def write_new(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` to a NEW file: all of it or nothing, and never over an existing file.

    The text goes to a temporary file in the same folder, which is then linked to
    ``path`` (a hard link fails, atomically, if ``path`` exists) and removed.
    """
    path = check_new_path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes it private; a result file is as readable as any other
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise JaxmlpError(
                f"{path} appeared while writing and is never overwritten: choose a new file name"
            ) from None
        except OSError:  # a file system without hard links: check, then rename
            check_new_path(path)
            os.rename(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def write_json_new(path: str | os.PathLike, obj) -> Path:
    return write_new(path, json.dumps(obj, indent=1, allow_nan=False) + "\n")


def unique_path(folder: Path, name: str) -> Path:
    """``folder / name``, or ``stem-2.ext``, ``stem-3.ext``, ... : the first that does not exist yet."""
    if not folder.is_dir():
        raise JaxmlpError(f"results folder {folder} does not exist: create it or choose another")
    path = folder / name
    stem, suffix = path.stem, path.suffix
    n = 1
    while path.exists():
        n += 1
        path = folder / f"{stem}-{n}{suffix}"
    return path
