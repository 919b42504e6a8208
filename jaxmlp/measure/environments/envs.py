"""The sweep's environments: one virtual environment per jax/jaxlib release, made once and kept. Plain Python."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import jaxmlp
from jaxmlp import installs
from jaxmlp.errors import JaxmlpError, unusable_folder
from jaxmlp.registry import version_key

OLDEST = "0.4.30"
"""The oldest release jaxmlp supports (`jaxmlp.compat`; pyproject's ``jax>=``)."""

UNHELD = ".jaxmlp-unheld"
"""Written into an environment made before the hold (`installs.HELD`) where pip could not install it: kept as it is,
not tried again at each use (an index that did not answer would cost each sweep its time limit)."""
COMPLETE = ".jaxmlp-complete"
"""Written last into an environment, with the seconds its install took: one without it is made again."""

MAKE_SECONDS = 1800
"""The longest one step of making an environment (a venv, a pip install) may take before it is stopped."""

RELEASE = re.compile(r"\d+(\.\d+)+(\.dev\d+)?")
"""A release number (``0.6.2``) or a nightly's (``0.4.36.dev20241122``: the release it leads to, and its build date)."""
WHEEL = re.compile(r"(jax|jaxlib)-(\d+(?:\.\d+)+(?:\.dev\d+)?)-([^-]+)-[^-]+-[^-]+\.whl")
"""A jax or jaxlib wheel's file name: its package, version and Python tag (``py3``, ``cp311``)."""
ACCELERATOR = {"gpu": ("cuda13", "jax_cuda13_plugin"), "tpu": ("tpu", "libtpu")}
"""Each accelerator backend's extra of the ``jax`` package (``jax[cuda13]==V``) and the package it must install."""
CUDA_BUILDS = (("0.7.2", "cuda13", "jax_cuda13_plugin"), ("0.4.30", "cuda12", "jax_cuda12_plugin"))
"""JAX's CUDA builds on the index, newest first: the first release with it, the ``jax`` extra, its plugin package
(jax-cuda13-plugin from 0.7.2, jax-cuda12-plugin from 0.4.30; a CUDA 12 build runs on a CUDA 13 driver)."""


def cuda_build(version: str) -> tuple[str, str] | None:
    """The newest CUDA build ``version`` has (`CUDA_BUILDS`: its extra and plugin package), or None."""
    for first, extra, package in CUDA_BUILDS:
        if version_key(version) >= version_key(first):
            return extra, package
    return None


@dataclass(frozen=True)
class Source:
    """Where a release's environment comes from and the accelerator packages it holds: part of its identity."""

    wheels: Path | None = None
    backend: str | None = None

    @property
    def suffix(self) -> str:
        """What the environment's folder name adds for this source ("" for the index, no accelerator)."""
        out = f"-{self.backend}" if self.backend in ACCELERATOR else ""
        if self.wheels is not None:
            digest = hashlib.sha256(str(self.wheels.resolve()).encode()).hexdigest()[:8]
            out += f"-wheels-{digest}"
        return out

    def accelerator(self, version: str) -> tuple[str, str] | None:
        """The ``jax`` extra and package ``version``'s environment takes for this backend; None where none."""
        return cuda_build(version) if self.backend == "gpu" else ACCELERATOR.get(self.backend or "")

    def check_builds(self, versions: Sequence[str]) -> None:
        """A one-line `JaxmlpError` naming those of ``versions`` without a build for this backend."""
        if lacking := [v for v in versions if self.backend == "gpu" and cuda_build(v) is None]:
            since = ", ".join(f"jax[{extra}] from {first}" for first, extra, _ in CUDA_BUILDS)
            raise JaxmlpError(
                f"--backend gpu: {', '.join(lacking)} has no CUDA build on the index ({since}): choose releases "
                f"from {CUDA_BUILDS[-1][0]} on, or measure {', '.join(lacking)} with --backend cpu"
            )

    def requirements(self, version: str) -> list[str]:
        build = self.accelerator(version)
        extra = f"[{build[0]}]" if build else ""
        return [f"jax{extra}=={version}", f"jaxlib=={version}"]

    def held(self) -> list[str]:
        """The held packages an environment from this source installs: all from the index, none from a wheel folder."""
        return installs.held() if self.wheels is None else []

    def pip_options(self) -> list[str]:
        return [] if self.wheels is None else ["--no-index", "--find-links", str(self.wheels)]

    def words(self) -> str:
        where = f"the wheels in {self.wheels}" if self.wheels is not None else "the package index"
        return where + (f", with the {self.backend} packages" if self.backend in ACCELERATOR else "")


INDEX = Source()


@dataclass(frozen=True)
class Interpreter:
    """A Python interpreter that can make an environment (CPython with ``venv``): its path and version."""

    path: str
    version: tuple[int, int, int]

    @property
    def minor(self) -> tuple[int, int]:
        return (self.version[0], self.version[1])

    @property
    def tag(self) -> str:
        """Its part of an environment's folder name (``py312``)."""
        return f"py{self.version[0]}{self.version[1]}"

    @property
    def words(self) -> str:
        return ".".join(map(str, self.version))


def running() -> Interpreter:
    """The interpreter running jaxmlp."""
    return Interpreter(sys.executable, (sys.version_info[0], sys.version_info[1], sys.version_info[2]))


LOCK = ".jaxmlp-envs.lock"
"""The file locked (``flock``) around making an environment, so that two sweeps never make the same one at once."""


def envs_root() -> Path:
    return Path(os.environ.get("JAXMLP_ENVS") or Path.home() / ".cache" / "jaxmlp" / "envs")


def env_path(version: str, root: Path | None = None, source: Source = INDEX, python: Interpreter | None = None) -> Path:
    """Where jax==version's environment from ``source`` made with ``python`` lives (its name holds the Python)."""
    return (root or envs_root()) / f"jax-{version}-{(python or running()).tag}{source.suffix}"


def release_of(name: str, source: Source = INDEX) -> str | None:
    """The release of an environment's folder name from ``source`` on any Python (``jax-0.12.1-py312``: 0.12.1)."""
    match = re.fullmatch(rf"jax-(.+)-py\d+{re.escape(source.suffix)}", name)
    return match.group(1) if match else None


def made_any(version: str, root: Path | None = None, source: Source = INDEX) -> bool:
    """Whether jax==version's environment from ``source`` is made here on some Python."""
    folder = root or envs_root()
    return any(release_of(m.parent.name, source) == version for m in folder.glob(f"jax-{version}-py*/{COMPLETE}"))


def python_of(env: Path) -> Path:
    return env / "bin" / "python"


def is_made(version: str, root: Path | None = None, source: Source = INDEX, python: Interpreter | None = None) -> bool:
    return (env_path(version, root, source, python) / COMPLETE).exists()


def check_release(version: str) -> str:
    if not RELEASE.fullmatch(version):
        raise JaxmlpError(f"{version!r} is not a jax release number (like 0.6.2)")
    if version_key(version) < version_key(OLDEST):
        raise JaxmlpError(f"jax {version} is older than {OLDEST}, the oldest release jaxmlp supports")
    return version


def used(env: Path) -> None:
    """Mark ``env`` as just used (its marker's time): the size cap removes the least recently used first."""
    with contextlib.suppress(OSError):
        os.utime(env / COMPLETE)


@contextlib.contextmanager
def locked(root: Path) -> Iterator[None]:
    """``root``'s environments to this process alone (an exclusive ``flock`` on its lock file) while inside."""
    root.mkdir(parents=True, exist_ok=True)
    with (root / LOCK).open("a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def make_env(
    version: str,
    root: Path | None = None,
    log: Callable[[str], None] = print,
    source: Source = INDEX,
    python: Interpreter | None = None,
) -> Path:
    """The python of jax==version's environment, made first where missing or half-made, under the environments' lock."""
    check_release(version)
    env = env_path(version, root, source, python)
    if (env / COMPLETE).exists() and not unheld(env, source):
        used(env)
        return python_of(env)
    try:
        with locked(env.parent):
            if (env / COMPLETE).exists():
                return _hold(version, env, log, source)
            return _make_env(version, env, root, log, source, sys.executable if python is None else python.path)
    except OSError as e:
        raise _unusable(env.parent, root, e) from None


def unheld(env: Path, source: Source = INDEX) -> list[str]:
    """The packages ``source`` holds that ``env`` has at or above their hold, by name."""
    if not source.held() or (env / UNHELD).exists():
        return []
    found = (
        info.name.removesuffix(".dist-info").split("-", 1)
        for info in env.glob("lib/python*/site-packages/*-*.dist-info")
    )
    return [n for n, v in found if n in installs.HELD and version_key(v) >= version_key(installs.HELD[n])]


def _hold(version: str, env: Path, log: Callable[[str], None], source: Source) -> Path:
    """The python of ``env`` with its held packages installed
    below their hold; as it is, in a line, where pip cannot."""
    if unheld(env, source):  # not already done by another process while this one waited for the lock
        held = ", ".join(source.held())
        log(f"Holding {held} in the environment of jax {version} (made before the hold)")
        pip = [str(python_of(env)), "-m", "pip", "install", "-q", "--disable-pip-version-check", *source.held()]
        try:
            done = subprocess.run(pip, capture_output=True, text=True, timeout=installs.PROBE_SECONDS)
            failed = done.returncode != 0
        except subprocess.TimeoutExpired:
            failed = True
        if failed:
            (env / UNHELD).write_text(f"{held}\n")
            log(
                f"could not install {held} into {env}: kept as it is, not tried again (its processes import "
                f"ml_dtypes slower; remove {UNHELD} there to try again)"
            )
    used(env)
    return python_of(env)


def _unusable(folder: Path, root: Path | None, error: OSError) -> JaxmlpError:
    """The one line of an environments folder that cannot be made or written: the setting that gave it, and why."""
    if root is None and not os.environ.get("JAXMLP_ENVS"):
        return unusable_folder(folder, "the environments folder (set JAXMLP_ENVS to choose another)", error)
    return unusable_folder(folder, "--envs" if root is not None else "JAXMLP_ENVS", error)


def _make_env(
    version: str, env: Path, root: Path | None, log: Callable[[str], None], source: Source, base: str
) -> Path:
    shutil.rmtree(env, ignore_errors=True)
    try:
        env.parent.mkdir(parents=True, exist_ok=True)
        probe = env.parent / f".jaxmlp-probe-{os.getpid()}"
        probe.write_text("")
        probe.unlink()
    except OSError as e:
        raise _unusable(env.parent, root, e) from None
    log(
        f"Making the environment of jax {version} in {env} from {source.words()} with {base} (jax, jaxlib and "
        "what they need)"
    )
    start = time.monotonic()
    venv = [base, "-m", "venv", str(env)]
    _step(version, env, venv, source)
    pip = [str(python_of(env)), "-m", "pip", "install", "-q", "--disable-pip-version-check", *source.pip_options()]
    _step(version, env, [*pip, *source.requirements(version), *source.held()], source)
    (env / COMPLETE).write_text(f"{time.monotonic() - start:.1f}\n")
    return python_of(env)


def _step(version: str, env: Path, command: Sequence[str], source: Source) -> None:
    """One step of making jax==version's environment, under `MAKE_SECONDS`; one that fails removes ``env``."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=MAKE_SECONDS)
    except subprocess.TimeoutExpired:
        shutil.rmtree(env, ignore_errors=True)
        raise JaxmlpError(
            f"making the environment of jax {version} took over {MAKE_SECONDS} s and was stopped: "
            "is the package index slow or unreachable? `--env LABEL=PYTHON` takes one made by hand"
        ) from None
    lacking = [line for line in done.stderr.splitlines() if "does not provide the extra" in line]
    if done.returncode != 0 or lacking:
        shutil.rmtree(env, ignore_errors=True)
        why = (lacking or done.stderr.strip().splitlines() or ["no output"])[-1].removeprefix("WARNING: ")
        raise JaxmlpError(f"could not make the environment of jax {version} ({why}); {_fix(version, source)}")


def _fix(version: str, source: Source) -> str:
    """What to do when an environment could not be made from ``source``."""
    if source.wheels is not None:
        wanted = " ".join(f"'{r}'" for r in source.requirements(version))
        return f"`pip download {wanted} -d {source.wheels}` adds what the folder lacks"
    return "is the package index reachable? `--env LABEL=PYTHON` takes one made by hand"


@contextlib.contextmanager
def jaxmlp_path() -> Iterator[str]:
    """A folder holding only a link to this jaxmlp package: the ``PYTHONPATH`` of the worker processes."""
    package = Path(jaxmlp.__file__).resolve().parent
    with tempfile.TemporaryDirectory(prefix="jaxmlp-path-") as folder:
        os.symlink(package, Path(folder) / "jaxmlp")
        yield folder
