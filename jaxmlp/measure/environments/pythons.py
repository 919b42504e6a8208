"""The Python each release's environment is made with (docs/questions/releases.md). Plain Python."""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import jaxmlp.measure.environments.envs as envs
import jaxmlp.measure.environments.published as published
from jaxmlp.errors import JaxmlpError
from jaxmlp.measure.environments.envs import INDEX, Interpreter, Source, running
from jaxmlp.measure.environments.published import MINORS, OLDEST_PYTHON, Minor
from jaxmlp.registry import version_key

PROBE_SECONDS = 30
"""The longest an interpreter may take to say what it is."""
PROBE = (
    "import importlib.util as u, json, sys; print(json.dumps({'version': list(sys.version_info[:3]), "
    "'implementation': sys.implementation.name, "
    "'venv': all(u.find_spec(m) is not None for m in ('venv', 'ensurepip'))}))"
)


def minor_words(minor: Minor) -> str:
    return f"{minor[0]}.{minor[1]}"


# --- finding interpreters -------------------------------------------------------------------------------------


def probe(path: str) -> Interpreter | str:
    """What ``path`` is, as an `Interpreter`, or why it cannot make an environment (a sentence)."""
    try:
        done = subprocess.run([path, "-c", PROBE], capture_output=True, text=True, timeout=PROBE_SECONDS)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"it does not run ({type(e).__name__})"
    try:
        said = json.loads(done.stdout.strip().splitlines()[-1])
        version = tuple(int(x) for x in said["version"])
    except (ValueError, IndexError, KeyError, TypeError):
        return "it is not a Python interpreter"
    found = Interpreter(path, (version[0], version[1], version[2]))
    if said.get("implementation") != "cpython":
        return f"it is {said.get('implementation')}, not CPython (jaxlib's wheels are CPython's)"
    if found.minor < OLDEST_PYTHON:
        return f"it is Python {found.words}; jaxmlp needs {minor_words(OLDEST_PYTHON)} or newer"
    if not said.get("venv"):
        return f"Python {found.words} without venv and ensurepip (Debian: apt install python3.{version[1]}-venv)"
    return found


def pyenv_root() -> Path | None:
    """pyenv's folder: ``$PYENV_ROOT``, else ``~/.pyenv``, else what ``pyenv root`` says; None without pyenv."""
    if given := os.environ.get("PYENV_ROOT"):
        return Path(given)
    home = Path.home() / ".pyenv"
    if home.is_dir():
        return home
    if shutil.which("pyenv"):
        try:
            done = subprocess.run(["pyenv", "root"], capture_output=True, text=True, timeout=PROBE_SECONDS)
        except (OSError, subprocess.TimeoutExpired):
            return None
        if done.returncode == 0 and done.stdout.strip():
            return Path(done.stdout.strip())
    return None


def pyenv_pythons(root: Path | None) -> list[str]:
    """The interpreters of pyenv's versions, those older than jaxmlp's oldest Python left out."""
    if root is None:
        return []
    out = []
    for folder in sorted((root / "versions").glob("*"), key=lambda p: version_key(p.name) if _numbered(p) else ()):
        if _numbered(folder) and tuple(int(x) for x in folder.name.split(".")[:2]) < OLDEST_PYTHON:
            continue
        python = folder / "bin" / "python3"
        if python.exists():
            out.append(str(python))
    return out


def _numbered(folder: Path) -> bool:
    parts = folder.name.split(".")
    return len(parts) >= 2 and all(p.isdigit() for p in parts)


def uv_pythons() -> list[str]:
    """The interpreters uv has installed or found (``uv python list --only-installed``), where uv is installed."""
    if not shutil.which("uv"):
        return []
    command = ["uv", "python", "list", "--only-installed", "--output-format", "json"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=PROBE_SECONDS)
        listed = json.loads(done.stdout) if done.returncode == 0 else []
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return []
    return [str(entry["path"]) for entry in listed if isinstance(entry, dict) and entry.get("path")]


def on_path(shims: Path | None) -> list[str]:
    """``python3.N`` on PATH from jaxmlp's oldest Python on (pyenv's shims left out)."""
    out = []
    for minor in range(OLDEST_PYTHON[1], 40):
        found = shutil.which(f"python3.{minor}")
        if found and (shims is None or Path(found).parent != shims):
            out.append(found)
    return out


def candidates(given: Sequence[str] = ()) -> list[str]:
    """Where to look, in the order preferred: ``--python``'s, the running one, PATH's, pyenv's, uv's."""
    root = pyenv_root()
    shims = None if root is None else root / "shims"
    return [*given, sys.executable, *on_path(shims), *pyenv_pythons(root), *uv_pythons()]


