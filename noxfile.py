"""Sessions for jaxmlp: `nox -l` lists them; `nox -s NAME -- ARGS` passes ARGS through."""

import os
import re
import shutil
import sys
from pathlib import Path

import nox

ROOT = Path(__file__).parent
sys.path.insert(0, str(ROOT))
from jaxmlp import registry  # noqa: E402  (plain Python: the names the sessions share with the package)
from jaxmlp.results import layout  # noqa: E402

REPORTS = ROOT / layout.RESULTS_DIR

# The jax/jaxlib releases the version sweep measures by default (oldest to newest, all on Python 3.11).
JAX_VERSIONS = ("0.4.30", "0.5.3", "0.6.2", "0.8.3", "0.10.2")

nox.options.sessions = ["tests", "lint"]
nox.options.reuse_venv = "yes"  # torch is gigabytes: install it once per session's environment
nox.options.error_on_missing_interpreters = True


@nox.session
def train(session: nox.Session) -> None:
    """Train the tutorial's MLP: `nox -s train -- --data-dir DIR` (or `-- --dataset synthetic`)."""
    session.install("-e", ".")
    session.run("jaxmlp", "train", *session.posargs)


@nox.session
def tests(session: nox.Session) -> None:
    """Run the tests, then every benchmark once, tiny (real-MNIST tests skip unless JAXMLP_DATA_DIR is set)."""
    session.install("-e", ".[test]")
    session.run("pytest", *session.posargs)
    session.run("pytest", "bench", "--size=smoke", "--benchmark-disable", "-q", "-p", "no:cacheprovider")


@nox.session
def lint(session: nox.Session) -> None:
    """Check style and common mistakes with ruff, and types with mypy (strict on the core and the results layer)."""
    session.install("ruff", "mypy", "pandas-stubs", "numpy", "jax", "scipy")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("mypy")


def _bench(session: nox.Session, backends: str, extra: str) -> None:
    """Run bench/ into a new JSON under reports/, print its summary, render the report.

    Switches (after --): --full (more sizes and rounds); --profile (also capture one XLA trace per epoch
    pipeline into reports/traces, outside the timed rounds); --preinstalled (install nothing: run where
    jax, torch and the rest are already installed, e.g. with `nox --no-venv`); the rest goes to pytest.
    """
    args = list(session.posargs)
    size = "full" if "--full" in args else "quick"
    preinstalled = "--preinstalled" in args
    traces = "--profile" in args
    args = [a for a in args if a not in ("--full", "--preinstalled", "--profile")]
    env = {"PYTHONPATH": str(ROOT)} if preinstalled else {}
    if not preinstalled:
        session.install("-e", f".[{extra}]" if extra else ".")
    raw = Path(session.create_tmp()) / "bench-latest.json"  # filed into reports/ under its run's name by `summary`
    raw.unlink(missing_ok=True)
    session.run(
        "python", "-m", "pytest", "bench", "-p", "no:cacheprovider",
        f"--size={size}", f"--backends={backends}",
        f"--benchmark-json={raw}", "--benchmark-save-data", "--benchmark-columns=min,median,iqr,rounds",
        *args, env=env,
    )  # fmt: skip
    session.run("python", "-m", "jaxmlp", "summary", str(raw), "--save", str(REPORTS), env=env)
    if traces:
        for pipeline in registry.PIPELINES:
            session.run(
                "python", "-m", "jaxmlp", "profile", "--pipeline", pipeline, "--steps", "10",
                "--logdir", str(ROOT / layout.TRACES_DIR), "--backend", backends, *_data_args(), env=env,
            )  # fmt: skip
    session.run("python", "-m", "jaxmlp", "report", "--results", str(REPORTS), env=env)


def _data_args() -> list[str]:
    """Real MNIST where JAXMLP_DATA_DIR is set, else the (labelled) synthetic set."""
    return [] if os.environ.get("JAXMLP_DATA_DIR") else ["--dataset", "synthetic"]


