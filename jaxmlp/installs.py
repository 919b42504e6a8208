"""What a host's package index offers of jaxmlp's requirements, and one line naming what is missing. Plain Python."""

from __future__ import annotations

import os
import re
import subprocess
import tomllib
import urllib.request
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType

MAY_LACK: Mapping[str, tuple[str, str]] = MappingProxyType(
    {
        "torch": ("torch", "the seed, seed_batched and torch pipelines and torch's products"),
        "torchvision": ("torchvision", "nothing (jaxmlp's IDX reader reads MNIST for the tutorial's DataLoader)"),
        "grain": ("grain", "the grain pipeline"),
        "ruptures": ("ruptures", "the change points across runs"),
        "datasets": ("datasets", "the hf pipeline"),
        "tensorboard-plugin-profile": (
            "xprof",
            "the operation tables (computed where the run is read, with xprof there) and TensorBoard's profile",
        ),
    }
)
"""The requirements a JAX host's index may not have: pip name → (the module it installs, what runs without it)."""

TUTORIAL = "tutorial"
"""The extra that adds the tutorial's packages (torch, torchvision, grain, pytest-benchmark, TensorBoard's profile) to
the light install, which `track`, the sweeps, `compare`, `summary` and `report` need alone."""

TUTORIAL_MODULES = frozenset(
    {"torch", "torchvision", "grain", "pytest_benchmark", "tensorboard", "tensorboard_plugin_profile", "xprof"}
)
"""The modules that only the `TUTORIAL` extra installs."""


def tutorial_line(module: str | None) -> str | None:
    """The one line for a command that needs ``module`` from the tutorial extra; None where it is not the extra's."""
    root = (module or "").split(".")[0]
    if root not in TUTORIAL_MODULES:
        return None
    return f"this needs {root}, which the light install leaves out: pip install 'jaxmlp[{TUTORIAL}]'"


HELD: Mapping[str, str] = MappingProxyType({"ml_dtypes": "0.7"})
"""Packages held below a release wherever jaxmlp installs JAX (docs/questions/releases.md)."""


TEST_JAX_CACHE: Mapping[str, str] = MappingProxyType(
    {"JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0", "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0"}
)
"""With ``JAX_COMPILATION_CACHE_DIR``: every compile of a test run kept on disk, so each compiles once."""

TEST_WAITING: Mapping[str, str] = MappingProxyType({"OMP_WAIT_POLICY": "PASSIVE"})
"""torch's OpenMP threads sleep while they wait in a test run instead of spinning (docs/getting-started.md)."""


def held() -> list[str]:
    """`HELD` as pip requirements (``ml_dtypes<0.7``)."""
    return [f"{name}<{below}" for name, below in HELD.items()]


PROBE_SECONDS = 120
"""The time limit of one look into the index (pip's dry run of one requirement)."""


def requirements(pyproject: Path, extras: Iterable[str] = ()) -> list[str]:
    """jaxmlp's requirements as pyproject.toml lists them, with those of ``extras``."""
    project = tomllib.loads(pyproject.read_text())["project"]
    found = list(project["dependencies"])
    for extra in extras:
        found += project["optional-dependencies"][extra]
    return found


def name_of(requirement: str) -> str:
    """A requirement's project name, normalized: ``torchvision>=0.16`` → ``torchvision``, ``jax[tpu]`` → ``jax``."""
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    return re.sub(r"[-_.]+", "-", match.group(1)).lower() if match else requirement.strip().lower()


def absent_modules(python: str, modules: Sequence[str]) -> set[str]:
    """Those of ``modules`` that ``python`` cannot import (looked up, not imported)."""
    code = "import importlib.util as u, sys; print(' '.join(m for m in sys.argv[1:] if u.find_spec(m) is None))"
    done = subprocess.run(
        [python, "-c", code, *modules], capture_output=True, text=True, timeout=PROBE_SECONDS, check=True
    )
    return set(done.stdout.split())


def offered(python: str, requirement: str, pip_args: Sequence[str] = ()) -> bool:
    """Whether pip as configured finds a distribution of ``requirement`` for ``python`` (a dry run)."""
    command = [python, "-m", "pip", "install", "--dry-run", "--no-deps", "--ignore-installed", "-q"]
    try:
        done = subprocess.run([*command, *pip_args, requirement], capture_output=True, text=True, timeout=PROBE_SECONDS)
    except subprocess.TimeoutExpired:
        return False
    return done.returncode == 0


def lacking(
    python: str,
    wanted: Sequence[str],
    pip_args: Sequence[str] = (),
    may_lack: Mapping[str, tuple[str, str]] = MAY_LACK,
    look: bool = True,
) -> list[str]:
    """Those of ``wanted`` in ``may_lack`` that ``python`` can neither import nor install (``look`` False: import)."""
    candidates = [r for r in wanted if name_of(r) in may_lack]
    absent = absent_modules(python, [may_lack[name_of(r)][0] for r in candidates])
    missing = [r for r in candidates if may_lack[name_of(r)][0] in absent]
    return [name_of(r) for r in missing if not (look and offered(python, r, pip_args))]


def missing_line(session: str, missing: Sequence[str], may_lack: Mapping[str, tuple[str, str]] = MAY_LACK) -> str:
    """The one line a session says for what it cannot install: each package, and what runs without it."""
    skipped = "; ".join(f"{name}: {may_lack[name][1]}" for name in missing)
    return (
        f"{session}: this host's package index has no {', '.join(missing)}: the rest is installed; skipped without "
        f"them: {skipped}"
    )


DEFAULT_INDEX = "https://pypi.org/simple/"
INDEX_SECONDS = 10
"""The time limit of asking whether a package index answers (`index_answers`)."""


def index_url(environ: Mapping[str, str] = os.environ) -> str | None:
    """The package index pip would use (``PIP_INDEX_URL``, else PyPI), or None where ``PIP_NO_INDEX`` says none."""
    if environ.get("PIP_NO_INDEX", "").lower() in ("1", "true", "yes", "on"):
        return None
    return environ.get("PIP_INDEX_URL") or DEFAULT_INDEX


def index_answers(url: str | None, seconds: float = INDEX_SECONDS) -> bool:
    """Whether the package index at ``url`` answers within ``seconds`` (a ``file://`` one: its folder exists)."""
    if url is None:
        return False
    if url.startswith("file://"):
        return Path(url.removeprefix("file://")).is_dir()
    try:
        urllib.request.urlopen(url, timeout=seconds).close()  # noqa: S310  # the index pip is configured with
    except (OSError, ValueError):
        return False
    return True


def no_index_line(session: str, url: str | None) -> str:
    """The one line a session that installs from an index says where none answers at ``url``, and what to run."""
    where = "pip is told to use none (PIP_NO_INDEX)" if url is None else f"none answers at {url}"
    return (
        f"nox -s {session} installs jaxmlp and JAX for CUDA from a package index, and {where}: where JAX for CUDA is "
        f"installed, run `nox --no-venv -s {session} -- --preinstalled`, or bench/accelerator/run.sh (its missing "
        "wheels gathered by bench/accelerator/prepare.sh on a machine with an index)"
    )
