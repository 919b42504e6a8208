"""Every option that more than one command takes, declared once. Plain Python: the noxfile uses `bench_session` too."""

from __future__ import annotations

import argparse
import builtins
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from jaxmlp import registry
from jaxmlp.measure import workers  # plain Python: its time limits' numbers
from jaxmlp.measure.sweep.settings import EVERY as RELEASES_EVERY  # plain Python: a timeline's choices
from jaxmlp.results.store import layout


def whole_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


def number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


KEEP: Any = object()
"""`Option.but`'s default: the shared option's own."""


@dataclass(frozen=True)
class Option:
    """One option: what `argparse.ArgumentParser.add_argument` takes, declared once."""

    flags: tuple[str, ...]
    help: str
    default: Any = None
    type: Callable[[str], Any] | None = None
    choices: Sequence[str] | None = None
    action: str | builtins.type[argparse.Action] | None = None  # builtins: the field `type` shadows the name
    metavar: str | None = None
    nargs: str | None = None
    dest: str | None = None
    base: Option | None = field(default=None, compare=False, repr=False)  # the shared option this one adapts
    why: str = ""  # why a command's default differs from the shared one
    shared: bool = True  # False: one command's own (`own`)

    def but(self, *, default: Any = KEEP, help: str | None = None, why: str = "") -> Option:
        """This option as one command takes it: its own default (and why it differs) or its own help."""
        if default is not KEEP and not why:
            raise ValueError(f"{self.flags[0]}: a command's own default says why")
        return replace(
            self,
            default=self.default if default is KEEP else default,
            help=help or self.help,
            base=self.base or self,
            why=why,
        )

    def add(self, parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> argparse.Action:
        names = ("help", "default", "type", "choices", "action", "metavar", "nargs", "dest")  # add_argument's
        action = parser.add_argument(
            *self.flags, **{k: getattr(self, k) for k in names if getattr(self, k) is not None}
        )
        action.jaxmlp_option = self  # type: ignore[attr-defined]  # read by the test of the declarations
        return action


def add(parser: argparse.ArgumentParser | argparse._ArgumentGroup, *options: Option) -> None:
    """Each of ``options`` added to ``parser``: every option of every command goes through here."""
    for option in options:
        option.add(parser)


def own(
    flags: str | tuple[str, ...], help: str, default: Any = None, type: Callable[[str], Any] | None = None, **given: Any
) -> Option:
    """An option one command alone takes, declared beside that command (added with `add`, as a shared one is)."""
    return Option((flags,) if isinstance(flags, str) else flags, help, default, type, shared=False, **given)


LIST: dict[str, Any] = {"action": "extend", "nargs": "+"}
"""How an option takes several values: space-separated or repeated; its default None, filled in by the command."""


# --- data --------------------------------------------------------------------------------------------------------

DATASET = Option(
    ("--dataset",),
    "real MNIST, or a generated MNIST-shaped set for machines without it (default: %(default)s)",
    "mnist",
    choices=registry.DATASETS,
)
DATA_DIR = Option(
    ("--data-dir",),
    "folder with the four MNIST IDX files, gzipped or not (default: $JAXMLP_DATA_DIR, else a cache folder)",
    metavar="DIR",
)
LIMIT = Option(("--limit",), "the first LIMIT training images only (default: all)", type=whole_number)
DOWNLOAD = Option(("--download",), "let torchvision download MNIST into the data folder", False, action="store_true")
DATA = (DATASET, DATA_DIR, LIMIT)

# --- where it runs -----------------------------------------------------------------------------------------------

BACKEND = Option(("--backend",), "JAX backend (default: JAX's default device)", choices=registry.BACKENDS)
PIPELINE = Option(
    ("--pipeline",),
    "how batches reach the step: the tutorial's DataLoader (seed), the same a batch "
    "at a time (seed_batched), Grain (grain), Hugging Face datasets (hf), array slices (batched), "
    "slices put on the device by a background thread (prefetch), one lax.scan per epoch (scan), that "
    "scan data-parallel over every device (sharded), the same MLP in PyTorch, eager (torch) and through "
    "torch.compile (torch_compile) (default: %(default)s)",
    "seed",
    choices=registry.PIPELINES,
)
PRECISION = Option(
    ("--precision",),
    "the matrix products' precision: float32 (f32), bfloat16 operands with float32 "
    "accumulation and float32 params and update (bf16), TF32 tensor cores (tf32, GPU backends only) "
    "(default: %(default)s)",
    "f32",
    choices=registry.PRECISIONS,
)
EACH_PIPELINE = Option(
    ("--pipeline",), "the pipelines to measure, each on its own (default: scan)", choices=registry.PIPELINES, **LIST
)
EACH_PRECISION = Option(
    ("--precision",),
    "the precisions to measure each pipeline in, as --precision (f32, bf16; tf32 on GPU backends) (default: f32)",
    choices=registry.PRECISIONS,
    **LIST,
)
BATCH_SIZE = Option(("--batch-size",), "images per step (default: %(default)s)", registry.BATCH_SIZE, whole_number)
WORKERS = Option(
    ("--workers",),
    "loader worker processes, spawned: torch's DataLoader (seed, seed_batched) or "
    "Grain's (grain) (default: %(default)s)",
    0,
    whole_number,
)
TRAIN_PROCESSES = Option(
    ("--processes",),
    "sharded only: start this many local processes joined by jax.distributed "
    "on 127.0.0.1, each with its own devices (default: %(default)s)",
    1,
    whole_number,
)
SCALING_PROCESSES = Option(
    ("--processes",),
    "process counts P, each measured with each device count N that it "
    "divides (N / P devices a process, joined by jax.distributed: started by jaxmlp on "
    "127.0.0.1, or by mpirun/srun when jaxmlp runs under one) (default: 1; under mpirun -n P "
    "or srun: 1 and P)",
    type=whole_number,
    **LIST,
)

# --- where results go --------------------------------------------------------------------------------------------

OUT = Option(("--out",), "results folder (default: %(default)s)", layout.RESULTS_DIR, metavar="DIR")
RESULTS = Option(("--results",), "folder of result files (default: %(default)s)", layout.RESULTS_DIR, metavar="DIR")
REPORT_OUT = Option(("--out",), "NEW folder for the report (default: RESULTS/report-<UTC time>)", metavar="DIR")
LOGDIR = Option(
    ("--logdir",), "TensorBoard logdir of profiler captures (default: %(default)s)", layout.TRACES_DIR, metavar="DIR"
)

# --- timing: what each measuring process runs --------------------------------------------------------------------

EPOCHS = Option(
    ("--epochs",),
    "timed epochs a process (each built-in epoch workload): the first, then the steady state (default: %(default)s)",
    4,
    whole_number,
)
TRAIN_EPOCHS = Option(("--epochs",), "epochs to train (default: %(default)s, the tutorial's)", 8, whole_number)
CALLS = Option(
    ("--calls",),
    "timed calls a process of the step and of your workloads: the first, then the steady state (default: %(default)s)",
    50,
    whole_number,
)
COMPILES = Option(
    ("--compiles",),
    "compiles a process of each workload, JAX's caches cleared before each, after its calls: its compile time is "
    "their median, steadier than one (default: %(default)s)",
    1,
    whole_number,
)
TIMEOUT = Option(
    ("--timeout",),
    "each child process's time limit in seconds: past it, it and its children are "
    f"killed and named as failed, what was measured kept (default: {workers.FIRST_SECONDS:.0f} s for the "
    f"first; then {workers.LIMIT_FACTOR}x the slowest before, at least {workers.MIN_LIMIT_SECONDS:.0f} s)",
    type=number,
    metavar="SECONDS",
)
PIN_CPU = Option(
    ("--pin-cpu",),
    "pin every worker process to this one CPU (steadier, single-threaded)",
    type=whole_number,
    metavar="CPU",
)
TIMING = (EPOCHS, CALLS)

# --- the sweep's matrix and its statistics -----------------------------------------------------------------------

WORKLOAD = Option(
    ("--workload",),
    "what to time: built-ins (" + ", ".join(registry.SWEEP_WORKLOADS) + "; default: "
    "all) or your own, path/to/file.py:make or module:make (README: the workload contract)",
    metavar="SPEC",
    **LIST,
)
VERSIONS = Option(
    ("--versions",),
    "the releases to pick from (default: the package index's, via pip index versions; give them to run offline)",
    metavar="VERSION",
    **LIST,
)
PROCESSES = Option(("--processes",), "processes (samples) a cell (default: %(default)s)", 6, whole_number)
XLA_FLAGS = Option(
    ("--xla-flags",),
    "each value is its own column of the matrix, every release run with "
    "XLA_FLAGS=FLAGS besides without (e.g. --xla_cpu_use_thunk_runtime=false); its values start with "
    "a dash, so one a flag: repeat it for each",
    action="append",
    metavar="FLAGS",
)
TOLERANCE = Option(
    ("--tolerance",),
    "relative difference of values between cells beyond which a row says 'results differ' (default: %(default)s)",
    1e-3,
    number,
)
ENVS = Option(
    ("--envs",),
    "where the release environments live (default: $JAXMLP_ENVS, else ~/.cache/jaxmlp/envs)",
    type=Path,
    metavar="DIR",
)
ENV = Option(("--env",), "releases' environments made by hand", metavar="LABEL=PYTHON", **LIST)
WHEELS = Option(
    ("--wheels",),
    "a folder of jax and jaxlib wheels (nightlies, a private build, `pip download`'s) to take the releases from, "
    "installed without the package index (default: the package index)",
    type=Path,
    metavar="DIR",
)
THRESHOLD = Option(
    ("--threshold",),
    "minimum effect: the ratio of medians beyond 1 + THRESHOLD (default: %(default)s)",
    registry.THRESHOLD,
    number,
)
ALPHA = Option(
    ("--alpha",),
    "significance level of the one-sided Mann-Whitney U test (default: %(default)s)",
    registry.ALPHA,
    number,
)
DETECTOR = (THRESHOLD, ALPHA)
PYTHON = Option(
    ("--python",),
    "an interpreter to make the release environments with, preferred to those found on PATH (python3.N), in "
    "pyenv's versions and uv's, for the releases it supports; repeat it to give several (default: the one running "
    "jaxmlp where every release supports it, else the nearest Python here that does)",
    action="append",
    metavar="PATH",
)
RELEASES = (TOLERANCE, ENVS, WHEELS, TIMEOUT, OUT, PYTHON)
"""Where each release's environment comes from and is made, its processes' time limits, where the results go."""
MATRIX = (PROCESSES, XLA_FLAGS, *RELEASES)
"""How a sweep's releases are measured: processes, XLA flags and `RELEASES` (`reworded` by some)."""

# --- a range of releases: its two ends and how the releases between them are picked ------------------------------

FIRST = Option(("first",), "the first release (e.g. 0.4.30)", metavar="A")
LAST = Option(("last",), "the last release (e.g. 0.5.0)", metavar="B")
GOOD = Option(("good",), "the release before the change (e.g. 0.6.2)", metavar="GOOD")
BAD = Option(("bad",), "a release after it (e.g. 0.8.3)", metavar="BAD")
EARLIER = Option(("a",), "the earlier release (e.g. 0.4.30)", metavar="A")
LATER = Option(("b",), "the later release (e.g. 0.10.2)", metavar="B")
EVERY = Option(
    ("--every",),
    "every release (patch), or the last patch of each minor release (minor) (default: %(default)s)",
    "patch",
    choices=RELEASES_EVERY,
)
BUDGET = Option(
    ("--budget",),
    "the minutes the processes may take: sets the processes a release from the probe's measured time (default: "
    "--processes)",
    type=number,
    metavar="MINUTES",
)
TIMELINE_RANGE = (FIRST, LAST, VERSIONS, EVERY, BUDGET)
"""`jaxmlp sweep timeline A B`'s releases from A to B, picked from --versions or the index, fitted to --budget."""
BISECT_RANGE = (GOOD, BAD, VERSIONS)
"""`jaxmlp sweep bisect GOOD BAD`'s releases: GOOD to BAD, picked from --versions (else the index's)."""
EXPLAIN_RANGE = (EARLIER, LATER)
"""`jaxmlp sweep explain A B`'s two releases."""


def reworded(group: Sequence[Option], *own: Option) -> tuple[Option, ...]:
    """``group`` with each of ``own`` (a command's `Option.but` of one of its options) in that option's place."""
    mine = {option.base: option for option in own}
    return tuple(mine.get(option, option) for option in group)


STRICT = Option(
    ("--strict",),
    "exit 4 when a comparison is still inconclusive (its 95%% interval spans the threshold; exit codes: "
    "docs/reference/exit-codes.md)",
    False,
    action="store_true",
)


SHARED = tuple(dict.fromkeys(v for v in tuple(globals().values()) if isinstance(v, Option)))
"""Every shared option: each `Option` declared above (the test of the declarations walks them)."""


# --- nox -s bench's own switches (the noxfile parses them with this) ---------------------------------------------


def bench_session() -> argparse.ArgumentParser:
    """The switches of ``nox -s bench -- ...`` (the rest goes to pytest)."""
    parser = argparse.ArgumentParser(prog="nox -s bench --", add_help=False)
    switches = {
        "--full": "more sizes and rounds",
        "--profile": "also capture one XLA trace per pipeline",
        "--upgrade": "install the newest jax and jaxlib again into the reused environment (nox keeps the first it "
        "installed)",
        "--preinstalled": "install nothing: jax, torch and the rest are installed already (with `nox --no-venv`)",
    }
    add(parser, *(own(flag, help, action="store_true") for flag, help in switches.items()))
    return parser
