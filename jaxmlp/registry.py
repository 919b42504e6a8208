"""One place for the names that several parts of jaxmlp must spell alike. Plain Python: it imports nothing else."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

PIPELINES = (
    "seed",
    "seed_batched",
    "grain",
    "hf",
    "batched",
    "prefetch",
    "scan",
    "scan_cb_off",
    "scan_cb_loops",
    "sharded",
    "pallas",
    "torch",
    "torch_compile",
    "torch_graph",
)
"""How batches reach the step (`jaxmlp.pipelines.epochs`), a rung each: the DataLoader and its variants, array slices,
the scan, the sharded scan, the Pallas kernel, the PyTorch peers (docs/questions/loaders.md)."""

COMMAND_BUFFER_DEFAULT = ("FUSION", "CUBLAS", "CUBLASLT", "CUSTOM_CALL", "CUDNN")
"""XLA:GPU's default command types: the operations it records into CUDA graphs where 5 or more run in a row."""

COMMAND_BUFFER_NEWER = ("DYNAMIC_SLICE_COPY_FUSION",)
"""Command types newer XLA releases add to their default, given where the release knows them."""

COMMAND_BUFFERS: Mapping[str, tuple[str, ...] | None] = MappingProxyType(
    {
        "scan": None,
        "scan_cb_off": (),
        "scan_cb_loops": (*COMMAND_BUFFER_DEFAULT, *COMMAND_BUFFER_NEWER, "WHILE", "CONDITIONAL"),
    }
)
"""The ``scan`` epoch's command buffers on a GPU, per pipeline (docs/questions/accelerator.md)."""

COMMAND_BUFFER_VARIANTS: Mapping[str, str] = MappingProxyType(
    {"scan": "default", "scan_cb_off": "off", "scan_cb_loops": "loops"}
)
"""Each `COMMAND_BUFFERS` pipeline's variant in words, as its results record it."""

PIPELINE_BACKENDS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "pallas": ("tpu", "gpu"),
        "scan_cb_off": ("gpu",),
        "scan_cb_loops": ("gpu",),
        "torch_graph": ("gpu",),
    }
)
"""Pipelines that run on some JAX backends only (elsewhere refused in one line, a benchmark skipped saying why)."""

TORCH_PIPELINES = ("torch", "torch_compile", "torch_graph")
"""The pipelines that train in PyTorch, whose operations XLA's profiler does not see."""

PROFILED_PIPELINES = tuple(p for p in PIPELINES if p not in TORCH_PIPELINES)
"""The pipelines `jaxmlp profile` traces (XLA's profiler: the JAX ones)."""

OPTIONAL: Mapping[str, tuple[str, str]] = MappingProxyType({"hf": ("datasets", "hf")})
"""Pipelines whose package is optional: the module they import, and the jaxmlp extra that installs it."""

ONE_PROGRAM = ("scan", "scan_cb_off", "scan_cb_loops", "sharded", "pallas")
"""The pipelines whose epoch is one program (no host loop over batches): for the profiler, one step is one epoch."""

SCAN_LOOP = ("scan", "scan_cb_off", "scan_cb_loops", "sharded")
"""The pipelines whose steps are a `lax.scan`'s iterations: the empty scan's cost a step is theirs (the roofline)."""

PARAMS_ON_CHIP = ("pallas",)
"""The pipelines that keep the parameters on chip for the whole epoch, moved once an epoch (the roofline)."""

WORKER_PIPELINES = ("seed", "seed_batched", "grain")
"""The pipelines whose loader has worker processes (``--workers``)."""

SLOW_PIPELINES = ("seed", "seed_batched")
"""The tutorial's DataLoader rungs, seconds an epoch, which may be timed with fewer rounds or apart."""

INPUT_VARIANTS = ("seed_batched", "grain", "hf", "prefetch")
"""The pipelines that differ from `seed` and `batched` only in how batches reach the step."""

GPU_LADDER = tuple(p for p in PIPELINES if p not in INPUT_VARIANTS)
"""The epoch ladder the accelerator check's first call measures on a GPU: every pipeline but the `INPUT_VARIANTS`."""

