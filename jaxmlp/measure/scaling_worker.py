"""One (N, P) of `jaxmlp scaling` in a process that sees its N / P devices; prints one `ProcessResult`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, cast

from jaxmlp.errors import JaxmlpError
from jaxmlp.measure.records import ProcessResult
from jaxmlp.measure.scaling import Scaling
from jaxmlp.measure.workers import serve

if TYPE_CHECKING:
    from jaxmlp.model import Params
    from jaxmlp.pipelines.sharded_epoch import ShardedEpoch


def measure_devices(settings: Scaling) -> ProcessResult:
    """The sharded epoch and step, and the check, on ``settings.devices`` devices."""
    from jaxmlp.measure import distributed

    joined = distributed.initialize() if settings.processes > 1 else None  # before anything else starts JAX
    if settings.processes > 1 and (joined is None or joined[1] != settings.processes):
        raise JaxmlpError(
            f"asked for {settings.processes} processes, {joined[1] if joined else 1} joined: start the "
            "worker through jaxmlp scaling"
        )
    import jax

    from jaxmlp.measure import workload as w
    from jaxmlp.measure.environment import metadata
    from jaxmlp.model import LAYER_SIZES, init_network_params, max_relative_difference, precision_scope
    from jaxmlp.pipelines.epochs import make_epoch
    from jaxmlp.pipelines.mnist import load_arrays

    seen = jax.devices(settings.backend)
    if len(seen) != settings.devices:
        raise JaxmlpError(f"asked for {settings.devices} {settings.backend} devices, JAX sees {len(seen)}")
    train, _ = load_arrays(settings.dataset, settings.data_dir, settings.limit)
    device = jax.local_devices(backend=settings.backend)[0]
    batch_size = settings.batch_size
    with jax.default_device(device), precision_scope("f32"):  # the sharded step's float32 products, as the epochs'
        params = init_network_params(LAYER_SIZES, jax.random.PRNGKey(0))
        reference = make_epoch("scan", train, batch_size=batch_size, device=device)(params)
        epoch = cast("ShardedEpoch", make_epoch("sharded", train, batch_size=batch_size, device=device))
        params = epoch.place(params)  # once: every timed call starts from the same replicated params
        step, step_args = epoch.sharded_step(params)
        times = {
            "epoch": w.measure(w.Workload("epoch", epoch, (params,), lambda: epoch.compile(params)), settings.epochs),
            "step": w.measure(w.Workload("step", step, step_args), settings.calls),
        }
        difference = max_relative_difference(epoch.local(epoch(params)), reference)
        if settings.devices > 1:
            trace(epoch, params, settings.trace_dir if jax.process_index() == 0 else None)
    meta = {
        **metadata(device),
        **distributed.processes(),
        "devices": settings.devices,
        "dataset": settings.dataset,
        "samples": epoch.n_samples,
        "steps": epoch.n_steps,
        "batch_size": batch_size,
        "flops": epoch.flops,
        "max_relative_difference": difference,
    }
    return ProcessResult(meta, times)


def trace(epoch: ShardedEpoch, params: Params, folder: str | None) -> None:
    """A warm-up epoch and one traced into ``folder`` (None: untraced, since the collectives need every process)."""
    import jax

    from jaxmlp.measure.profiling import capture

    if folder is not None:
        capture(epoch, params, steps=1, run_dir=lambda: Path(folder))
        return
    epoch.compile(params)
    for _ in range(2):
        params = epoch(params)
    jax.block_until_ready(params)  # type: ignore[no-untyped-call]  # unannotated in jax


if __name__ == "__main__":
    sys.exit(serve(sys.argv[1:], measure_devices, Scaling.from_json, "jaxmlp scaling worker"))
