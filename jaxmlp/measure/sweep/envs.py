"""The sweep's environments: one virtual environment per jax/jaxlib release, made once and kept.

Each holds ``jax==V`` and ``jaxlib==V`` and what they need (no torch, no jaxmlp): the worker processes find
jaxmlp through ``PYTHONPATH`` (a folder holding only a link to this package), so one environment serves
every jaxmlp commit. Environments live under ``$JAXMLP_ENVS``, else ``~/.cache/jaxmlp/envs``. Which releases
exist comes from the package index (``pip index versions``): a release is one whose jax and jaxlib were
both published with that number. Plain Python: the noxfile imports it.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import jaxmlp
from jaxmlp.errors import JaxmlpError, unusable_folder
from jaxmlp.registry import version_key

OLDEST = "0.4.30"
"""The oldest release jaxmlp supports (`jaxmlp.compat`; pyproject's ``jax>=``)."""

COMPLETE = ".jaxmlp-complete"
"""Written last into an environment, with the seconds its install took: one without it is made again."""

MAKE_SECONDS = 1800
"""The longest one step of making an environment (a venv, a pip install) may take before it is stopped."""

RELEASE = re.compile(r"\d+(\.\d+)+")


def envs_root() -> Path:
    return Path(os.environ.get("JAXMLP_ENVS") or Path.home() / ".cache" / "jaxmlp" / "envs")


def env_path(version: str, root: Path | None = None) -> Path:
    return (root or envs_root()) / f"jax-{version}-py{sys.version_info.major}{sys.version_info.minor}"


def python_of(env: Path) -> Path:
    return env / "bin" / "python"


def is_made(version: str, root: Path | None = None) -> bool:
    return (env_path(version, root) / COMPLETE).exists()


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
    sizes = []
    for marker in (root or envs_root()).glob(f"jax-*/{COMPLETE}"):
        files = (Path(top) / name for top, _, names in os.walk(marker.parent) for name in names)
        sizes.append(sum(f.stat().st_size for f in files if not f.is_symlink()) / 1e6)
    return statistics.median(sizes) if sizes else None


def check_release(version: str) -> str:
    if not RELEASE.fullmatch(version):
        raise JaxmlpError(f"{version!r} is not a jax release number (like 0.6.2)")
    if version_key(version) < version_key(OLDEST):
        raise JaxmlpError(f"jax {version} is older than {OLDEST}, the oldest release jaxmlp supports")
    return version


def make_env(version: str, root: Path | None = None, log: Callable[[str], None] = print) -> Path:
    """The python of jax==version's environment, made first if missing (a half-made one is made again)."""
    check_release(version)
    env = env_path(version, root)
    if (env / COMPLETE).exists():
        return python_of(env)
    shutil.rmtree(env, ignore_errors=True)
    try:
        env.parent.mkdir(parents=True, exist_ok=True)
        probe = env.parent / f".jaxmlp-probe-{os.getpid()}"
        probe.write_text("")
        probe.unlink()
    except OSError as e:
        source = (
            "--envs"
            if root is not None
            else (
                "JAXMLP_ENVS"
                if os.environ.get("JAXMLP_ENVS")
                else "the environments folder (set JAXMLP_ENVS to choose another)"
            )
        )
        raise unusable_folder(env.parent, source, e) from None
    log(f"Making the environment of jax {version} in {env} (jax, jaxlib and what they need; no torch)")
    start = time.monotonic()
    steps = ([sys.executable, "-m", "venv", str(env)],
             [str(python_of(env)), "-m", "pip", "install", "-q", "--disable-pip-version-check",
              f"jax=={version}", f"jaxlib=={version}"])  # fmt: skip
    for command in steps:
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=MAKE_SECONDS)
        except subprocess.TimeoutExpired:
            shutil.rmtree(env, ignore_errors=True)
            raise JaxmlpError(f"making the environment of jax {version} took over {MAKE_SECONDS} s and was stopped: "
                              "is the package index slow or unreachable? `--env LABEL=PYTHON` takes one made by "
                              "hand") from None  # fmt: skip
        if done.returncode != 0:
            shutil.rmtree(env, ignore_errors=True)
            why = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise JaxmlpError(
                f"could not make the environment of jax {version} ({why}); "
                "is the package index reachable? `--env LABEL=PYTHON` takes one made by hand"
            )
    (env / COMPLETE).write_text(f"{time.monotonic() - start:.1f}\n")
    return python_of(env)


@contextlib.contextmanager
def jaxmlp_path() -> Iterator[str]:
    """A folder holding only a link to this jaxmlp package: the ``PYTHONPATH`` of the worker processes."""
    package = Path(jaxmlp.__file__).resolve().parent
    with tempfile.TemporaryDirectory(prefix="jaxmlp-path-") as folder:
        os.symlink(package, Path(folder) / "jaxmlp")
        yield folder


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
        raise JaxmlpError(f"could not list {package}'s releases from the package index (offline?): "
                          "pass them by hand with --versions 0.6.2,0.7.0,0.7.1,...")  # fmt: skip
    return versions


def releases(jax: Sequence[str], jaxlib: Sequence[str]) -> list[str]:
    """The releases a sweep can measure: published for jax and jaxlib alike, from `OLDEST` on, oldest first."""
    both = set(jax) & set(jaxlib)
    return sorted((v for v in both if version_key(v) >= version_key(OLDEST)), key=version_key)


def between(known: Sequence[str], good: str, bad: str) -> list[str]:
    """``good``, the releases after it and before ``bad``, and ``bad``: oldest first (``good`` may be newer)."""
    lo, hi = sorted((good, bad), key=version_key)
    for end in (good, bad):
        if end not in known:
            raise JaxmlpError(f"jax {end} is not among the releases ({', '.join(known[-6:])}, ...)")
    return [v for v in known if version_key(lo) <= version_key(v) <= version_key(hi)]
