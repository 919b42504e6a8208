"""What a sweep measures and how: frozen settings, built once from the command's arguments and checked there."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from jaxmlp import changepoints, errors
from jaxmlp.errors import JaxmlpError
from jaxmlp.jsonio import Plain
from jaxmlp.measure.environments.envs import INDEX, Source
from jaxmlp.measure.workload_names import parse_spec, workload_name
from jaxmlp.registry import ALPHA, BACKENDS, DATASETS, PRECISIONS, SWEEP_WORKLOADS, THRESHOLD

TOLERANCE = 1e-3
"""How far (relative) a workload's values may differ between cells before its row says "results differ"."""


def is_builtin(workload: str) -> bool:
    return workload in SWEEP_WORKLOADS


@dataclass(frozen=True)
class Measuring(Plain):
    """What each worker process measures: the workloads, data, calls, compiles, CPU and ``inject_slowdown``."""

    workloads: tuple[str, ...] = ()
    dataset: str = "mnist"
    data_dir: str | None = None
    limit: int | None = None
    epochs: int = 4
    calls: int = 50
    pin_cpu: int | None = None
    inject_slowdown: float = 0.0
    program_facts: bool = False  # also record what each workload compiled (`jaxmlp.measure.programs`): the probe's
    profile_dir: str | None = None  # also trace a few calls of each workload into <profile_dir>/<workload>
    precision: str = "f32"  # the built-in workloads' (`registry.PRECISIONS`); a user workload sets its own
    backend: str | None = None  # the JAX backend measured on (`registry.BACKENDS`; None: JAX's default device)
    compiles: int = 1  # compiles of each workload a process, caches cleared before each; its compile time: their median

    def __post_init__(self) -> None:
        errors.at_least("--compiles", self.compiles, 1, "compiles of each workload a process")
        errors.at_least("--epochs", self.epochs, 2, "the first epoch is recorded apart from the steady state")
        errors.at_least("--calls", self.calls, 2, "the first call is recorded apart from the steady state")
        errors.at_least("--limit", self.limit, 1, "training images")
        errors.at_least("--pin-cpu", self.pin_cpu, 0, "a CPU number")
        if not self.inject_slowdown >= 0:
            raise JaxmlpError(f"--inject-slowdown must be 0 or more (0.10: 10% slower), got {self.inject_slowdown}")
        errors.one_of("--precision", self.precision, PRECISIONS)
        errors.one_of("--backend", self.backend, BACKENDS)
        errors.one_of("--dataset", self.dataset, DATASETS)
        for spec in self.workloads:
            if not is_builtin(spec) and ":" not in spec and not spec.endswith(".py"):
                raise JaxmlpError(
                    f"--workload {spec!r}: neither a built-in ({', '.join(SWEEP_WORKLOADS)}) nor "
                    "path/to/file.py:make or module:make"
                )

    @property
    def specs(self) -> tuple[str, ...]:
        """The workloads measured, in order: those given, else every built-in."""
        return self.workloads or SWEEP_WORKLOADS

    @property
    def names(self) -> tuple[str, ...]:
        """The names their results carry (`jaxmlp.measure.workload_names.workload_name`)."""
        return tuple(workload_name(spec) for spec in self.specs)

    def for_workers(self) -> Measuring:
        """The same, each file spec with an absolute path, so that a worker finds it wherever it starts."""
        return replace(self, workloads=tuple(spec if is_builtin(spec) else _forms(spec)[0] for spec in self.workloads))

    @property
    def workload_source(self) -> str:
        """The workloads as results record them (inside the current folder relative to it, else absolute)."""
        return ",".join(spec if is_builtin(spec) else _forms(spec)[1] for spec in self.specs)

    def as_recorded(self, text: str) -> str:
        """A worker's words with each workload as results record it, not as the worker was given it."""
        for spec in self.workloads:
            if not is_builtin(spec):
                text = text.replace(*_forms(spec))
        return text

    def probing(self) -> Measuring:
        """The same, for a cell's probe process: what each workload compiled recorded too."""
        return replace(self, program_facts=True)


def _forms(spec: str) -> tuple[str, str]:
    """A workload spec as a worker is given it and as results record it."""
    where, attribute = parse_spec(spec)
    if not where.endswith(".py"):
        return spec, spec
    path, here = Path(where).resolve(), Path.cwd().resolve()
    return f"{path}:{attribute}", f"{path.relative_to(here) if path.is_relative_to(here) else path}:{attribute}"


