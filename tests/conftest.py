import gzip
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from jaxmlp.installs import TEST_JAX_CACHE, TEST_WAITING

for _name, _value in TEST_WAITING.items():  # before any test imports torch, for every process it starts
    os.environ.setdefault(_name, _value)


def pytest_configure(config):
    """One compilation cache for the whole session: made by the controller before its workers start (they and every
    process the tests start inherit its environment), removed at its end."""
    if hasattr(config, "workerinput"):
        return
    import tempfile

    folder = tempfile.mkdtemp(prefix="jaxmlp-tests-jax-cache-")
    config._jaxmlp_jax_cache = folder
    os.environ.update({**TEST_JAX_CACHE, "JAX_COMPILATION_CACHE_DIR": folder})


def pytest_unconfigure(config):
    folder = getattr(config, "_jaxmlp_jax_cache", None)
    if folder:
        import shutil

        shutil.rmtree(folder, ignore_errors=True)


MNIST_HOWTO = (
    "real MNIST files not found: set JAXMLP_DATA_DIR to a folder holding the four MNIST IDX files "
    "(gzipped or not) to run this test"
)


@pytest.fixture(scope="session", autouse=True)
def _cache_dir(tmp_path_factory):
    """Prepared data goes to a temporary cache, never the user's."""
    old = os.environ.get("JAXMLP_CACHE_DIR")
    os.environ["JAXMLP_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))
    yield
    if old is None:
        os.environ.pop("JAXMLP_CACHE_DIR", None)
    else:
        os.environ["JAXMLP_CACHE_DIR"] = old


EXPLAIN_FAKED = "explain faked in tests"


@pytest.fixture(autouse=True)
def explained(monkeypatch):
    """The sweep commands explain what they find (`jaxmlp sweep explain`, real release environments and processes):
    in every test a recorder of what they asked for stands in, failing in one line as an explanation that cannot be
    made does (tests/test_forensics.py runs `explain` for real: it imports the function itself, which this leaves
    alone)."""
    calls = []
    from jaxmlp.errors import JaxmlpError
    from jaxmlp.results.sweep import explain_files

    def explain(where, a, b, workload, *args, **kwargs):
        calls.append((a, b, workload))
        raise JaxmlpError(EXPLAIN_FAKED)

    monkeypatch.setattr(explain_files, "explain", explain)
    return calls


@pytest.fixture(scope="session")
def mnist_dir() -> Path:
    """The folder with the real MNIST files, or a skip that says how to provide it."""
    from jaxmlp.pipelines.data import find_idx_files

    env = os.environ.get("JAXMLP_DATA_DIR")
    if not env:
        pytest.skip(MNIST_HOWTO)
    folder = Path(env)
    if find_idx_files(folder) is None and find_idx_files(folder / "MNIST" / "raw") is None:
        pytest.skip(f"{MNIST_HOWTO} (JAXMLP_DATA_DIR={env} holds no IDX files)")
    return folder


@pytest.fixture(scope="session")
def mnist(mnist_dir):
    from jaxmlp.pipelines.data import load_datasets

    return load_datasets("mnist", mnist_dir)


SHARDED_TRAIN = ["train", "--pipeline", "sharded", "--dataset", "synthetic", "--limit", "4096", "--backend", "cpu"]
"""The sharded pipeline's training that several processes are compared with (tests/test_sharded.py, test_mpi.py)."""


def scaling_argv(devices: list[str], out: Path) -> list[str]:
    """`jaxmlp scaling` over `devices` in one and two processes, 2 short epochs each (test_sharded.py, test_mpi.py)."""
    return [
        *("-m", "jaxmlp", "scaling", "--devices", *devices, "--processes", "1", "2"),
        *("--dataset", "synthetic", "--limit", "1024", "--epochs", "2", "--calls", "2", "--out", str(out)),
    ]


def ranks_of(launcher: int, variable: bytes) -> dict[int, int]:
    """The process id of each process `launcher` started, by its rank: its environment's `variable`."""
    import subprocess

    ranks = {}
    for pid in map(int, subprocess.run(["pgrep", "-P", str(launcher)], capture_output=True, text=True).stdout.split()):
        with open(f"/proc/{pid}/environ", "rb") as f:
            env = dict(v.split(b"=", 1) for v in f.read().split(b"\0") if b"=" in v)
        if variable in env:
            ranks[int(env[variable])] = pid
    return ranks


def kill_rank_one(job, variable: bytes) -> tuple[dict[int, int], int, float, str]:
    """Once both ranks of `job` train, SIGKILL rank 1 and wait for the job: the ranks, its exit code, the seconds it
    took to end and its stderr (test_sharded.py, test_mpi.py)."""
    import signal
    import time

    for line in job.stdout:  # both ranks are training
        if line.startswith("Epoch 0 in"):
            break
    ranks = ranks_of(job.pid, variable)
    assert set(ranks) == {0, 1}
    os.kill(ranks[1], signal.SIGKILL)
    start = time.monotonic()
    code = job.wait(timeout=60)
    return ranks, code, time.monotonic() - start, job.stderr.read()


@pytest.fixture(scope="session")
def trained_alone(tmp_path_factory) -> tuple[list[dict], str]:
    """`SHARDED_TRAIN` for 2 epochs on one CPU device, run once for every test that compares a run of several
    processes with it: its epoch records and its output. In this process where it has one CPU device (what a process
    of its own would be given: `scaling.worker_environment(1, "cpu")`), else in a process of its own."""
    import contextlib
    import io
    import json
    import subprocess
    import sys

    import jax

    from jaxmlp.cli import main
    from jaxmlp.measure import scaling

    out = tmp_path_factory.mktemp("alone") / "train.json"
    argv = [*SHARDED_TRAIN, "--epochs", "2", "--json", str(out)]
    if jax.default_backend() == "cpu" and jax.device_count() == 1:
        said = io.StringIO()
        with contextlib.redirect_stdout(said):
            assert main(argv) == 0
        return json.loads(out.read_text())["records"], said.getvalue()
    done = subprocess.run(
        [sys.executable, "-m", "jaxmlp", *argv],
        capture_output=True,
        text=True,
        timeout=300,
        env=scaling.worker_environment(1, "cpu"),
    )
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text())["records"], done.stdout