GPU_ALL_PRECISIONS: tuple[str, ...] = ("scan", "pallas")
"""The `GPU_LADDER` rungs measured in every precision; the others in f32 only."""

LOADER_PIPELINES = (*WORKER_PIPELINES, "hf", "batched")
"""The pipelines whose input is measured alone (`bench_loader.py`): the loaders of the ladder, and array slicing."""

SWEEP_PIPELINES = ("batched", "scan")
"""The torch-free pipelines the jax/jaxlib version sweep measures (its environments have no torch)."""

SWEEP_WORKLOADS = (*SWEEP_PIPELINES, "step")
"""The sweep's built-in workloads: an epoch of each sweep pipeline and the jitted SGD step alone."""

SWEEP_VERSIONS = ("0.4.30", "0.5.3", "0.6.2", "0.8.3", "0.10.2")
"""The jax/jaxlib releases the version sweep measures by default (oldest to newest, all on Python 3.11)."""

DATASETS = ("mnist", "synthetic")
BACKENDS = ("cpu", "gpu", "tpu")
ACCELERATORS = ("gpu", "tpu")
"""The backends that are not the host's CPU: the report sets each one's newest run beside the CPU's."""
ACCELERATOR_NEEDS: Mapping[str, str] = MappingProxyType(
    {
        "gpu": "install JAX with CUDA (pip install 'jaxmlp[cuda]') on a machine with an NVIDIA GPU",
        "tpu": "install JAX with libtpu (pip install 'jaxmlp[tpu]') on a Cloud TPU machine",
    }
)
"""What an absent accelerator asks for, in the one line that refuses it."""

PIPELINE_NEEDS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "seed": ("torch", "PIL"),
        "seed_batched": ("torch", "PIL"),
        "torch": ("torch",),
        "torch_compile": ("torch",),
        "torch_graph": ("torch",),
        "grain": ("grain",),
    }
)
"""Pipelines that need a package a JAX-only machine may lack (``pip install 'jaxmlp[tutorial]'``)."""

PIP_NAMES: Mapping[str, str] = MappingProxyType({"PIL": "pillow"})
"""The pip package of a module whose name differs from it."""

SYNTHETIC = "synthetic"
SYNTHETIC_LABEL = "SYNTHETIC data, not MNIST"
"""How every output marks numbers measured on the generated set."""

HOST = "host"
"""The metadata field of the host's name (recorded only where the user gives one)."""
CPU_MODEL = "cpu_model"
"""The metadata field of the CPU's model, part of the machine's identity."""

THRESHOLD = 0.05
"""The smallest change a comparison flags: the ratio of medians beyond 1 + THRESHOLD (`jaxmlp.stats.compare`)."""
MEMORY_THRESHOLD = 0.10
"""The smallest change in a peak memory `jaxmlp compare` flags (wider than time's: one peak a run)."""
ALPHA = 0.01
"""The significance level a comparison flags at: one-sided Mann-Whitney p < ALPHA."""

PEAK_SCOPE_BENCHMARK = "this benchmark (peak reset before it)"
PEAK_SCOPE_PROCESS = "the process since it started (the peak could not be reset here)"
"""What a recorded peak resident set covers: its benchmark's own run, or all its process ran before."""

CHANGE_THRESHOLD = 0.03
"""The smallest change the change-point detector confirms, as a ratio of medians beyond 1 + it."""
CHANGE_ALPHA = 0.001
"""The significance level the change-point detector confirms at (stricter than `ALPHA`)."""

BATCH_SIZE = 128
"""The tutorial's batch size: the default of every command, and the batch size the overview answers for first."""

STEP_NAME = "train"
"""The name of each traced training step (`jax.profiler.StepTraceAnnotation`), as the trace readers find it."""

LAYER_SIZES: tuple[int, ...] = (784, 512, 512, 10)
"""The tutorial's MLP: its layers' widths, input to output (`jaxmlp.model` builds it)."""
N_TARGETS = 10
"""MNIST's classes."""

PRECISIONS = ("f32", "bf16", "tf32")
"""How the MLP's matrix products are computed (``--precision``; docs/questions/precision.md)."""