@nox.session
def report(session: nox.Session) -> None:
    """Render every result under reports/ as summary.md, index.html (plots) and CSV in a new reports/report-*/."""
    session.install("-e", ".")
    session.run("jaxmlp", "report", *session.posargs)


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmark on the CPU (quick; `-- --full` for more); writes a new reports/bench-*.json and a summary."""
    _bench(session, backends="cpu", extra="")


@nox.session(name="bench-gpu")
def bench_gpu(session: nox.Session) -> None:
    """Benchmark on the GPU with JAX for CUDA (`nox --no-venv -s bench-gpu -- --preinstalled` where it is installed)."""
    if not (shutil.which("nvidia-smi") or any(Path("/dev").glob("nvidia[0-9]*"))):
        session.error(
            "no NVIDIA GPU on this machine (no nvidia-smi, no /dev/nvidia*): bench-gpu measures the GPU only; "
            "run `nox -s bench` for the CPU"
        )
    _bench(session, backends="gpu", extra="cuda")


@nox.session
def profile(session: nox.Session) -> None:
    """Capture an XLA trace: `nox -s profile -- --pipeline scan --steps 10` (into reports/traces)."""
    session.install("-e", ".")
    session.run("jaxmlp", "profile", *(session.posargs or _data_args()))


@nox.session
def tensorboard(session: nox.Session) -> None:
    """Serve TensorBoard with the profile plugin on 127.0.0.1 over reports/traces (`-- --port 6007`)."""
    session.install("-e", ".")
    session.run("jaxmlp", "tensorboard", *session.posargs)


def _version_python(session: nox.Session, version: str) -> str:
    """The python of jax==version's environment (.nox/jax-VERSION), made if missing: jax, jaxlib, and jaxmlp
    without its dependencies. No torch (gigabytes a version): the sweep measures the torch-free pipelines."""
    env = ROOT / ".nox" / f"jax-{version}"
    python = env / "bin" / "python"
    complete = env / ".jaxmlp-complete"  # written last: an install that failed halfway is made again
    if not complete.exists():
        shutil.rmtree(env, ignore_errors=True)
        session.run("python", "-m", "venv", str(env), external=True)
        session.run(str(python), "-m", "pip", "install", "-q", f"jax=={version}", f"jaxlib=={version}", external=True)
        session.run(str(python), "-m", "pip", "install", "-q", "--no-deps", "-e", str(ROOT), external=True)
        complete.touch()
    return str(python)


def _versions_and_options(session: nox.Session) -> tuple[list[str], list[str]]:
    """`-- 0.6.2 0.10.2 --processes 14`: the versions first (default: JAX_VERSIONS), then the sweep's options."""
    args = list(session.posargs)
    first_option = next((i for i, arg in enumerate(args) if arg.startswith("-")), len(args))
    versions, options = args[:first_option], args[first_option:]
    for version in versions:
        if not re.fullmatch(r"\d+(\.\d+)+", version):
            session.error(f"{version!r} is not a jax version: name versions first, then options "
                          "(nox -s bench-jaxlib -- 0.6.2 0.10.2 --processes 14)")  # fmt: skip
    return versions or list(JAX_VERSIONS), options


@nox.session(name="jaxlib-env", venv_backend="none")
@nox.parametrize("jax", JAX_VERSIONS)
def jaxlib_env(session: nox.Session, jax: str) -> None:
    """One version of the sweep's matrix: its environment (jax==V, jaxlib==V, no torch) and a check that it runs."""
    python = _version_python(session, jax)
    session.run(python, "-m", "jaxmlp.measure.sweep", "worker", "--dataset", "synthetic", "--limit", "512",
                "--epochs", "2", "--timed-steps", "2", external=True, silent=True)  # fmt: skip


@nox.session(name="bench-jaxlib")
def bench_jaxlib(session: nox.Session) -> None:
    """Epoch time across jax/jaxlib versions (`-- 0.6.2 0.10.2 --processes 14`), in rotating order, with statistics.

    After `--`: the versions (default: JAX_VERSIONS), then options of `python -m jaxmlp.measure.sweep run`."""
    versions, options = _versions_and_options(session)
    session.install("-e", ".", "--no-deps")
    session.install("jax", "numpy", "scipy", "pandas", "matplotlib", "platformdirs", "tqdm")
    envs = [f"--env={v}={_version_python(session, v)}" for v in versions]
    session.run("python", "-m", "jaxmlp.measure.sweep", "run", *envs, *_data_args(), "--out", str(REPORTS), *options)
    session.run("python", "-m", "jaxmlp", "report", "--results", str(REPORTS))
