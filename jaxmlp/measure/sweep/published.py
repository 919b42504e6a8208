"""Which jax/jaxlib releases exist: those the package index lists, and those a folder of wheels holds (``--wheels``);
a release asked for that its source lacks named in one line before any environment is made."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from jaxmlp.errors import JaxmlpError
from jaxmlp.measure.sweep.envs import OLDEST, RELEASE, WHEEL, Source
from jaxmlp.registry import version_key

# --- which releases exist -------------------------------------------------------------------------------------


def parse_index_versions(text: str) -> list[str]:
    """The release numbers in ``pip index versions PACKAGE``'s output (its "Available versions:" line)."""
    for line in text.splitlines():
        if line.strip().lower().startswith("available versions:"):
            listed = (v.strip() for v in line.split(":", 1)[1].split(","))
            return sorted((v for v in listed if RELEASE.fullmatch(v)), key=version_key)
    return []


def index_versions(package: str, python: str = sys.executable) -> list[str]:
    command = [python, "-m", "pip", "index", "versions", package, "--disable-pip-version-check"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    except (subprocess.TimeoutExpired, OSError):
        done = None
    versions = parse_index_versions(done.stdout) if done is not None and done.returncode == 0 else []
    if not versions:
        raise JaxmlpError(
            f"could not list {package}'s releases from the package index (offline?): "
            "pass them by hand with --versions 0.6.2 0.7.0 0.7.1 ..."
        )
    return versions


def releases(jax: Sequence[str], jaxlib: Sequence[str]) -> list[str]:
    """The releases a sweep can measure: published for jax and jaxlib alike, from `OLDEST` on, oldest first."""
    both = set(jax) & set(jaxlib)
    return sorted((v for v in both if version_key(v) >= version_key(OLDEST)), key=version_key)


def last_of_each_minor(versions: Sequence[str]) -> list[str]:
    """The last patch release of each minor release (``0.4.38`` for 0.4), oldest first."""
    last: dict[str, str] = {}
    for v in sorted(versions, key=version_key):
        last[".".join(v.split(".")[:2])] = v
    return list(last.values())


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
        match = WHEEL.fullmatch(path.name)
        if match:
            package, version, tag = match.groups()
            found[package].setdefault(version, []).append(tag)
    return found


def wheel_releases(folder: Path) -> list[str]:
    """The releases a folder of wheels holds for jax and for jaxlib on this Python (``cp311`` or ``py3``), from
    `OLDEST` on, oldest first (a nightly before its release, nightlies by build date); one line naming the folder
    and what it holds where it holds none."""
    if not folder.is_dir():
        raise JaxmlpError(f"--wheels {folder}: no such folder: give a folder of jax and jaxlib wheels")
    found = folder_wheels(folder)
    here = f"cp{sys.version_info.major}{sys.version_info.minor}"
    jaxlib = [v for v, tags in found["jaxlib"].items() if here in tags or "py3" in tags]
    both = releases(list(found["jax"]), jaxlib)
    if not both:
        held = f"{len(found['jax'])} jax and {len(found['jaxlib'])} jaxlib wheel(s)" + (
            f", none of jaxlib for {here}" if found["jaxlib"] and not jaxlib else ""
        )
        raise JaxmlpError(
            f"--wheels {folder}: no release with both a jax and a jaxlib wheel for this Python ({held}): "
            f"`pip download jax==V jaxlib==V -d {folder}` adds one"
        )
    return both


def available(wheels: Path | None) -> list[str]:
    """The releases a sweep can take: the folder's (``--wheels``), else the package index's."""
    if wheels is not None:
        return wheel_releases(wheels)
    return releases(index_versions("jax"), index_versions("jaxlib"))


def check_held(versions: Sequence[str], source: Source) -> None:
    """One line naming the releases that have no build for the asked backend (`Source.check_builds`), or that a
    folder of wheels does not hold (and the accelerator packages it lacks), before any environment is made."""
    source.check_builds(versions)
    if source.wheels is None:
        return
    held = set(wheel_releases(source.wheels))
    missing = [v for v in versions if v not in held]
    if missing:
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
