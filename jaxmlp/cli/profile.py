"""``jaxmlp profile``: an XLA profiler trace of training steps, step-marked for TensorBoard's profile plugin."""

from __future__ import annotations

import argparse
import functools

import jax
from jax import random

from jaxmlp import registry
from jaxmlp.cli import options
from jaxmlp.cli.train import config_of
from jaxmlp.errors import JaxmlpError
from jaxmlp.flows.train import cpu_only_if_asked
from jaxmlp.hlo import op_label
from jaxmlp.measure.environment import select_device
from jaxmlp.measure.profiling import capture
from jaxmlp.measure.train import check_batch_size
from jaxmlp.model import LAYER_SIZES, init_network_params
from jaxmlp.pipelines.epochs import make_epoch
from jaxmlp.pipelines.loaders import load_splits
from jaxmlp.results.store.writing import check_folder, new_trace_run
from jaxmlp.results.tables import CaptureSummary, capture_summary
from jaxmlp.units import count, duration, tutorial_seconds


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "After a warm-up, trace N training steps of a pipeline (each step, batch fetch included, "
        "marked for TensorBoard's profile plugin) into a new run folder under --logdir."
    )
    options.add(
        parser,
        options.PIPELINE.but(default="scan", why="one program an epoch: the XLA ops, not the loader"),
        options.own(
            "--steps", "steps to trace; for scan one step is one epoch (default: %(default)s)", 10, options.whole_number
        ),
        options.LOGDIR,
        *options.DATA,
        options.DOWNLOAD,
        options.BATCH_SIZE,
        options.WORKERS,
        options.BACKEND,
    )


def run(args: argparse.Namespace) -> int:
    config = config_of(args)
    if config.pipeline not in registry.PROFILED_PIPELINES:
        raise JaxmlpError(
            f"--pipeline {config.pipeline}: it trains in PyTorch, whose operations XLA's profiler does "
            f"not see; profile one of {', '.join(registry.PROFILED_PIPELINES)}"
        )
    if args.steps <= 0:
        raise JaxmlpError(f"--steps must be at least 1, got {args.steps}")
    check_folder(args.logdir, "--logdir")
    cpu_only_if_asked(config.backend)
    datasets = load_splits(
        config.dataset, config.data_dir, config.download, limit=config.limit, pipelines=[config.pipeline]
    )
    check_batch_size(config.batch_size, len(datasets.train))
    device = select_device(config.backend)
    with jax.default_device(device):
        params = init_network_params(LAYER_SIZES, random.PRNGKey(config.seed))
        epoch = make_epoch(
            config.pipeline, datasets.train, batch_size=config.batch_size, workers=config.workers, device=device
        )
        print(f"jaxmlp profile: {datasets.label}; {device.platform} ({device.device_kind}); pipeline {config.pipeline}")
        result = capture(
            epoch, params, steps=args.steps, run_dir=functools.partial(new_trace_run, args.logdir, config.pipeline)
        )
    one_program = config.pipeline in registry.ONE_PROGRAM
    traced = f"{count(result.steps, 'epoch')} (one scan each)" if one_program else count(result.steps, "step")
    print(f"Traced {traced} in {tutorial_seconds(result.seconds)} into {result.run_dir}")
    for xplane in result.xplanes:
        s = capture_summary(xplane)
        if s.median_step_ms is None:
            continue
        if one_program:  # one program an epoch, its batches on the device before it: no load of its own
            print(f"Median epoch {_ms(s.median_step_ms)} (one program, no batch loads); top op: {_top(s)}")
        else:
            print(
                f"Median step {_ms(s.median_step_ms)} (load {_ms(s.median_load_ms)}, compute "
                f"{_ms(s.median_compute_ms)}); top op: {_top(s)}"
            )
    print(f"Open it: jaxmlp tensorboard --logdir {args.logdir}   (then the PROFILE tab)")
    return 0


def _top(summary: CaptureSummary) -> str:
    """The trace's top operation by its short name and category (`hlo.op_label`)."""
    if summary.top_ops.empty:
        return "none (the trace holds no operations)"
    top = summary.top_ops.iloc[0]
    return op_label(top["op"], top["category"])


def _ms(milliseconds: float | None) -> str:
    return duration(None if milliseconds is None else milliseconds / 1e3)
