"""Shared set-up of the benchmarks: sizes, backends, data, metadata.

Options (after `nox -s bench --`, or to pytest directly):
  --size {smoke,quick,full}   sizes and rounds (quick by default; smoke runs everything once, tiny)
  --backends cpu,gpu,tpu     which JAX backends to measure (default: every backend JAX sees)
  --rounds N                  timed rounds of every benchmark, whatever the size says (e.g. 3 on a machine held briefly)
  --slow-rounds N             timed rounds of the slow rungs (registry.SLOW_PIPELINES: the tutorial's DataLoader), their
                              checked first epoch their only warm-up (default: as every benchmark)
  --pipelines P,...           the pipelines of the epoch and loader benchmarks (default: every one the size has)
  --all-precisions P,...      the epoch pipelines measured in every precision; the others in f32 only (default: all)
  --gemm-shapes {squares,layers}  the floor's large squares (and its other rows), or the products at the step's
                              shapes (test_gemm's and test_step_gemms) alone (default: all)
  --rows-json PATH            each benchmark written to PATH as it finishes (pytest-benchmark's JSON, rewritten
                              whole after each): a run cut off keeps the rows it finished
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import jax
import pytest

from jaxmlp import errors, registry
from jaxmlp.measure import distributed, environment
from jaxmlp.results.schema.common import BENCH, METADATA_KEY, header

SIZES = {
    "smoke": {
        "scale_folder": {"runs": 3, "sweeps": 1, "timelines": 1, "corrupt": 6},
        "scale_rounds": 1,
        "rounds": 1,
        "epoch_rounds": 1,
        "warmup_rounds": 0,
        "floor_repeats": 1,
        # a check that each step works, timing nothing: a small product (a bf16 2048³ one takes minutes on a CPU
        # without bf16 instructions)
        "floor_square": (256, 256, 256),
        "update_batch_size": (32, 128),
        "predict_batch_size": (1, 16),
        "workers": (0, 2),
        "pipeline": registry.PIPELINES,
        "synthetic_sizes": (1024, 256),
        "stream_elements": 2**20,
    },
    "quick": {
        "scale_folder": {"runs": 100, "sweeps": 5, "timelines": 2, "corrupt": 6},
        "scale_rounds": 3,
        "rounds": 7,
        "epoch_rounds": 5,
        "warmup_rounds": 1,
        "floor_repeats": 10,
        "update_batch_size": (32, 128, 512),
        "predict_batch_size": (1, 16, 128, 1024),
        "workers": (0, 1, 2, 4),
        "pipeline": registry.PIPELINES,
        "synthetic_sizes": (60000, 10000),
        "stream_elements": 2**25,
    },
    "full": {
        "scale_folder": {**registry.STORE_FOLDER, "corrupt": 6},  # the store the goals hold for
        "scale_rounds": 3,
        "rounds": 25,
        "epoch_rounds": 7,
        "warmup_rounds": 2,
        "floor_repeats": 10,
        "update_batch_size": (8, 32, 64, 128, 256, 512, 1024, 2048),
        "predict_batch_size": (1, 4, 16, 64, 128, 256, 1024, 4096),
        "workers": (0, 1, 2, 3, 4, 6, 8),
        "pipeline": registry.PIPELINES,
        "synthetic_sizes": (60000, 10000),
        "stream_elements": 2**25,
    },
}
# Benchmark parameters that the size decides (they land in the JSON's `params`; `backend` comes from --backends,
# `variant` from each module); `batch_size` takes the list of the module's subject (bench_update.py: update_batch_size).
SIZE_PARAMETERS = ("batch_size", "workers", "pipeline")


def pytest_addoption(parser):
    group = parser.getgroup("jaxmlp")
    group.addoption("--size", choices=sorted(SIZES), default="quick", help="sizes and rounds (default: quick)")
    group.addoption(
        "--backends", default="auto", help="comma-separated JAX backends to measure, e.g. cpu,tpu (default: all seen)"
    )
    group.addoption("--rounds", type=int, default=None, help="timed rounds of every benchmark (default: the size's)")
    group.addoption(
        "--slow-rounds",
        type=int,
        default=None,
        help="timed rounds of the slow rungs (the tutorial's DataLoader: "
        f"{', '.join(registry.SLOW_PIPELINES)}), their checked first epoch their only warm-up (default: as the rest)",
    )
    group.addoption(
        "--pipelines",
        default=None,
        help="comma-separated pipelines of the epoch and loader benchmarks, e.g. seed,seed_batched (default: all)",
    )
    group.addoption(
        "--all-precisions",
        default=None,
        help="comma-separated epoch pipelines measured in every precision, the others in f32 only (default: all)",
    )
    group.addoption(
        "--gemm-shapes",
        choices=("squares", "layers"),
        default=None,
        help="the floor's large squares and its other rows, or the products at the step's shapes alone (default: all)",
    )
    group.addoption(
        "--rows-json",
        default=None,
        help="write each benchmark to this file as it finishes (pytest-benchmark's JSON): a run cut off keeps them",
    )


def visible_backends() -> list[str]:
    found = []
    for backend in registry.BACKENDS:
        try:
            jax.devices(backend)
            found.append(backend)
        except RuntimeError:
            pass
    return found


def pytest_configure(config):
    if distributed.launcher() is not None:  # under mpirun/srun (or our launcher): each rank would time alone
        raise pytest.UsageError(
            f"bench/ runs in one process, and this is one of {distributed.rank()[1]} started by "
            f"{distributed.launcher()} (pytest-benchmark cannot join ranks): run it without the launcher, or measure "
            "the sharded epoch across processes with `mpirun -n P jaxmlp scaling` (or `jaxmlp scaling --processes P`)"
        )
    requested = config.getoption("--backends")
    visible = visible_backends()
    chosen = visible if requested == "auto" else [b.strip() for b in requested.split(",") if b.strip()]
    for backend in chosen:  # a collection alone needs no device: what a backend's run would hold, counted anywhere
        if backend not in visible and not config.getoption("collectonly"):
            raise pytest.UsageError(
                f"--backends asks for {backend}, but JAX {jax.__version__} sees only {', '.join(visible)}: "
                + registry.ACCELERATOR_NEEDS.get(backend, "choose from those")
            )
    config.jaxmlp_backends = chosen
    sizes = dict(SIZES[config.getoption("--size")])
    rounds = config.getoption("--rounds")
    if rounds is not None:
        if rounds < 1:
            raise pytest.UsageError(f"--rounds {rounds}: a benchmark needs at least one timed round; give 1 or more")
        sizes.update(rounds=rounds, epoch_rounds=rounds)
    sizes.update(slow_rounds=sizes["epoch_rounds"], slow_warmup_rounds=sizes["warmup_rounds"])
    slow = config.getoption("--slow-rounds")
    if slow is not None:
        if slow < 1:
            raise pytest.UsageError(f"--slow-rounds {slow}: a benchmark needs at least one timed round; give 1 or more")
        sizes.update(slow_rounds=slow, slow_warmup_rounds=0)  # their first epoch, checked, runs before the rounds
    asked = config.getoption("--pipelines")
    if asked is not None:
        chosen = [p.strip() for p in asked.split(",") if p.strip()]
        unknown = [p for p in chosen if p not in registry.PIPELINES]
        if unknown or not chosen:
            raise pytest.UsageError(
                f"--pipelines {asked}: choose from {', '.join(registry.PIPELINES)} (comma-separated)"
            )
        sizes["pipeline"] = tuple(p for p in sizes["pipeline"] if p in chosen)
    config.jaxmlp_sizes = sizes
    config.jaxmlp_metadata = environment.metadata()  # now, before the run: the commit (and its state) measured


def pipelines_and_workers(pipelines, workers) -> list[tuple[str, int]]:
    """Each pipeline with each worker count where its loader has workers (`registry.WORKER_PIPELINES`), else 0."""
    return [(p, w) for p in pipelines for w in (workers if p in registry.WORKER_PIPELINES else (0,))]


def pytest_generate_tests(metafunc):
    config = metafunc.config
    names = set(metafunc.fixturenames)
    if "backend" in names:
        metafunc.parametrize("backend", config.jaxmlp_backends, scope="session")
    if {"pipeline", "workers"} <= names:  # a module may narrow the pipelines (bench_loader.py: PIPELINES)
        narrowed = getattr(metafunc.module, "PIPELINES", registry.PIPELINES)
        pipelines = [p for p in config.jaxmlp_sizes["pipeline"] if p in narrowed]
        metafunc.parametrize("pipeline,workers", pipelines_and_workers(pipelines, config.jaxmlp_sizes["workers"]))
        names -= {"pipeline", "workers"}
    for name in SIZE_PARAMETERS:
        if name in names:
            key = name
            if name == "batch_size":
                key = f"{metafunc.module.__name__.removeprefix('bench_')}_batch_size"
            metafunc.parametrize(name, config.jaxmlp_sizes[key])


def pytest_collection_modifyitems(config, items):
    """A GPU's own precision (`registry.GPU_ONLY_PRECISIONS`: tf32) is measured on GPU backends only: its rows on
    other backends are deselected, not skipped, so a CPU run does not list rows it could never have (nor an
    accelerator's numpy's); with --all-precisions, the other pipelines' epochs are measured in f32 only, and with
    --gemm-shapes the floor's squares or its step-shaped products alone (the rest deselected)."""

    every = config.getoption("--all-precisions")
    every = None if every is None else {p.strip() for p in every.split(",")}

    shapes = config.getoption("--gemm-shapes")

    def elsewhere(item) -> bool:
        params = item.callspec.params if hasattr(item, "callspec") else {}
        if params.get("library") == "numpy" and params.get("backend") not in (None, "cpu"):
            return True  # numpy multiplies on the host: an accelerator's run never has its rows
        if shapes is not None and item.path.name == "bench_floor.py":
            sides = str(params.get("shape", "")).split("x")
            layer = item.originalname == "test_step_gemms" or len(set(sides)) > 1  # not a square: a layer's
            if layer != (shapes == "layers"):
                return True
        pipeline = params.get("pipeline")
        precision = params.get("precision")  # None: not an epoch (the loader's rows), never narrowed
        if every is not None and pipeline is not None and pipeline not in every and precision not in (None, "f32"):
            return True  # --all-precisions: this pipeline's epochs in f32 only
        return params.get("precision") in registry.GPU_ONLY_PRECISIONS and params.get("backend") != "gpu"

    dropped = [item for item in items if elsewhere(item)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if not elsewhere(item)]