GPU_ONLY_PRECISIONS = ("tf32",)
"""The precisions only a GPU backend has (elsewhere, a one-line error)."""

GEMM_LIBRARIES = ("xla", "torch", "numpy")
"""The libraries whose matrix product the floor measures, XLA first (docs/methods/floor.md)."""

GEMM_PRECISIONS = ("f32", "bf16", "tf32")
"""The floor's precisions: float32, bfloat16 inputs, TF32 passes (GPUs only)."""

PARAMETERS = (
    "backend",
    "batch_size",
    "variant",
    "workers",
    "pipeline",
    "workload",
    "devices",
    "processes",
    "library",
    "precision",
    "shape",
    "kernel",
)
"""The benchmark parameters (pytest parameters, so they land in each result's ``params``)."""


@dataclass(frozen=True)
class Benchmark:
    """One benchmark: its id (results' ``test``), where it is defined, its parameters and its variants."""

    id: str
    source: str  # a bench/ module, or the jaxmlp module that writes it
    params: tuple[str, ...] = ()
    variants: tuple[str, ...] = ()
    defaults: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))
    """Parameters added after results were written: the value an older file's row had without saying so."""

    def name(self, *values: object) -> str:
        """The full name a result carries, as pytest writes it: ``test_epoch[cpu-scan-0]``."""
        return f"{self.id}[{'-'.join(map(str, values))}]" if values else self.id


# --- bench/: pytest-benchmark modules --------------------------------------------------------------------------

UPDATE = Benchmark(
    "test_update", "bench_update.py", ("backend", "batch_size", "variant"), ("jit", "jit-dispatch", "eager")
)
PREDICT = Benchmark(
    "test_predict", "bench_predict.py", ("backend", "batch_size", "variant"), ("vmap", "loop", "jit-vmap")
)
LOADER = Benchmark(
    "test_loader", "bench_loader.py", ("pipeline", "workers"), defaults=MappingProxyType({"pipeline": "seed"})
)
EPOCH = Benchmark(
    "test_epoch",
    "bench_epoch.py",
    ("backend", "pipeline", "workers", "precision"),
    defaults=MappingProxyType({"workers": 0, "precision": "f32"}),
)
BF16_STEP = Benchmark("test_bf16_step", "bench_epoch.py", ("backend", "variant"), ("vjp", "casts"))
MATMUL = Benchmark("test_matmul", "bench_floor.py", ("backend",))
STEP_GEMMS = Benchmark("test_step_gemms", "bench_floor.py", ("backend",))
GEMM = Benchmark("test_gemm", "bench_floor.py", ("backend", "library", "precision", "shape"))
FLOOR_PRODUCTS = (GEMM.id, MATMUL.id)
"""The products a floor is the best rate of (`jaxmlp.results.tables.floors`)."""
BANDWIDTH = Benchmark("test_bandwidth", "bench_floor.py", ("backend", "kernel"))
EMPTY_SCAN = Benchmark("test_empty_scan", "bench_floor.py", ("backend",))
"""An empty `lax.scan` as long as an epoch: the loop's own cost a step (the roofline's third term)."""

RESULTS_FOLDER = Benchmark("test_results_folder", "bench_scale.py", ("variant",), ("summary", "report"))
"""`jaxmlp summary` and `jaxmlp report` over a generated folder of many runs (`bench/make_scale_folder.py`)."""

TRACK_NOTHING_SECONDS = 30.0
"""The goal of a `jaxmlp track` call with nothing new: its one line within this many seconds (`bench_track.py`)."""
TRACK_NEW_SECONDS = 15 * 60.0
"""The goal of a `jaxmlp track` call with one new release, on 2 cores (`bench/bench_track.py`)."""

BENCH = (UPDATE, PREDICT, LOADER, EPOCH, BF16_STEP, MATMUL, STEP_GEMMS, GEMM, BANDWIDTH, EMPTY_SCAN, RESULTS_FOLDER)