def idx_bytes(kind: str, count: int, seed: int = 0) -> bytes:
    """A valid IDX file: ``kind`` is "images" (count x 28 x 28 uint8) or "labels" (count uint8 in 0-9)."""
    rng = np.random.default_rng(seed)
    if kind == "images":
        header = np.array([2051, count, 28, 28], ">u4").tobytes()
        return header + rng.integers(0, 256, count * 784, dtype=np.uint8).tobytes()
    header = np.array([2049, count], ">u4").tobytes()
    return header + rng.integers(0, 10, count, dtype=np.uint8).tobytes()


def write_idx_folder(folder: Path, gz: bool, overrides: dict[str, bytes] | None = None) -> Path:
    """A folder with the four MNIST-sized IDX files (random content), some replaced by ``overrides``."""
    from jaxmlp.pipelines.data import MNIST_FILES

    folder.mkdir(parents=True, exist_ok=True)
    for spec in MNIST_FILES:
        raw = (overrides or {}).get(spec.name)
        if raw is None:
            raw = idx_bytes("images" if spec.item_shape else "labels", spec.count)
        if gz:
            (folder / f"{spec.name}.gz").write_bytes(gzip.compress(raw, compresslevel=1))
        else:
            (folder / spec.name).write_bytes(raw)
    return folder


EARLIER_TRIALS = {
    "pipeline": "batched",
    "processes_per_side": 3,
    "rounds": 0,
    "inject_slowdown": 0.1,
    "threshold": 0.05,
    "alpha": 0.01,
    "limit": None,
    "epochs": 4,
    "dataset": "synthetic",
}
"""The settings of detector trials as an earlier jaxmlp wrote them (test_results.py, test_sweep.py)."""


def env_options(**pythons: str) -> list[str]:
    """``--env LABEL=PYTHON`` for each environment made by hand of ``pythons`` (label: its Python)."""
    return [arg for label, python in pythons.items() for arg in ("--env", f"{label}={python}")]


TWO_ENVS = env_options(A=sys.executable, B=sys.executable)
"""Two environments made by hand, A and B, both this interpreter's."""


def made_releases(
    root: Path,
    *versions: str,
    removed: dict[str, str] | None = None,
    exported: dict[str, dict[str, str]] | None = None,
    wheels: Path | None = None,
) -> dict[str, str]:
    """Release environments under ``root`` as jaxmlp finds them made (their marker written), each running this
    interpreter, its own environment kept: the commands that measure releases run offline, their processes real.
    In those of ``removed`` (release: the name it removed) tests/workloads/removed_api.py fails; those of
    ``exported`` (release: variables) set those variables; ``wheels``: made from that folder of wheels. Returns the
    environment variable that points a command at them."""
    from jaxmlp.measure.environments import envs

    source = envs.Source(wheels) if wheels is not None else envs.INDEX
    for version in [*versions, *(removed or {})]:
        env = envs.env_path(version, root, source)
        (env / "bin").mkdir(parents=True)
        python = envs.python_of(env)
        told = f"export REMOVED_API={(removed or {})[version]}\n" if (removed or {}).get(version) else ""
        told += "".join(f"export {k}={v}\n" for k, v in (exported or {}).get(version, {}).items())
        python.write_text(f'#!/bin/sh\n{told}exec "{sys.executable}" "$@"\n')
        python.chmod(0o755)
        (env / envs.COMPLETE).write_text("1")
    return {"JAXMLP_ENVS": str(root)}
