"""Sessions for jaxmlp: `nox -l` lists them; `nox -s NAME -- ARGS` passes ARGS through."""

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import nox

ROOT = Path(__file__).parent
sys.path.insert(0, str(ROOT))
from jaxmlp import installs, registry  # noqa: E402  (plain Python: the names the sessions share with the package)
from jaxmlp.cli import options  # noqa: E402
from jaxmlp.results.store import layout  # noqa: E402

REPORTS = ROOT / layout.RESULTS_DIR
TEST_WORKERS = 2  # the CI machines' cores
SMOKE_ALL_PRECISIONS = "scan,torch_compile"
"""The epochs `nox -s tests`' smoke run of the benchmarks measures in every precision; the other pipelines' in f32
only: their bf16 epochs are checked in tests/test_precision.py (every pipeline but torch_compile computes the bf16
scan epoch there); the smoke run keeps the bf16 benchmark's own path (scan) and torch_compile's (checked nowhere
else)."""

nox.options.sessions = ["tests", "lint"]
nox.options.reuse_venv = "yes"  # torch is gigabytes: install it once per session's environment
nox.options.error_on_missing_interpreters = True

UPGRADE = "--upgrade"
"""After `--` in every session that installs jax: install the newest jax and jaxlib again into the reused environment
(``reuse_venv`` keeps the first it installed, so that a nightly session would never see a new release)."""
SAY_JAX = (
    "import jax, jaxlib; print(f'{SESSION}: measuring jax {jax.__version__}, jaxlib {jaxlib.__version__} "
    "(`-- --upgrade` installs the newest into this reused environment)')"
)


def _jax(session: nox.Session, *, upgrade: bool | None = None, env: dict[str, str] | None = None) -> list[str]:
    """After the session's installs: the newest jax and jaxlib installed again where `UPGRADE` was given (``upgrade``
    where the caller parsed it), and the jax and jaxlib it measures said; the session's arguments without it."""
    given = UPGRADE in session.posargs if upgrade is None else upgrade
    if given:
        session.install("--upgrade", "jax", "jaxlib")
    session.run("python", "-c", SAY_JAX.replace("{SESSION}", session.name), env=env or {})
    return [a for a in session.posargs if a != UPGRADE]


@nox.session
def train(session: nox.Session) -> None:
    """Train the tutorial's MLP: `nox -s train -- --data-dir DIR` (or `-- --dataset synthetic`)."""
    session.install("-e", f".[{installs.TUTORIAL}]")
    session.run("jaxmlp", "train", *_jax(session))


@nox.session
def tests(session: nox.Session) -> None:
    """Run the tests on 2 workers (pytest-xdist; the tests that start processes of their own, group `processes`,
    one after another on one of them), then every benchmark once, tiny, on 2 workers too (--benchmark-disable: a
    check that each runs, timing nothing; the epochs in bf16 for `SMOKE_ALL_PRECISIONS` only); real-MNIST tests
    skip unless JAXMLP_DATA_DIR is set. `-- ARGS` go to the first pytest, after ours (`-- -n 0` runs serially)."""
    session.install("-e", f".[{installs.TUTORIAL},test]")
    session.install(*installs.held())  # after: never a jax held back for it (pip says so if one needs more)
    session.install("--no-deps", "apache-otava==0.8.0")  # the peer suite's other detector (pyproject.toml: why)
    workers = ["-n", str(TEST_WORKERS)]
    session.run("pytest", *workers, "--dist", "loadgroup", *_jax(session))
    smoke = ["--size=smoke", "--benchmark-disable", f"--all-precisions={SMOKE_ALL_PRECISIONS}"]
    with tempfile.TemporaryDirectory(prefix="jaxmlp-smoke-jax-cache-") as cache:  # as tests/conftest.py's
        env = {**installs.TEST_JAX_CACHE, **installs.TEST_WAITING, "JAX_COMPILATION_CACHE_DIR": cache}
        session.run("pytest", "bench", *smoke, "-q", "-p", "no:cacheprovider", *workers, env=env)