@functools.lru_cache(maxsize=8)
def interpreters(given: tuple[str, ...] = ()) -> tuple[Interpreter, ...]:
    """The interpreters found here that can make an environment, preferred first; one line for a ``--python`` that
    can't."""
    paths = candidates(given)
    with ThreadPoolExecutor(max_workers=8) as pool:
        probed = dict(zip(paths, pool.map(probe, paths), strict=True))
    for path in given:
        if isinstance(probed[path], str):
            raise JaxmlpError(f"--python {path}: cannot make an environment with it: {probed[path]}")
    seen: set[str] = set()
    out = []
    for path in paths:
        found = probed[path]
        if isinstance(found, str):
            continue
        if (real := os.path.realpath(found.path)) not in seen:
            seen.add(real)
            out.append(found)
    return tuple(out)


# --- which Python each release gets ---------------------------------------------------------------------------


def choose(
    versions: Sequence[str], supported: Mapping[str, set[Minor]], found: Sequence[Interpreter]
) -> dict[str, Interpreter]:
    """Each release's interpreter, one for the series where possible; one line naming each release none supports."""
    if lacking := [v for v in versions if not any(i.minor in supported.get(v, set()) for i in found)]:
        raise JaxmlpError(refusal(lacking, supported, found))
    first = found[0]  # preferred, then the nearest Python version to it
    ordered = sorted(found, key=lambda i: (i != first, abs(i.minor[1] - first.minor[1]), -i.minor[1]))
    series = sorted(versions, key=version_key)
    out: dict[str, Interpreter] = {}
    start = 0
    while start < len(series):

        def run_of(i: Interpreter, start: int = start) -> int:
            n = 0
            while start + n < len(series) and i.minor in supported[series[start + n]]:
                n += 1
            return n

        best = max(ordered, key=run_of)  # max keeps the first (preferred) of equal runs
        n = run_of(best)
        out.update({v: best for v in series[start : start + n]})
        start += n
    return {v: out[v] for v in versions}


def refusal(lacking: Sequence[str], supported: Mapping[str, set[Minor]], found: Sequence[Interpreter]) -> str:
    """The line naming the releases no interpreter found here supports, the Python each needs and how to give one."""
    parts = []
    for v in lacking:
        minors = sorted(supported.get(v, set()))
        needs = f"Python {' or '.join(minor_words(m) for m in minors)}" if minors else "a Python no source lists"
        parts.append(f"jax {v} needs {needs}")
    wanted = min((m for v in lacking for m in supported.get(v, set())), default=None)
    example = f"/path/to/python{minor_words(wanted)}" if wanted else "/path/to/python3"
    here = ", ".join(sorted({i.words for i in found}, key=version_key)) or "none"
    return (
        f"{'; '.join(parts)}, and no interpreter found here is one (found Python {here} on PATH, pyenv and uv): "
        f"give one with --python {example}"
    )


def made_under(
    versions: Sequence[str], found: Sequence[Interpreter], root: Path | None, source: Source
) -> Interpreter | None:
    """The first of ``found`` (in order) under which every release's environment is made already; None if none."""
    for i in found:
        if all(envs.is_made(v, root, source, i) for v in versions):
            return i
    return None


def for_releases(
    versions: Sequence[str],
    source: Source = INDEX,
    given: Sequence[str] = (),
    root: Path | None = None,
    say: Callable[[str], None] = print,
) -> dict[str, Interpreter]:
    """Which Python each release's environment is made with, said where not the running one; raises before making."""
    found = interpreters(tuple(given))
    ready = made_under(versions, [i for i in found if i.path in given] or found, root, source)
    if ready is not None:
        chosen = {v: ready for v in versions}
    else:
        supported = published.listing(source, sorted(set(MINORS) | {i.minor for i in found}))
        chosen = choose(versions, {v: supported.get(v, set()) for v in versions}, found)
    if {i.words for i in chosen.values()} != {running().words} and versions:  # another Python than this one
        say(python_line(chosen))
    return chosen


def python_line(chosen: Mapping[str, Interpreter]) -> str:
    """One line saying which Python the releases' environments are made with (and where the series changes it)."""
    series = sorted(chosen, key=version_key)
    groups: list[tuple[Interpreter, list[str]]] = []
    for v in series:
        if groups and groups[-1][0] == chosen[v]:
            groups[-1][1].append(v)
        else:
            groups.append((chosen[v], [v]))
    if len(groups) == 1:
        i = groups[0][0]
        return (
            f"Python {i.words} ({i.path}) for every release: the nearest to jaxmlp's own ({running().words}) that "
            "each of them supports"
        )
    said = "; ".join(f"{g[1][0]}-{g[1][-1]} on Python {g[0].words} ({g[0].path})" for g in groups)
    return f"Environments: {said}: no one Python here supports them all; each change of Python is marked"


def crossings(chosen: Mapping[str, str]) -> list[tuple[str, str]]:
    """The steps of a series across which its Python changes (``chosen``: each release's Python version)."""
    series = sorted(chosen, key=version_key)
    return [(a, b) for a, b in zip(series, series[1:], strict=False) if chosen[a] != chosen[b]]
