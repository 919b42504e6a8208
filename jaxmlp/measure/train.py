"""The training run behind `jaxmlp train`: a frozen config in, epoch records out."""

from __future__ import annotations

import dataclasses
import math
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from jaxmlp import errors
from jaxmlp.errors import JaxmlpError
from jaxmlp.registry import BACKENDS, DATASETS, PIPELINES, PRECISIONS, TRAIN_EPOCH, WORKER_PIPELINES

if TYPE_CHECKING:
    from jaxmlp.model import Params
    from jaxmlp.pipelines.mnist import Datasets


@dataclass(frozen=True)
class TrainConfig:
    """Everything a training run depends on. Defaults are the tutorial's."""

    epochs: int = 8
    batch_size: int = 128
    step_size: float = 0.01
    workers: int = 0
    dataset: str = "mnist"
    data_dir: str | None = None
    download: bool = False
    seed: int = 0
    backend: str | None = None  # None: JAX's default device
    pipeline: str = "seed"
    limit: int | None = None  # the first LIMIT training images only (None: all)
    precision: str = "f32"  # `registry.PRECISIONS` (tf32: GPU backends only)
    processes: int = 1  # sharded only: local processes joined by jax.distributed (`jaxmlp.measure.distributed`)


def validate_config(config: TrainConfig) -> TrainConfig:
    """``config`` unchanged, or a `JaxmlpError` naming the impossible setting and what to do."""
    errors.at_least("--epochs", config.epochs, 1)
    errors.at_least("--batch-size", config.batch_size, 1)
    errors.positive_finite("--step-size", config.step_size)
    errors.at_least("--workers", config.workers, 0, "0: load in the main process")
    errors.one_of("--dataset", config.dataset, DATASETS)
    errors.one_of("--backend", config.backend, BACKENDS)
    errors.one_of("--precision", config.precision, PRECISIONS)
    errors.one_of("pipeline", config.pipeline, PIPELINES)
    errors.at_least("--limit", config.limit, 1, "training images")
    errors.at_least("--processes", config.processes, 1)
    if config.processes > 1 and config.pipeline != "sharded":
        raise JaxmlpError(
            f"--processes {config.processes} needs --pipeline sharded (the data-parallel pipeline); "
            f"the {config.pipeline} pipeline runs in one process"
        )
    if config.workers and config.pipeline not in WORKER_PIPELINES:
        raise JaxmlpError(
            f"--workers {config.workers}: the {config.pipeline} pipeline has no loader workers; "
            f"use --workers 0, or a pipeline with them ({', '.join(WORKER_PIPELINES)})"
        )
    return config


def check_batch_size(batch_size: int, n_train: int, fixed: bool = False) -> None:
    """One line naming the option to change where one batch does not fit the training set."""
    if batch_size <= n_train:
        return
    if fixed:
        raise JaxmlpError(
            f"--limit {n_train} is fewer training images than one batch ({batch_size}): give --limit {batch_size} "
            "or more"
        )
    raise JaxmlpError(
        f"--batch-size {batch_size} is larger than the training set ({n_train} images): choose at most {n_train}"
    )


class EpochRecord(NamedTuple):
    """One epoch's measurements. Times in seconds; losses and accuracies on whole splits."""

    epoch: int
    epoch_seconds: float  # wall time of the epoch, stopped once the params are ready on the device
    compile_seconds: float  # JAX compile time: ahead of epoch 0 (for epoch 0), else inside the epoch
    steps: int
    samples_per_second: float
    train_loss: float | None
    train_accuracy: float | None
    test_loss: float | None
    test_accuracy: float | None
    diverged: bool


class TrainResult(NamedTuple):
    params: Params
    records: list[EpochRecord]
    metadata: dict[str, Any]  # versions, device, flags, commit (`jaxmlp.measure.environment.metadata`)


def _finite_or_none(x: Any) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None


