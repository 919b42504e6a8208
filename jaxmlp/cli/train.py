"""``jaxmlp train``: the tutorial's training run, its three lines per epoch, a summary and ``--json``."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from jaxmlp import errors, registry
from jaxmlp.cli import options
from jaxmlp.errors import EXIT_DIVERGED, Interrupted, JaxmlpError
from jaxmlp.measure import distributed, workers
from jaxmlp.measure.train import EpochRecord, TrainConfig, steady_state_seconds, to_rows, train, validate_config
from jaxmlp.pipelines.loaders import load_splits
from jaxmlp.report.escape import unwrapped
from jaxmlp.results.schema.train import TrainDocument
from jaxmlp.results.store.writing import ResultsStore, check_folder, check_new_file, write_json_new
from jaxmlp.units import count, tutorial_seconds

if TYPE_CHECKING:
    from jaxmlp.pipelines.mnist import Datasets

DEFAULTS = TrainConfig()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = "Train the tutorial's MLP (defaults are the tutorial's) and print its three lines per epoch."
    options.add(
        parser,
        options.TRAIN_EPOCHS,
        options.BATCH_SIZE,
        options.own("--step-size", "SGD step size (default: %(default)s)", DEFAULTS.step_size, options.number),
        options.WORKERS,
        *options.DATA,
        options.DOWNLOAD,
        options.own(
            "--seed", "PRNGKey seed of the initial params (default: %(default)s)", DEFAULTS.seed, options.whole_number
        ),
        options.BACKEND,
        options.PIPELINE,
        options.PRECISION,
        options.TRAIN_PROCESSES,
        options.TIMEOUT,
        options.own(
            "--json",
            "write per-epoch records to this NEW JSON file, or into this folder (an existing one, "
            "or any PATH that ends in /, made if missing) under a new train-<time>-... "
            "name",
            metavar="PATH",
        ),
        options.own(
            "--progress", "a progress bar (default: on a terminal only)", action=argparse.BooleanOptionalAction
        ),
    )


def config_of(args: argparse.Namespace) -> TrainConfig:
    """The command's settings as a validated `TrainConfig` (the fields it has no option for keep their defaults)."""
    given = {f.name: getattr(args, f.name) for f in dataclasses.fields(TrainConfig) if hasattr(args, f.name)}
    return validate_config(TrainConfig(**given))


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


def launch_limit(timeout: float | None) -> float:
    """The time limit of a --processes run's processes: ``--timeout``, else `workers.FIRST_SECONDS`."""
    if timeout is None:
        return workers.FIRST_SECONDS
    errors.positive_finite("--timeout", timeout)
    return timeout


def into_folder(given: str) -> bool:
    """Whether ``--json`` names a folder (one that exists, or a path ending in a slash), not a new file."""
    return given.endswith(("/", os.sep)) or Path(given).is_dir()


def run(args: argparse.Namespace) -> int:
    config = config_of(args)
    if args.json:  # fail before training, not after
        check_folder(args.json, "--json") if into_folder(args.json) else check_new_file(args.json, "--json")
    joined = distributed.rank()
    if config.processes > 1 and joined is None:  # start the processes; each runs this command, rank 0 speaks
        return distributed.launch(args.argv, config.processes, launch_limit(args.timeout))
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
        return _train(args, config, joined)


def _train(args: argparse.Namespace, config: TrainConfig, joined: tuple[int, int] | None) -> int:
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

    writes = bool(args.json) and (joined is None or joined[0] == 0)  # one file for the run: rank 0's
    try:
        result = train(config, datasets, on_start=on_start, on_epoch=on_epoch, progress=progress_bar(args.progress))
    except KeyboardInterrupt as e:  # the epochs that ended before the signal are kept
        stopped = e if isinstance(e, Interrupted) else Interrupted()
        if writes and records:
            said = f"kept {len(records)} of {count(config.epochs, 'epoch')}"
            try:
                path = _write(args, config, datasets, records, {**meta, "partial": f"stopped by {stopped}; {said}"})
                stopped.kept = f"{said} in {path}"
            except (JaxmlpError, OSError) as error:  # the stop's line still, saying why nothing was kept
                stopped.kept = f"the {count(len(records), 'epoch')} measured could not be written: {error}"
        raise stopped from None
    except Exception as e:  # in a distributed run, a peer that stops breaks the collectives of the others
        if joined is None or isinstance(e, JaxmlpError):
            raise
        said = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise JaxmlpError(f"process {joined[0]} of {joined[1]} stopped: {said[-300:]}") from None
    last = records[-1]
    print(_summary(records, datasets.name))
    if writes:
        path = _write(args, config, datasets, result.records, result.metadata)
        print(f"Wrote {count(len(records), 'epoch record')} to {path}")
    return EXIT_DIVERGED if last.diverged else 0


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
    args: argparse.Namespace,
    config: TrainConfig,
    datasets: Datasets,
    records: list[EpochRecord],
    meta: dict[str, Any],
) -> Path:
    """The epoch records as ``--json`` says (a new file, or a new name in a folder), written atomically."""
    processes = distributed.processes()  # the launcher, the count, the ids that joined the mesh
    document = TrainDocument(tuple({**row, **processes} for row in to_rows(config, datasets, records, meta)))
    if into_folder(args.json):
        return ResultsStore(args.json).save(document)
    return write_json_new(args.json, document.to_json())
