"""Outputs published at a fixed place and replaced whole on every call (a tracking site, a message): the new one is
written beside the old, then takes its place by renames, so a reader (or a crash) only ever sees the old one whole or
the new one whole. Results themselves are never replaced (`jaxmlp.results.store.writing`)."""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from jaxmlp.errors import JaxmlpError

RENAME_EXCHANGE = 2
"""Linux's ``renameat2`` flag that swaps two paths in one step."""
AT_FDCWD = -100


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


def _exchange(a: Path, b: Path) -> bool:
    """Swap ``a`` and ``b`` in one step (Linux's ``renameat2``); False where the system or file system cannot."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    return bool(renameat2(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) == 0)


def recover(path: Path) -> None:
    """Put back the old folder a crash left set aside (between `replace_folder`'s two renames), where ``path`` is
    missing; drop the others."""
    for old in sorted(path.parent.glob(f".{path.name}.old-*")):  # set aside by `replace_folder`
        if not path.exists():
            os.rename(old, path)
        else:
            shutil.rmtree(old, ignore_errors=True)


def _fsync_tree(folder: Path) -> None:
    for file in folder.rglob("*"):
        if file.is_file():
            with open(file, "rb") as f:
                os.fsync(f.fileno())


@contextlib.contextmanager
def replace_folder(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield an empty hidden folder beside ``path`` to write the new one in; once the block ends, it takes
    ``path``'s place whole (swapped in one step on Linux, else by two renames that `recover` completes after a
    crash between them) and the old one is removed. If the block fails, ``path`` is left as it was."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise JaxmlpError(f"{path} is a file, not a folder: choose a folder for it (it is replaced whole each time)")
    path.parent.mkdir(parents=True, exist_ok=True)
    recover(path)
    building = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    try:
        yield building
        _fsync_tree(building)
        os.chmod(building, 0o777 & ~_umask())  # mkdtemp makes it private; a site is as readable as any folder
        if not path.exists():
            os.rename(building, path)
        elif _exchange(building, path):
            shutil.rmtree(building, ignore_errors=True)  # it holds the old one now
        else:
            old = path.with_name(f".{path.name}.old-{os.getpid()}")
            os.rename(path, old)
            try:
                os.rename(building, path)
            except OSError:
                os.rename(old, path)
                raise
            shutil.rmtree(old, ignore_errors=True)
    finally:
        if building.exists():
            shutil.rmtree(building, ignore_errors=True)


def replace_file(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` as ``path``, replacing what was there in one rename: all of the new text, or the old file."""
    path = Path(path)
    if path.is_dir():
        raise JaxmlpError(f"{path} is a folder, not a file: choose a file name for it")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.chmod(tmp, 0o666 & ~_umask())
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path
