"""The commands' work below their parsing: each command's typed entry point and its orchestration; `Filed`, how one
that files a result ends."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Filed:
    """How a command that files one result ended: its file (None: none written here), its exit code and the lines
    that say why that code is not 0."""

    path: Path | None
    code: int = 0
    why: tuple[str, ...] = ()