def train(
    config: TrainConfig,
    datasets: Datasets,
    *,
    on_start: Callable[[dict[str, Any], float], None] | None = None,
    on_epoch: Callable[[EpochRecord], None] | None = None,
    progress: Callable[[Iterable[Any], int], Iterable[Any]] | None = None,
) -> TrainResult:
    """Train the MLP on ``datasets`` as ``config`` says, stopping with ``diverged=True`` at a non-finite loss."""
    import jax
    from jax import random

    from jaxmlp.measure.environment import metadata, select_device
    from jaxmlp.measure.timing import compile_seconds
    from jaxmlp.model import LAYER_SIZES, evaluate, init_network_params, precision_scope
    from jaxmlp.pipelines.epochs import make_epoch

    validate_config(config)
    n_train = len(datasets.train)
    check_batch_size(config.batch_size, n_train)
    device = select_device(config.backend)
    meta = {**metadata(device), "precision": config.precision}

    with jax.default_device(device):
        params = init_network_params(LAYER_SIZES, random.PRNGKey(config.seed))
        splits = _on_device(datasets, device)
        run_epoch = make_epoch(
            config.pipeline,
            datasets.train,
            batch_size=config.batch_size,
            step_size=config.step_size,
            workers=config.workers,
            device=device,
            precision=config.precision,
        )
        ahead = run_epoch.compile(params)
        if on_start is not None:
            on_start(meta, ahead)

        records: list[EpochRecord] = []
        for epoch in range(config.epochs):
            with compile_seconds() as inside:
                start = time.perf_counter()
                params = run_epoch(params, progress)  # returns once params are ready
                seconds = time.perf_counter() - start
            here = run_epoch.local(params)  # this process's copy, on its device
            with precision_scope(config.precision):  # an f32 run's accuracy from float32 products too
                evaluated = (evaluate(here, *splits["train"]), evaluate(here, *splits["test"]))
            compiled = inside.seconds + (ahead if epoch == 0 else 0.0)
            records.append(_record(epoch, seconds, compiled, run_epoch.n_steps, n_train, *evaluated))
            if on_epoch is not None:
                on_epoch(records[-1])
            if records[-1].diverged:
                break
    return TrainResult(run_epoch.local(params), records, meta)


def _on_device(datasets: Datasets, device: Any) -> dict[str, Any]:
    """Each split's images and one-hot labels, put on ``device`` once (for the evaluation after each epoch)."""
    import jax

    from jaxmlp.model import N_TARGETS, one_hot
    from jaxmlp.pipelines.loaders import as_arrays

    splits = {}
    for split, dataset in (("train", datasets.train), ("test", datasets.test)):
        images, labels = as_arrays(dataset)
        splits[split] = jax.device_put((images, one_hot(labels, N_TARGETS)), device)
    return splits


def _record(
    epoch: int, seconds: float, compiled: float, steps: int, n_train: int, train: Any, test: Any
) -> EpochRecord:
    """One epoch's record from its time and both splits' loss and accuracy."""
    train_loss = _finite_or_none(train.loss)
    diverged = train_loss is None
    return EpochRecord(
        epoch=epoch,
        epoch_seconds=seconds,
        compile_seconds=compiled,
        steps=steps,
        samples_per_second=n_train / seconds,
        train_loss=train_loss,
        train_accuracy=None if diverged else float(train.accuracy),
        test_loss=_finite_or_none(test.loss),
        test_accuracy=None if diverged else float(test.accuracy),
        diverged=diverged,
    )


def steady_state_seconds(times: Sequence[float]) -> float:
    """The median epoch time without epoch 0; NaN for one epoch."""
    return statistics.median(times[1:]) if len(times) > 1 else math.nan


def to_rows(
    config: TrainConfig, datasets: Datasets, records: Iterable[EpochRecord], metadata: dict[str, Any]
) -> list[dict[str, Any]]:
    """Flat, JSON-ready rows, one per epoch, each with the settings and metadata (``partial`` for a stopped run)."""
    settings = {f"config_{k}": v for k, v in dataclasses.asdict(config).items()}
    origin = {"dataset": datasets.name, "data_source": datasets.source}
    return [{"kind": TRAIN_EPOCH.id, **r._asdict(), **origin, **settings, **metadata} for r in records]