def pytest_benchmark_update_machine_info(config, machine_info):
    meta = {**header(BENCH), **config.jaxmlp_metadata}  # the file's kind and schema version, with the metadata
    meta["size"] = config.getoption("--size")
    meta["rounds_asked"] = config.getoption("--rounds")  # None: the size's own
    meta["slow_rounds_asked"] = config.getoption("--slow-rounds")  # None: as the others; each row's own: its rounds
    meta["devices"] = {b: environment.metadata(jax.devices(b)[0]) for b in config.jaxmlp_backends}
    meta.update(environment.machine_facts())  # the host's identity, whatever backends this run measured
    machine_info[METADATA_KEY] = meta
    machine_info["node"] = environment.machine_name()  # pytest-benchmark's host name: only where the user gives one


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item):
    """After each test's teardown (the benchmark's facts all recorded), the benchmarks finished so far written to
    --rows-json (`write_rows`)."""
    yield
    write_rows(item.config)


def write_rows(config) -> None:
    """The benchmarks finished so far in pytest-benchmark's JSON (as --benchmark-json writes it at the end, with
    this run's metadata) to --rows-json, replacing it atomically; nothing where none finished since the last write."""
    path = config.getoption("--rows-json")
    session = getattr(config, "_benchmarksession", None)
    written = config.__dict__.setdefault("jaxmlp_rows", {"rows": 0})
    if not path or session is None or len(session.benchmarks) == written["rows"]:
        return
    if "machine_info" not in written:  # once: the same metadata for every write
        written["machine_info"] = session.get_machine_info()
        commit = config.hook.pytest_benchmark_generate_commit_info(config=config)
        config.hook.pytest_benchmark_update_commit_info(config=config, commit_info=commit)
        written["commit_info"] = commit
    doc = config.hook.pytest_benchmark_generate_json(
        config=config,
        benchmarks=session.benchmarks,
        include_data=True,
        machine_info=written["machine_info"],
        commit_info=written["commit_info"],
    )
    tmp = Path(f"{path}.tmp")
    tmp.write_text(json.dumps(doc, default=str))
    os.replace(tmp, path)
    written["rows"] = len(session.benchmarks)


