"""Training the tutorial's MLP (``jaxmlp train``): its three lines per epoch, its summary and its file; a run of
several processes started here, or joined under mpirun or srun."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np

from jaxmlp import errors, registry
from jaxmlp.errors import EXIT_DIVERGED, JaxmlpError, keeping
from jaxmlp.flows import Filed
from jaxmlp.measure import distributed, workers
from jaxmlp.measure.train import EpochRecord, TrainConfig, steady_state_seconds, to_rows, train
from jaxmlp.pipelines.loaders import load_splits
from jaxmlp.pipelines.mnist import Datasets
from jaxmlp.report.escape import unwrapped
from jaxmlp.results.schema.train import TrainDocument
from jaxmlp.results.store.writing import ResultsStore, check_folder, check_new_file, write_json_new
from jaxmlp.units import count, tutorial_seconds


def cpu_only_if_asked(backend: str | None) -> None:
    if backend == "cpu" and not os.environ.get("JAX_PLATFORMS"):
        import jax

        # Don't start (and fill) a GPU we won't use. (The ignore: jax's Config.update is unannotated.)
        jax.config.update("jax_platforms", "cpu")  # type: ignore[no-untyped-call]


def progress_bar(enabled: bool | None) -> Callable[[Iterable[Any], int], Iterable[Any]]:
    from tqdm import tqdm

    def wrap(iterable: Iterable[Any], total: int) -> Iterable[Any]:
        # disable=None: shown on a terminal, silent in logs.
        disable = None if enabled is None else not enabled
        bar = tqdm(iterable, total=total, disable=disable, leave=False, unit="batch", file=unwrapped(sys.stderr))
        return cast(Iterable[Any], bar)

    return wrap


def into_folder(given: str) -> bool:
    """Whether ``--json`` names a folder (one that exists, or a path ending in a slash), not a new file."""
    return given.endswith(("/", os.sep)) or Path(given).is_dir()


def run(
    *, config: TrainConfig, json: str | None, progress: bool | None, argv: Sequence[str], timeout: float | None
) -> Filed:
    """Train as ``config`` says, printing each epoch, records to ``json`` (a new file or into a folder); with
    ``config.processes`` > 1 the processes started here, each running ``argv``, process 0 speaking."""
    if json:  # fail before training, not after
        check_folder(json, "--json") if into_folder(json) else check_new_file(json, "--json")
    joined = distributed.rank()
    if config.processes > 1 and joined is None:  # start the processes; each runs this command, rank 0 speaks
        limit = workers.FIRST_SECONDS if timeout is None else timeout  # each process's time limit
        errors.positive_finite("--timeout", limit)
        return Filed(None, distributed.launch(list(argv), config.processes, limit))
    if joined is not None and config.pipeline != "sharded":  # under mpirun/srun: N copies would train, not one run
        raise JaxmlpError(
            f"process {joined[0]} of {joined[1]} ({distributed.launcher()}): only --pipeline sharded "
            f"joins several processes into one run; --pipeline {config.pipeline} would train "
            f"{joined[1]} copies: use --pipeline sharded, or start one process"
        )
    cpu_only_if_asked(config.backend)
    distributed.initialize()
    with contextlib.ExitStack() as quiet:
        if joined is not None and joined[0] != 0:  # under mpirun/srun every process has the terminal: one speaks
            quiet.enter_context(contextlib.redirect_stdout(quiet.enter_context(open(os.devnull, "w"))))
        return _train(config, json if joined is None or joined[0] == 0 else None, progress, joined)


def _train(config: TrainConfig, json: str | None, progress: bool | None, joined: tuple[int, int] | None) -> Filed:
    """Train and report; in a run of several processes only process 0's words are shown and only it writes."""
    datasets = load_splits(
        config.dataset, config.data_dir, config.download, limit=config.limit, pipelines=[config.pipeline]
    )
    meta: dict[str, Any] = {}
    records: list[EpochRecord] = []  # each epoch as it ends: a stopped run keeps those

    def on_start(started: dict[str, Any], compile_s: float) -> None:
        meta.update(started)
        print(
            f"jaxmlp train: {datasets.label}; {meta['backend']} ({meta['device_kind']}); pipeline {config.pipeline}; "
            f"{count(config.epochs, 'epoch')}, batch {config.batch_size}, step size {config.step_size}, "
            f"{count(config.workers, 'worker')}, precision {config.precision}"
        )
        print(f"Compiled in {tutorial_seconds(compile_s)} (before epoch 0, not in any epoch time)", flush=True)

    def on_epoch(r: EpochRecord) -> None:
        records.append(r)
        print(f"Epoch {r.epoch} in {tutorial_seconds(r.epoch_seconds)}")  # the tutorial's line from 0.1 s on
        if r.diverged:
            print(f"Diverged: the training loss is not finite after epoch {r.epoch}; try a smaller --step-size")
        else:
            # As the tutorial prints them: float32 scalars at their shortest exact repr.
            print(f"Training set accuracy {np.float32(r.train_accuracy)!s}")
            print(f"Test set accuracy {np.float32(r.test_accuracy)!s}", flush=True)

    def partial(said: str) -> Path:
        return _write(json or "", config, datasets, records, {**meta, "partial": said})

    kept = records if json else []  # the epochs that ended before a stop: kept where the run writes
    try:
        with keeping(kept, count(config.epochs, "epoch"), lambda n: f"{count(n, 'epoch')} measured", partial):
            result = train(config, datasets, on_start=on_start, on_epoch=on_epoch, progress=progress_bar(progress))
    except Exception as e:  # in a distributed run, a peer that stops breaks the collectives of the others
        if joined is None or isinstance(e, JaxmlpError):
            raise
        said = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise JaxmlpError(f"process {joined[0]} of {joined[1]} stopped: {said[-300:]}") from None
    print(_summary(records, datasets.name))
    path = None
    if json:
        path = _write(json, config, datasets, result.records, result.metadata)
        print(f"Wrote {count(len(records), 'epoch record')} to {path}")
    return Filed(path, EXIT_DIVERGED if records[-1].diverged else 0)


def _summary(records: Sequence[EpochRecord], dataset: str) -> str:
    """The run's last line: its accuracies (or where it diverged) and its steady epoch time."""
    last = records[-1]
    steady = steady_state_seconds([r.epoch_seconds for r in records])
    timed = (
        f"epoch time {tutorial_seconds(steady)} (median of epochs 1-{len(records) - 1})"
        if len(records) > 1
        else f"epoch 0 took {tutorial_seconds(records[0].epoch_seconds)} (with its first-epoch costs; no later epoch "
        "to time)"
    )
    label = f" [{registry.SYNTHETIC_LABEL}]" if dataset == registry.SYNTHETIC else ""
    if last.diverged:
        return f"Summary: DIVERGED at epoch {last.epoch} (no accuracy to report){label}"
    return (
        f"Summary: train accuracy {last.train_accuracy:.4f}, test accuracy {last.test_accuracy:.4f} after "
        f"{count(len(records), 'epoch')}; {timed}{label}"
    )


def _write(
    json: str, config: TrainConfig, datasets: Datasets, records: list[EpochRecord], meta: dict[str, Any]
) -> Path:
    """The epoch records as ``--json`` says (a new file, or a new name in a folder), written atomically."""
    processes = distributed.processes()  # the launcher, the count, the ids that joined the mesh
    document = TrainDocument(tuple({**row, **processes} for row in to_rows(config, datasets, records, meta)))
    return ResultsStore(json).save(document) if into_folder(json) else write_json_new(json, document.to_json())