@dataclass(frozen=True)
class Matrix:
    """The cells and their ``processes``, the ``tolerance`` for "results differ", the environments and ``timeout``."""

    versions: tuple[str, ...] = ()
    processes: int = 6
    xla_flags: tuple[str, ...] = ()
    tolerance: float = TOLERANCE
    envs: Path | None = None
    hand_made: Mapping[str, str] = field(default_factory=dict)
    timeout: float | None = None
    source: Source = INDEX  # where the releases' environments come from (`envs.Source`)
    share: tuple[int, int] = (0, 1)  # (this rank, the ranks) under mpirun or srun: round r is rank r mod ranks's
    pythons: tuple[str, ...] = ()  # interpreters given (--python), preferred for the environments they can make
    series: tuple[str, ...] = ()  # the releases one Python is chosen for (a bisection's candidates; (): those made)

    def __post_init__(self) -> None:
        errors.at_least("--processes", self.processes, 1)
        if self.timeout is not None:
            errors.positive_finite("--timeout", self.timeout)
        if not self.tolerance >= 0:
            raise JaxmlpError(f"--tolerance must be 0 or more, got {self.tolerance}")

    def mine(self, round_: int) -> bool:
        """Whether this process runs round ``round_`` (alone: every round)."""
        rank, ranks = self.share
        return round_ % ranks == rank


@dataclass(frozen=True)
class Detector:
    """When a change is flagged: one-sided p < ``alpha`` and a ratio beyond 1 + ``threshold``."""

    threshold: float = THRESHOLD
    alpha: float = ALPHA

    def __post_init__(self) -> None:
        errors.detector(self.threshold, self.alpha)


@dataclass(frozen=True)
class Bisect:
    """`jaxmlp sweep bisect GOOD BAD`: the ends, the releases (None: the index's) and the workload bisected."""

    good: str
    bad: str
    versions: tuple[str, ...] | None = None
    on: str | None = None
    wheels: Path | None = None  # take the releases from this folder of wheels, not the index

    def __post_init__(self) -> None:
        if self.good == self.bad:
            raise JaxmlpError("GOOD and BAD are the same release: name two")


EVERY = ("patch", "minor")
"""What a timeline measures between its ends: every release (``patch``), or the last patch of each minor."""
MIN_PROCESSES = 4
"""The fewest processes a release a timeline's ``--budget`` sets (fewer give the confirmation too little)."""


@dataclass(frozen=True)
class Timeline:
    """`jaxmlp sweep timeline A B`: the ends, the releases (None: the index's), which ones, the budget (None: none)."""

    first: str
    last: str
    versions: tuple[str, ...] | None = None
    every: str = "patch"
    budget: float | None = None
    wheels: Path | None = None  # take the releases from this folder of wheels, not the index

    def __post_init__(self) -> None:
        if self.first == self.last:
            raise JaxmlpError("A and B are the same release: name two")
        if self.every not in EVERY:
            raise JaxmlpError(f"--every {self.every!r}: choose one of {', '.join(EVERY)}")
        if self.budget is not None:
            errors.positive_finite("--budget", self.budget)


@dataclass(frozen=True)
class Trials:
    """`jaxmlp sweep trials`: A/A and injected-slowdown comparisons of one release beside ``noise``."""

    trials: int = 20
    processes: int = 5
    inject_slowdown: float = 0.10
    noise: str = "none"
    budget: float = 5.0

    def __post_init__(self) -> None:
        errors.at_least("--trials", self.trials, 1)
        errors.at_least("--processes", self.processes, 1)
        errors.positive_finite("--budget", self.budget)
        if not self.inject_slowdown >= 0:
            raise JaxmlpError(f"--inject-slowdown must be 0 or more (0.10: 10% slower), got {self.inject_slowdown}")


@dataclass(frozen=True)
class Corpus:
    """`jaxmlp sweep corpus [MANIFEST]`: the manifest and the cases to run (none: every one)."""

    manifest: Path
    cases: tuple[str, ...] = ()


@dataclass(frozen=True)
class Validation:
    """`jaxmlp sweep validate`: the histories, detectors, penalty, peer suite (``peer`` 0: none) and held-out seeds."""

    histories: int = 200
    seed: int = 0
    detectors: tuple[str, ...] = ("pelt", "binseg")
    penalty: float = changepoints.PENALTY
    peer: int = 1
    held_out: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        errors.at_least("--histories", self.histories, 1)
        errors.positive_finite("--penalty", self.penalty)
        errors.at_least("--peer", self.peer, 0)