@pytest.fixture(scope="session")
def sizes(request) -> dict:
    return request.config.jaxmlp_sizes


@pytest.fixture(scope="session")
def device(backend):
    return jax.devices(backend)[0]


@pytest.fixture(scope="session")
def datasets(request, sizes):
    """Real MNIST when JAXMLP_DATA_DIR holds it (quick and full sizes), else the labelled synthetic set."""
    from jaxmlp.pipelines.loaders import load_splits  # torchvision's datasets, or arrays where torch is missing
    from jaxmlp.pipelines.mnist import find_idx_files

    folder = os.environ.get("JAXMLP_DATA_DIR")
    real = folder and (
        find_idx_files(Path(folder)) is not None or find_idx_files(Path(folder) / "MNIST" / "raw") is not None
    )
    if real and request.config.getoption("--size") != "smoke":
        return load_splits("mnist", folder)
    return load_splits("synthetic", synthetic_sizes=sizes["synthetic_sizes"])


@pytest.fixture(scope="session")
def floor_rates_in(device, sizes):
    """FLOP/s of a 2048^3 matmul (a smoke run: 256^3) in each library that multiplies on this backend (XLA,
    PyTorch, numpy's BLAS), per precision (`registry.GEMM_PRECISIONS`; bf16: bfloat16 operands, float32
    accumulation), each measured once in this pytest run when first asked, so the epochs' ratios to it are of one
    run: ``floor_rates_in("bf16")``."""
    from jaxmlp.measure import floor

    done: dict[str, dict[str, float]] = {}

    def of(precision: str) -> dict[str, float]:
        if precision not in done:
            square = sizes.get("floor_square", floor.SQUARE)
            done[precision] = floor.floor_rates(device, sizes["floor_repeats"], precision, square)
        return done[precision]

    return of


