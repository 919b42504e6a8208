"""An XLA profiler trace of training steps (``jaxmlp profile``), step-marked for TensorBoard's profile plugin."""

from __future__ import annotations

import functools

import jax
from jax import random

from jaxmlp import registry
from jaxmlp.errors import JaxmlpError
from jaxmlp.flows.train import cpu_only_if_asked
from jaxmlp.hlo import op_label
from jaxmlp.measure import profiling
from jaxmlp.measure.environment import select_device
from jaxmlp.measure.train import TrainConfig, check_batch_size
from jaxmlp.model import LAYER_SIZES, init_network_params
from jaxmlp.pipelines.epochs import make_epoch
from jaxmlp.pipelines.loaders import load_splits
from jaxmlp.results.store.writing import check_folder, new_trace_run
from jaxmlp.results.tables import CaptureSummary, capture_summary
from jaxmlp.units import count, duration, tutorial_seconds


def capture(*, config: TrainConfig, steps: int, logdir: str) -> profiling.Capture:
    """After a warm-up, ``steps`` steps of ``config``'s pipeline traced into a new run folder under ``logdir``, each
    step's median times and top operation printed."""
    if config.pipeline not in registry.PROFILED_PIPELINES:
        raise JaxmlpError(
            f"--pipeline {config.pipeline}: it trains in PyTorch, whose operations XLA's profiler does "
            f"not see; profile one of {', '.join(registry.PROFILED_PIPELINES)}"
        )
    if steps <= 0:
        raise JaxmlpError(f"--steps must be at least 1, got {steps}")
    check_folder(logdir, "--logdir")
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
        result = profiling.capture(
            epoch, params, steps=steps, run_dir=functools.partial(new_trace_run, logdir, config.pipeline)
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
    return result


def _top(summary: CaptureSummary) -> str:
    """The trace's top operation by its short name and category (`hlo.op_label`)."""
    if summary.top_ops.empty:
        return "none (the trace holds no operations)"
    top = summary.top_ops.iloc[0]
    return op_label(top["op"], top["category"])


def _ms(milliseconds: float | None) -> str:
    return duration(None if milliseconds is None else milliseconds / 1e3)
