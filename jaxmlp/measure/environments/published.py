"""Which jax/jaxlib releases exist for which Pythons, on the package index or in a folder of wheels."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from jaxmlp.errors import JaxmlpError
from jaxmlp.measure.environments.envs import OLDEST, RELEASE, WHEEL, Source, envs_root
from jaxmlp.registry import version_key

Minor = tuple[int, int]
"""A Python version without its patch number: (3, 12)."""
OLDEST_PYTHON: Minor = (3, 11)
"""The oldest Python jaxmlp's workers run on (pyproject's ``requires-python``): older interpreters are not used."""
MINORS: tuple[Minor, ...] = tuple((3, n) for n in range(OLDEST_PYTHON[1], 15))
"""The Python versions a source is always asked about, whichever are found here (to name what a release needs)."""
INDEX_SECONDS = 900
"""How long the package index's answer for one package and Python version is kept before it is asked again."""
INDEX_CACHE = ".jaxmlp-index.json"

# --- which releases exist -------------------------------------------------------------------------------------


def parse_index_versions(text: str) -> list[str]:
    """The release numbers in ``pip index versions PACKAGE``'s output (its "Available versions:" line)."""
    for line in text.splitlines():
        if line.strip().lower().startswith("available versions:"):
            listed = (v.strip() for v in line.split(":", 1)[1].split(","))
            return sorted((v for v in listed if RELEASE.fullmatch(v)), key=version_key)
    return []


def index_versions(package: str, python: Minor | None = None) -> list[str]:
    """The releases of ``package`` the index has for ``python`` (None: the running one), cached; one line if none."""
    versions = asked_index(package, python or sys.version_info[:2])
    if not versions:
        raise JaxmlpError(
            f"could not list {package}'s releases from the package index (offline?): "
            "pass them by hand with --versions 0.6.2 0.7.0 0.7.1 ..."
        )
    return versions