@pytest.fixture(scope="session")
def floor_rates(floor_rates_in) -> dict[str, float]:
    """`floor_rates_in` float32: the floor of every row at JAX's float32 products."""
    return floor_rates_in("f32")


@pytest.fixture(scope="session")
def matmul_rate(floor_rates) -> float:
    """XLA's float32 FLOP/s of a 2048^3 matmul on this backend: the floor every row has (``floor_seconds``)."""
    return floor_rates["xla"]


@pytest.fixture(autouse=True)
def _context(request):
    """Every benchmark records its backend, device and data in `extra_info`, and its peak memory (host resident set,
    reset before it; the device's peak where the backend keeps one: `jaxmlp.measure.memory`); one with a floor (it
    takes ``matmul_rate`` and records its ``flops``) records the best library's floor too (`floor.floor_facts`), in
    its own precision (a bf16 epoch: the best bf16 GEMM; a tf32 one: the best TF32 GEMM)."""
    from jaxmlp.measure import memory

    benchmark = rates = dev = None
    if "benchmark" in request.fixturenames:
        benchmark = request.getfixturevalue("benchmark")
        if "backend" in request.fixturenames:
            dev = request.getfixturevalue("device")
            benchmark.extra_info.update(backend=dev.platform, device_kind=dev.device_kind)
        if "datasets" in request.fixturenames:
            benchmark.extra_info["dataset"] = request.getfixturevalue("datasets").name
        if "matmul_rate" in request.fixturenames:
            callspec = getattr(request.node, "callspec", None)
            precision = callspec.params.get("precision", "f32") if callspec else "f32"
            rates = request.getfixturevalue("floor_rates_in")(precision)
    was_reset = memory.reset_peak()  # after the session's fixtures: the peak of what this benchmark runs
    device_before = memory.device_mark(dev)  # the device's peak so far (JAX cannot reset it)
    yield
    if benchmark is not None:  # every benchmark's peak memory beside its time (jaxmlp compare's second metric)
        benchmark.extra_info.update(memory.peak_facts(was_reset, dev, device_before))
    if rates and benchmark.extra_info.get("flops"):
        from jaxmlp.measure.floor import floor_facts

        stats = getattr(benchmark, "stats", None)
        median = None if stats is None else stats.stats.median
        benchmark.extra_info.update(floor_facts(benchmark.extra_info["flops"], rates, median))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A benchmark that runs out of device memory (XLA's RESOURCE_EXHAUSTED) fails in one line naming it and the
    memory it asked for, not a page of traceback; the others run on."""
    outcome = yield
    report = outcome.get_result()
    if call.excinfo is not None and report.failed:
        said = errors.device_out_of_memory(call.excinfo.value)
        if said:
            report.longrepr = f"{item.nodeid}: {said}"