@nox.session
def lint(session: nox.Session) -> None:
    """Check style and common mistakes with ruff, and types with mypy (strict on the whole package)."""
    session.install("ruff", "mypy", "pandas-stubs", "numpy", "jax", "scipy")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("mypy")


TPU_ROUNDS = ("--rounds=3", "--slow-rounds=1")
"""bench-tpu's rounds unless asked (`-- --rounds N`, --full): the accelerator check's, whose logs time each benchmark
(bench/accelerator/bench_progress.py reads them to say how long the run will take)."""


def _bench(session: nox.Session, backends: str, extra: str, from_host: bool = False, progress: bool = False) -> None:
    """Run bench/ into a new JSON under reports/, print its summary, render the report.

    Switches (after --): --full (more sizes and rounds); --profile (also capture one XLA trace per epoch
    pipeline into reports/traces, outside the timed rounds); --preinstalled (install nothing: run where
    jax, torch and the rest are already installed, e.g. with `nox --no-venv`); the rest goes to pytest.
    ``from_host``: install what the host's package index has (`_install_from_host`), naming what it lacks.
    ``progress``: `TPU_ROUNDS` where no rounds are asked, and the run says at its start how long it will take and
    then how far it is (bench/accelerator/bench_progress.py).
    """
    switches, args = options.bench_session().parse_known_args(session.posargs)
    size = "full" if switches.full else "quick"
    # Preinstalled: this checkout first, then whatever PYTHONPATH holds already (e.g. carried wheels' --target).
    env = (
        {"PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        if switches.preinstalled
        else {}
    )
    if from_host:
        _install_from_host(session, (installs.TUTORIAL, "hf"), look=not switches.preinstalled)
    elif not switches.preinstalled:
        session.install("-e", f".[{','.join(e for e in (extra, installs.TUTORIAL, 'hf') if e)}]")  # hf: its pipeline
    if switches.upgrade and (switches.preinstalled or from_host):
        session.error("--upgrade installs jax into the session's environment: not with --preinstalled or bench-tpu")
    _jax(session, upgrade=switches.upgrade, env=env)
    if progress:
        asked = any(a.startswith(("--rounds", "--slow-rounds")) for a in args)
        args = [*(() if asked or switches.full else TPU_ROUNDS), *args, "-p", "bench_progress"]
        here = str(ROOT / "bench" / "accelerator")
        env = {**env, "PYTHONPATH": os.pathsep.join(filter(None, [env.get("PYTHONPATH"), here]))}
        env["JAXMLP_PROGRESS_BACKEND"] = backends
    raw = Path(session.create_tmp()) / "bench-latest.json"  # filed into reports/ under its run's name by `summary`
    raw.unlink(missing_ok=True)
    session.run(
        "python",
        "-m",
        "pytest",
        "bench",
        "-p",
        "no:cacheprovider",
        f"--size={size}",
        f"--backends={backends}",
        f"--benchmark-json={raw}",
        "--benchmark-save-data",
        "--benchmark-columns=min,median,iqr,rounds",
        *args,
        env=env,
    )
    session.run("python", "-m", "jaxmlp", "summary", str(raw), "--save", str(REPORTS), env=env)
    if switches.profile:
        for pipeline in registry.PROFILED_PIPELINES:  # XLA's profiler: the JAX pipelines (pallas: a TPU's)
            if backends not in registry.PIPELINE_BACKENDS.get(pipeline, (backends,)):
                continue
            session.run(
                "python",
                "-m",
                "jaxmlp",
                "profile",
                "--pipeline",
                pipeline,
                "--steps",
                "10",
                "--logdir",
                str(ROOT / layout.TRACES_DIR),
                "--backend",
                backends,
                *_data_args(),
                env=env,
            )
    # Data-parallel scaling over the GPUs or TPU chips (the CPU: `nox -s bench-scaling`); one device: N = 1, saying so.
    if backends in registry.ACCELERATORS:
        session.run(
            "python", "-m", "jaxmlp", "scaling", "--backend", backends, "--out", str(REPORTS), *_data_args(), env=env
        )
    session.run("python", "-m", "jaxmlp", "report", "--results", str(REPORTS), env=env)


def _install_from_host(session: nox.Session, extras: tuple[str, ...], look: bool = True) -> None:
    """Install jaxmlp and those of its requirements the host's index has (``PIP_INDEX_URL``; torch's CPU wheels in
    ``$JAXMLP_TPU_WHEELS``, default /opt/wheels), beside the host's own JAX (the session sees the system's packages);
    those it lacks (`installs.MAY_LACK`) named in one line with what is skipped for them. ``look``: False
    (--preinstalled) installs nothing and names those this Python lacks."""
    try:
        python = shutil.which("python", path=session.bin) or sys.executable
    except ValueError:  # `nox --no-venv`: the Python that runs nox
        python = sys.executable
    wheels = Path(os.environ.get("JAXMLP_TPU_WHEELS", "/opt/wheels"))
    links = ["--find-links", str(wheels)] if wheels.is_dir() else []
    wanted = installs.requirements(ROOT / "pyproject.toml", extras)
    missing = installs.lacking(python, wanted, links, look=look)
    if missing:
        session.warn(installs.missing_line(session.name, missing))
    if look:
        session.install(*links, "--no-deps", "--no-build-isolation", "-e", ".")  # built with the environment's own
        session.install(*links, *[r for r in wanted if installs.name_of(r) not in missing])


def _data_args() -> list[str]:
    """Real MNIST where JAXMLP_DATA_DIR is set, else the (labelled) synthetic set."""
    return [] if os.environ.get("JAXMLP_DATA_DIR") else ["--dataset", "synthetic"]


@nox.session
def report(session: nox.Session) -> None:
    """Render every result under reports/ as summary.md, index.html (plots) and CSV in a new reports/report-*/."""
    session.install("-e", f".[{installs.TUTORIAL}]")  # xprof: the traces' operation tables
    session.run("jaxmlp", "report", *_jax(session))


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
    switches, _ = options.bench_session().parse_known_args(session.posargs)
    if not switches.preinstalled and not installs.index_answers(url := installs.index_url()):
        session.error(installs.no_index_line("bench-gpu", url))  # one line, not pip's retries and traceback
    _bench(session, backends="gpu", extra="cuda")


@nox.session(name="bench-tpu", venv_params=["--system-site-packages"])
def bench_tpu(session: nox.Session) -> None:
    """Benchmark on the TPU with the host's JAX and libtpu (its environment sees the system's packages) and what the
    host's package index has of the rest, naming what it lacks in one line (`--preinstalled`: install nothing); at the
    accelerator check's rounds unless asked (`TPU_ROUNDS`), saying at its start how long it will take (each
    benchmark at its duration in the earlier TPU runs' logs, the rest estimated) and how to make it shorter, then
    every 30 s how far it is and how long is left."""
    if not (any(Path("/dev").glob("accel[0-9]*")) or any(k.startswith("TPU_") for k in os.environ)):
        session.error(
            "no TPU on this machine (no /dev/accel*, no TPU_* variables): bench-tpu measures the TPU only; "
            "run `nox -s bench` for the CPU"
        )
    _bench(session, backends="tpu", extra="tpu", from_host=True, progress=True)


@nox.session(name="bench-scaling")
def bench_scaling(session: nox.Session) -> None:
    """Data-parallel scaling of the sharded pipeline on 1, 2, 4, 8 simulated CPU devices, a fresh process each
    (`-- --devices 1 2`, any `jaxmlp scaling` option); writes reports/scaling-*.json and a new report."""
    session.install("-e", f".[{installs.TUTORIAL}]")
    args = _jax(session)
    session.run("python", "-m", "jaxmlp", "scaling", "--out", str(REPORTS), *(args or _data_args()))
    session.run("python", "-m", "jaxmlp", "report", "--results", str(REPORTS))


@nox.session
def profile(session: nox.Session) -> None:
    """Capture an XLA trace: `nox -s profile -- --pipeline scan --steps 10` (into reports/traces)."""
    session.install("-e", f".[{installs.TUTORIAL}]")
    session.run("jaxmlp", "profile", *(_jax(session) or _data_args()))


@nox.session
def tensorboard(session: nox.Session) -> None:
    """Serve TensorBoard with the profile plugin on 127.0.0.1 over reports/traces (`-- --port 6007`)."""
    session.install("-e", f".[{installs.TUTORIAL}]")
    session.run("jaxmlp", "tensorboard", *_jax(session))


@nox.session(name="jaxlib-env", venv_backend="none")
@nox.parametrize("jax", registry.SWEEP_VERSIONS)
def jaxlib_env(session: nox.Session, jax: str) -> None:
    """One release of the sweep's matrix: its environment (jax==V, jaxlib==V, no torch) and a check that it runs."""
    from jaxmlp.measure.environments import envs, pythons  # plain Python, like the registry

    chosen = pythons.for_releases([jax], say=session.log)  # the Python the release needs
    python = str(envs.make_env(jax, log=session.log, python=chosen[jax]))
    check = json.dumps({"dataset": "synthetic", "limit": 512, "epochs": 2, "calls": 2})  # a `Measuring`, as JSON
    with envs.jaxmlp_path() as path:
        session.run(
            python,
            "-m",
            "jaxmlp.measure.sweep.worker",
            check,
            env={"PYTHONPATH": path, "JAX_PLATFORMS": "cpu"},
            external=True,
            silent=True,
        )


@nox.session(name="bench-jaxlib")
def bench_jaxlib(session: nox.Session) -> None:
    """Epoch time across jax/jaxlib releases (`-- 0.6.2 0.10.2 --processes 14`), in rotating order, with statistics.

    After `--`: arguments of `jaxmlp sweep run` (releases first; default: registry.SWEEP_VERSIONS)."""
    _install_sweep(session)
    session.run("jaxmlp", "sweep", "run", *_data_args(), "--out", str(REPORTS), *_jax(session))
    session.run("jaxmlp", "report", "--results", str(REPORTS))


@nox.session
def track(session: nox.Session) -> None:
    """Every jax/jaxlib release newer than the last one tracked in reports/, measured against it and the pinned one
    (`-- --pinned 0.7.0 --workload mine.py:make --site site --message message.md`); exits with track's code.

    The releases are measured in their own environments (the sweep's), never with this session's jax: the reused
    environment's jax only runs the command. After `--`: arguments of `jaxmlp track`."""
    _install_sweep(session)
    try:
        session.run("jaxmlp", "track", *_data_args(), "--out", str(REPORTS), *session.posargs)
    except nox.command.CommandFailed as e:  # the gate's code is the session's (nox says 1 for any failure)
        session.log(f"jaxmlp track exited {e.return_code}")
        sys.exit(e.return_code)


@nox.session
def corpus(session: nox.Session) -> None:
    """The corpus of known regressions (bench/corpus/corpus.toml) run as a user would and scored into
    reports/corpus-<time>/; its closing note gives the time and the disk it took (`-- --cases NAME`, `--wheels DIR`).
    Each case runs with the processes, calls and injected-slowdown trials the manifest sets (nothing passed here).

    After `--`: arguments of `jaxmlp sweep corpus`."""
    _install_sweep(session)
    session.run("jaxmlp", "sweep", "corpus", "--out", str(REPORTS), *_jax(session))


@nox.session
def docs(session: nox.Session) -> None:
    """Build the documentation with MkDocs (strict) into site/: figures read from reports/, the commands' reference
    from the parsers (`-- serve` previews it on 127.0.0.1:8000 instead)."""
    _install_sweep(session)  # the parsers import jax, numpy and pandas; torch is not needed
    session.install(*_optional("docs"))
    env = {"NO_MKDOCS_2_WARNING": "1"}
    if session.posargs[:1] == ["serve"]:
        session.run("mkdocs", "serve", "--dev-addr", "127.0.0.1:8000", *session.posargs[1:], env=env)
    else:
        session.run("mkdocs", "build", "--strict", *session.posargs, env=env)


def _optional(extra: str) -> list[str]:
    """The requirements of one of pyproject.toml's optional-dependencies (one list of them, there)."""
    import tomllib

    return list(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"][extra])


def _install_sweep(session: nox.Session) -> None:
    """jaxmlp's light install (`pip install jaxmlp`, no torch): jax, the statistics and the report's libraries."""
    session.install("-e", ".")
