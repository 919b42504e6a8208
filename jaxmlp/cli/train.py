"""``jaxmlp train``: the tutorial's training run, its lines per epoch and ``--json`` (`jaxmlp.flows.train`)."""

from __future__ import annotations

import argparse
import dataclasses

from jaxmlp.cli import options
from jaxmlp.flows.train import run as train
from jaxmlp.measure.train import TrainConfig, validate_config

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


def run(args: argparse.Namespace) -> int:
    config = config_of(args)
    return train(config=config, json=args.json, progress=args.progress, argv=args.argv, timeout=args.timeout).code