def asked_index(package: str, python: Sequence[int]) -> list[str]:
    """`index_versions` without the one line: [] where the index gives none for that Python."""
    key = f"{package}-{python[0]}.{python[1]}"
    cache = envs_root() / INDEX_CACHE
    kept = _read_cache(cache).get(key, {})
    when, listed = kept.get("time"), kept.get("versions")
    if isinstance(when, (int, float)) and isinstance(listed, list) and time.time() - when < INDEX_SECONDS:
        return [str(v) for v in listed]
    command = [sys.executable, "-m", "pip", "index", "versions", package, "--disable-pip-version-check"]
    command += ["--python-version", f"{python[0]}.{python[1]}", "--only-binary=:all:"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    except (subprocess.TimeoutExpired, OSError):
        return []
    versions = parse_index_versions(done.stdout) if done.returncode == 0 else []
    if versions:
        with contextlib.suppress(OSError):
            _write_cache(cache, {**_read_cache(cache), key: {"time": time.time(), "versions": versions}})
    return versions


def _read_cache(path: Path) -> dict[str, dict[str, object]]:
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def _write_cache(path: Path, doc: Mapping[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(f"{path.name}.{os.getpid()}")
    part.write_text(json.dumps(doc))
    os.replace(part, path)


def releases(jax: Sequence[str], jaxlib: Sequence[str]) -> list[str]:
    """The releases a sweep can measure: published for jax and jaxlib alike, from `OLDEST` on, oldest first."""
    both = set(jax) & set(jaxlib)
    return sorted((v for v in both if version_key(v) >= version_key(OLDEST)), key=version_key)


def last_of_each_minor(versions: Sequence[str]) -> list[str]:
    """The last patch release of each minor release (``0.4.38`` for 0.4), oldest first."""
    return list({".".join(v.split(".")[:2]): v for v in sorted(versions, key=version_key)}.values())


def between(known: Sequence[str], good: str, bad: str) -> list[str]:
    """``good``, the releases after it and before ``bad``, and ``bad``: oldest first (``good`` may be newer)."""
    lo, hi = sorted((good, bad), key=version_key)
    for end in (good, bad):
        if end not in known:
            raise JaxmlpError(f"jax {end} is not among the releases ({', '.join(known[-6:])}, ...)")
    return [v for v in known if version_key(lo) <= version_key(v) <= version_key(hi)]


# --- a folder of wheels ---------------------------------------------------------------------------------------


def folder_wheels(folder: Path) -> dict[str, dict[str, list[str]]]:
    """The jax and jaxlib wheels in ``folder``: {package: {version: [python tags]}}."""
    found: dict[str, dict[str, list[str]]] = {"jax": {}, "jaxlib": {}}
    for path in folder.glob("*.whl"):
        if match := WHEEL.fullmatch(path.name):
            package, version, tag = match.groups()
            found[package].setdefault(version, []).append(tag)
    return found


def tag_minors(tags: Sequence[str]) -> set[Minor]:
    """The Python versions wheels of these Python tags install on (``cp312``: 3.12; ``py3``: every one asked)."""
    out: set[Minor] = set()
    for tag in tags:
        for part in tag.split("."):
            if part == "py3":
                out |= set(MINORS)
            elif part.startswith("cp3") and part[3:].isdigit():
                out.add((3, int(part[3:])))
    return out


def folder_listing(folder: Path) -> dict[str, set[Minor]]:
    """Each release a wheel folder holds from `OLDEST` on and the Pythons it is for; one line where it holds none."""
    if not folder.is_dir():
        raise JaxmlpError(f"--wheels {folder}: no such folder: give a folder of jax and jaxlib wheels")
    found = folder_wheels(folder)
    jaxlib = {v: {m for m in tag_minors(tags) if m >= OLDEST_PYTHON} for v, tags in found["jaxlib"].items()}
    both = releases(list(found["jax"]), [v for v, minors in jaxlib.items() if minors])
    if not both:
        oldest = f"cp3{OLDEST_PYTHON[1]}"
        held = f"{len(found['jax'])} jax and {len(found['jaxlib'])} jaxlib wheel(s)" + (
            f", none of jaxlib for {oldest} or newer" if found["jaxlib"] and not any(jaxlib.values()) else ""
        )
        raise JaxmlpError(
            f"--wheels {folder}: no release with both a jax and a jaxlib wheel for a Python jaxmlp runs on ({held}): "
            f"`pip download jax==V jaxlib==V -d {folder}` adds one"
        )
    return {v: jaxlib[v] for v in both}


def wheel_releases(folder: Path) -> list[str]:
    """The releases a folder of wheels holds for jax and for jaxlib, oldest first (nightlies by build date)."""
    return list(folder_listing(folder))


def index_listing(minors: Sequence[Minor]) -> dict[str, set[Minor]]:
    """Each release the index has for jax and jaxlib from `OLDEST` on, its Pythons of ``minors``; one line if none."""
    asked = [(package, m) for m in minors for package in ("jax", "jaxlib")]
    with ThreadPoolExecutor(max_workers=len(asked) or 1) as pool:
        answers = dict(zip(asked, pool.map(lambda a: asked_index(*a), asked), strict=True))
    out: dict[str, set[Minor]] = {}
    for m in minors:
        for v in releases(answers[("jax", m)], answers[("jaxlib", m)]):
            out.setdefault(v, set()).add(m)
    if not out:
        index_versions("jax")  # the one line: the index lists nothing
        index_versions("jaxlib")
    return {v: out[v] for v in sorted(out, key=version_key)}


def listing(source: Source, minors: Sequence[Minor] = MINORS) -> dict[str, set[Minor]]:
    """Each release ``source`` holds, oldest first, and the Python versions it is published for."""
    if source.wheels is not None:
        return folder_listing(source.wheels)  # every Python its jaxlib wheels are for
    return index_listing(minors)


def available(wheels: Path | None) -> list[str]:
    """The releases a sweep can take, for any Python: the folder's (``--wheels``), else the package index's."""
    return list(listing(Source(wheels)))


def check_held(versions: Sequence[str], source: Source) -> None:
    """One line naming the releases the source lacks or that have no build for the backend, before any is made."""
    source.check_builds(versions)
    if source.wheels is None:
        return
    held = set(wheel_releases(source.wheels))
    if missing := [v for v in versions if v not in held]:
        raise JaxmlpError(
            f"--wheels {source.wheels} holds no jax and jaxlib wheels of {', '.join(missing)} (it holds "
            f"{', '.join(sorted(held, key=version_key)[-6:])}, ...): `pip download jax==V jaxlib==V -d "
            f"{source.wheels}` adds one"
        )
    names = [p.name.replace("-", "_").lower() for p in source.wheels.glob("*.whl")]
    for extra, package in sorted({b for b in map(source.accelerator, versions) if b}):  # each release's own
        if not any(n.startswith(package) for n in names):
            raise JaxmlpError(
                f"--backend {source.backend}: --wheels {source.wheels} holds no {package} wheel, which "
                f"jax[{extra}] needs: `pip download 'jax[{extra}]==V' -d {source.wheels}` adds it"
            )
