"""Time to accuracy (`jaxmlp tta`), from a run's start to its target (docs/questions/time-to-accuracy.md)."""

from __future__ import annotations

import copy
import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from jaxmlp import errors
from jaxmlp.errors import JaxmlpError
from jaxmlp.jsonio import Plain
from jaxmlp.pipelines.mnist import Split
from jaxmlp.registry import PIPELINES, PRECISIONS
from jaxmlp.units import count

if TYPE_CHECKING:
    from jaxmlp.pipelines.mnist import Datasets


@dataclass(frozen=True)
class TtaConfig:
    """What `jaxmlp tta` measures: the target, the runs of each pipeline and precision, evaluations and give-up."""

    target: float = 0.97
    runs: int = 5
    pipelines: tuple[str, ...] = ("scan",)
    precisions: tuple[str, ...] = ("f32",)
    eval_every: int | None = None  # steps between evaluations (None: after every epoch)
    max_epochs: int = 10
    batch_size: int = 128
    step_size: float = 0.01
    backend: str | None = None

    def __post_init__(self) -> None:
        if not 0 < self.target <= 1:
            raise JaxmlpError(f"--target {self.target}: a test accuracy, above 0 and at most 1 (0.97: 97%)")
        errors.at_least("--runs", self.runs, 1)
        errors.at_least("--eval-every", self.eval_every, 1, "steps between evaluations")
        errors.at_least("--max-epochs", self.max_epochs, 1)
        errors.at_least("--batch-size", self.batch_size, 1)
        for pipeline in self.pipelines:
            if pipeline not in PIPELINES:
                raise JaxmlpError(f"unknown pipeline {pipeline!r}: choose from {', '.join(PIPELINES)}")
        for precision in self.precisions:
            if precision not in PRECISIONS:
                raise JaxmlpError(f"unknown --precision {precision!r}: choose from {', '.join(PRECISIONS)}")


@dataclass
class TtaRun(Plain):
    """One run's times (seconds from its start) and accuracy after each evaluation."""

    pipeline: str
    precision: str
    seed: int
    target: float
    reached: bool = False
    seconds: float | None = None  # start to the first evaluation at or above the target (None: never reached)
    data_seconds: float = 0.0  # data preparation: the epochs built (splits converted, placed on the device)
    compile_seconds: float = 0.0  # the epochs' programs and the evaluation compiled
    train_seconds: float = 0.0  # the training steps, up to the target (or all of them)
    eval_seconds: float = 0.0  # the evaluations, up to the target (or all of them)
    steps: int = 0
    epochs: float = 0.0  # epochs trained until the target (fractional with --eval-every)
    best_accuracy: float | None = None
    evaluations: list[dict[str, float]] = field(default_factory=list)  # {"steps", "seconds", "accuracy"}


def parts(train: Any, batch_size: int, eval_every: int | None) -> list[Any]:
    """The training split as consecutive parts of ``eval_every`` batches; the whole split where that is None."""
    n = len(train)
    size = None if eval_every is None else eval_every * batch_size
    if size is None or size >= n:
        return [train]
    starts = [start for start in range(0, n, size) if n - start >= batch_size or start == 0]
    out = []
    for start, end in zip(starts, [*starts[1:], n]):
        data, targets = train.data[start:end], train.targets[start:end]
        if isinstance(train, Split):  # a split as arrays (frozen)
            out.append(dataclasses.replace(train, data=data, targets=targets))
        else:  # the tutorial's dataset
            part = copy.copy(train)
            part.data, part.targets = data, targets
            out.append(part)
    return out


def run_once(config: TtaConfig, datasets: Datasets, pipeline: str, precision: str, seed: int) -> TtaRun:
    """One run, clock started first (see the module's docstring)."""
    import jax
    from jax import random

    from jaxmlp.measure.environment import select_device
    from jaxmlp.model import LAYER_SIZES, N_TARGETS, evaluate, init_network_params, one_hot, precision_scope
    from jaxmlp.pipelines.epochs import make_epoch
    from jaxmlp.pipelines.loaders import as_arrays

    device = select_device(config.backend)
    run = TtaRun(pipeline, precision, seed, config.target)
    with jax.default_device(device):
        params = jax.block_until_ready(init_network_params(LAYER_SIZES, random.PRNGKey(seed)))  # type: ignore[no-untyped-call]
        jax.clear_caches()  # type: ignore[no-untyped-call]  # this run compiles what it runs
        start = time.perf_counter()
        images, labels = as_arrays(datasets.test)
        test = jax.block_until_ready(jax.device_put((images, one_hot(labels, N_TARGETS)), device))  # type: ignore[no-untyped-call]
        epochs = [
            make_epoch(
                pipeline,
                part,
                batch_size=config.batch_size,
                step_size=config.step_size,
                device=device,
                precision=precision,
            )
            for part in parts(datasets.train, config.batch_size, config.eval_every)
        ]
        run.data_seconds = time.perf_counter() - start
        mark = time.perf_counter()
        for epoch in epochs:
            epoch.compile(params)
        with precision_scope(precision):  # an f32 run's accuracy from float32 products too
            evaluation = evaluate.lower(epochs[0].local(params), *test).compile()
        run.compile_seconds = time.perf_counter() - mark
        steps_per_epoch = sum(e.n_steps for e in epochs)
        params = epochs[0].place(params)
        for _ in range(config.max_epochs):
            for epoch in epochs:
                mark = time.perf_counter()
                params = epoch(params)
                run.train_seconds += time.perf_counter() - mark
                run.steps += epoch.n_steps
                mark = time.perf_counter()
                accuracy = float(evaluation(epoch.local(params), *test).accuracy)
                now = time.perf_counter()
                run.eval_seconds += now - mark
                run.evaluations.append({"steps": run.steps, "seconds": now - start, "accuracy": accuracy})
                run.best_accuracy = max(accuracy, run.best_accuracy or 0.0)
                if accuracy >= config.target:
                    run.reached, run.seconds = True, now - start
                    run.epochs = run.steps / steps_per_epoch
                    return run
        run.epochs = run.steps / steps_per_epoch
    return run


def measure(
    config: TtaConfig,
    datasets: Datasets,
    on_run: Callable[[TtaRun], None] | None = None,
    out: list[TtaRun] | None = None,
) -> list[TtaRun]:
    """Every run, seed after seed, pipelines and precisions interleaved; ``out`` joined as each run ends."""
    out = [] if out is None else out
    for seed in range(config.runs):
        for pipeline in config.pipelines:
            for precision in config.precisions:
                run = run_once(config, datasets, pipeline, precision, seed)
                out.append(run)
                if on_run is not None:
                    on_run(run)
    return out


def median_stands(reached: int, runs: int) -> bool:
    """Whether a median time to the target stands for all ``runs``: more than half of them reached it."""
    return 2 * reached > runs


def short_of_target(runs: Sequence[TtaRun]) -> list[str]:
    """Each pipeline and precision of ``runs`` where at most half reached the target: its median is not a time."""
    groups: dict[tuple[str, str], list[TtaRun]] = {}
    for run in runs:
        groups.setdefault((run.pipeline, run.precision), []).append(run)
    out = []
    for (pipeline, precision), these in groups.items():
        reached = sum(run.reached for run in these)
        if not median_stands(reached, len(these)):
            out.append(f"{pipeline} {precision}: {reached} of {count(len(these), 'run')}")
    return out