STORE_FOLDER: Mapping[str, int] = MappingProxyType({"runs": 10_000, "sweeps": 200, "timelines": 50})
"""A store that holds years: the generated folder the summary's and report's goals are held over."""
STORE_WARM_SECONDS: Mapping[str, float] = MappingProxyType({"summary": 20.0, "report": 60.0})
"""Each command over that folder read before (its index made): at most these seconds."""
STORE_COLD_SECONDS = 300.0
"""Each command over that folder read first (no index yet): at most five minutes."""
STORE_MEMORY = 2**30
"""Each command's own peak memory over that folder, cold or warm: at most 1 GiB."""

# --- written by jaxmlp itself ------------------------------------------------------------------------------

TRAIN_EPOCH = Benchmark("train_epoch", "jaxmlp/measure/train.py", ("pipeline", "batch_size", "workers"))
SWEEP_STEADY = Benchmark("sweep_steady", "jaxmlp/results/schema/sweep.py", ("workload",))  # median after the first
SWEEP_FIRST = Benchmark("sweep_first", "jaxmlp/results/schema/sweep.py", ("workload",))  # the first call
SWEEP_COMPILE = Benchmark("sweep_compile", "jaxmlp/results/schema/sweep.py", ("workload",))  # the median compile
SWEEP_PEAK_RSS = Benchmark("sweep_peak_rss", "jaxmlp/results/schema/sweep.py", ("workload",))
"""Each worker process's own peak resident memory (bytes), a row per workload it measured."""

_ONE_PROCESS = MappingProxyType({"processes": 1})  # scaling files before 2026-12-05 measured one process only
SCALING_EPOCH = Benchmark(
    "scaling_epoch", "jaxmlp/results/schema/scaling.py", ("backend", "devices", "processes"), defaults=_ONE_PROCESS
)  # the sharded epoch over N devices in all, in P processes
SCALING_STEP = Benchmark(
    "scaling_step", "jaxmlp/results/schema/scaling.py", ("backend", "devices", "processes"), defaults=_ONE_PROCESS
)  # the sharded step
SCALING = (SCALING_EPOCH, SCALING_STEP)

SWEEP = (SWEEP_STEADY, SWEEP_FIRST, SWEEP_COMPILE, SWEEP_PEAK_RSS)
SWEEP_BYTES = (SWEEP_PEAK_RSS,)
"""The sweep's benchmarks whose samples are bytes, not seconds."""
SWEEP_COMPARED = (SWEEP_STEADY,)
"""The sweep's benchmarks that each version is tested against the previous one on."""

ALL = (*BENCH, TRAIN_EPOCH, *SWEEP, *SCALING)
BY_ID = {b.id: b for b in ALL}

RENAMED: Mapping[str, tuple[Benchmark, Mapping[str, object]]] = MappingProxyType(
    {"test_arrays": (LOADER, MappingProxyType({"pipeline": "batched", "workers": 0}))}
)
"""Benchmarks of older files that are now another's parameters: array slicing is the batched pipeline's loader."""


def benchmark_id(name: str) -> str:
    """The id in a result's full name: ``test_epoch[cpu-scan-0]`` -> ``test_epoch``."""
    return name.split("[", 1)[0]


def version_key(version: str) -> tuple[tuple[int, int | str], ...]:
    """A release number as a sort key: 0.4.30 < 0.10.2; a nightly before its release, nightlies by build date
    (0.4.35 < 0.4.36.dev20241120 < 0.4.36.dev20241122 < 0.4.36); a label that is no number sorts after the numbers."""
    parts = str(version).split(".")
    dev = parts[-1][3:] if len(parts) > 1 and parts[-1].startswith("dev") and parts[-1][3:].isdigit() else None
    key = tuple((0, int(part)) if part.isdigit() else (1, part) for part in (parts[:-1] if dev else parts))
    return (*key, (-1, int(dev) if dev else _RELEASED))


_RELEASED = 10**12
"""Sorts a release after every nightly of its number (a build date is 8 digits)."""


def dataset_label(name: str | None) -> str:
    """``name``, marked where it is the generated set: numbers from it are never presented as MNIST."""
    return f"{name} ({SYNTHETIC_LABEL})" if name == SYNTHETIC else str(name)
