"""Paths a result file names, kept inside its folder, and files copied from them read as bounded text (trust.md)."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from jaxmlp.errors import JaxmlpError

MAX_COPIED_BYTES = 8 * 2**20
"""The most of a file named by a result file that is read; the rest is left out, and said to be."""
RELATIVE = re.compile(r"[A-Za-z0-9._-]+(?:/[A-Za-z0-9._-]+)*/?")
"""A path a result file may name: relative, in letters, digits, dots, dashes and underscores, ``/`` between parts."""


class Refused(JaxmlpError):
    """A path named in a result file that leads out of its folder, or to something that is not a regular file."""


def relative(text: str) -> str | None:
    """``text`` where it is a relative path with no ``..`` part (`RELATIVE`), else None: what a link may hold."""
    if not RELATIVE.fullmatch(text) or any(part in ("", ".", "..") for part in text.rstrip("/").split("/")):
        return None
    return text


def inside(folder: Path, named: str, file: Path, field: str, *, is_folder: bool = False) -> Path:
    """``named`` (the value of ``field`` in ``file``) resolved against ``folder``, or `Refused` (one line naming the
    file and the field) where it is not a plain relative path inside ``folder`` to an existing regular file
    (``is_folder``: a folder)."""

    def refuse(why: str) -> Refused:
        return Refused(f"{file}: {field} {named!r} {why}: a result file names only what lies inside its own folder")

    if not isinstance(named, str) or relative(named) is None:
        raise refuse("is not a plain relative path")
    root = os.path.realpath(folder)
    target = os.path.realpath(Path(folder) / named)
    if os.path.commonpath([root, target]) != root:
        raise refuse("leads out of its folder")
    try:
        mode = os.stat(target).st_mode
    except OSError as e:
        raise refuse(f"cannot be read ({e.strerror})") from None
    if not (stat.S_ISDIR(mode) if is_folder else stat.S_ISREG(mode)):
        raise refuse(f"is not a {'folder' if is_folder else 'regular file'}")
    return Path(target)


def read_text(path: Path, limit: int = MAX_COPIED_BYTES) -> str:
    """The first ``limit`` bytes of ``path`` as text (non-UTF-8 replaced), read following no link, never blocking."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise Refused(f"{path}: not a regular file")
        data = f.read(limit + 1)
    text = data[:limit].decode("utf-8", errors="replace")
    if len(data) > limit:
        text += f"\n[... the rest left out: only the first {limit // 2**20} MiB are copied]\n"
    return text
