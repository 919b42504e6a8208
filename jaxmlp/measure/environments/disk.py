"""The sweep's environments on disk: their sizes, install times, and the size cap (`MAX_GB`)."""

from __future__ import annotations

import contextlib
import os
import shutil
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path

from jaxmlp.errors import JaxmlpError
from jaxmlp.measure.environments.envs import COMPLETE, INDEX, Source, envs_root, locked, release_of

MAX_GB = "JAXMLP_ENVS_MAX_GB"
"""The environment variable that caps the environments' size (GB): past it, the least recently used are removed."""


def env_bytes(env: Path) -> int:
    """The bytes of the files under ``env`` (links not followed)."""
    files = (Path(top) / name for top, _, names in os.walk(env) for name in names)
    return sum(f.stat().st_size for f in files if not f.is_symlink())


def cap_bytes() -> float | None:
    """`MAX_GB` in bytes; None when it is not set (no cap)."""
    text = os.environ.get(MAX_GB)
    if not text:
        return None
    try:
        gb = float(text)
    except ValueError:
        raise JaxmlpError(f"{MAX_GB}={text!r} is not a number of GB (like 20)") from None
    if not gb > 0:
        raise JaxmlpError(f"{MAX_GB}={text!r}: give a size above 0 GB")
    return gb * 1e9


def least_recent(sizes: Sequence[tuple[str, float, int]], keep: set[str], cap: float) -> list[str]:
    """The environments to remove, least recently used first, until the rest fit in ``cap`` bytes (never ``keep``)."""
    total = sum(size for _, _, size in sizes)
    out = []
    for name, _, size in sorted(sizes, key=lambda s: s[1]):
        if total <= cap:
            break
        if name not in keep:
            out.append(name)
            total -= size
    return out


def prune(
    keep: Sequence[str], root: Path | None = None, say: Callable[[str], None] = print, source: Source = INDEX
) -> list[str]:
    """Under `MAX_GB`, remove the least recently used environments until the rest fit, in a line; those removed."""
    cap = cap_bytes()
    folder = root or envs_root()
    if cap is None or not folder.is_dir():
        return []
    with locked(folder):
        made = [marker.parent for marker in folder.glob(f"jax-*/{COMPLETE}")]
        sizes = [(env.name, (env / COMPLETE).stat().st_mtime, env_bytes(env)) for env in made]
        kept = {env.name for env in made if release_of(env.name, source) in keep}  # on every Python
        gone = least_recent(sizes, kept, cap)
        for name in gone:
            shutil.rmtree(folder / name, ignore_errors=True)
    if gone:
        freed = sum(size for name, _, size in sizes if name in gone)
        say(
            f"Environments over {MAX_GB}={cap / 1e9:g}: removed the least recently used, {', '.join(gone)} "
            f"({freed / 1e9:.1f} GB)"
        )
    return gone


def install_seconds(root: Path | None = None) -> float | None:
    """The median time earlier installs took here (from their markers), for the cost estimate; None if none."""
    times = []
    for marker in (root or envs_root()).glob(f"jax-*/{COMPLETE}"):
        with contextlib.suppress(ValueError, OSError):
            times.append(float(marker.read_text().strip() or "nan"))
    times = [t for t in times if t == t]
    return statistics.median(times) if times else None


def env_megabytes(root: Path | None = None) -> float | None:
    """The median size of the environments made here (MB), for the cost estimate; None if none is made."""
    sizes = [env_bytes(marker.parent) / 1e6 for marker in (root or envs_root()).glob(f"jax-*/{COMPLETE}")]
    return statistics.median(sizes) if sizes else None
