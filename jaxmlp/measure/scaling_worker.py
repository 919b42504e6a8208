"""One device count of `jaxmlp scaling`, in a process that sees exactly that many devices:
``python -m jaxmlp.measure.scaling_worker SETTINGS`` (a `jaxmlp.measure.scaling.Scaling` as JSON).

It measures the sharded epoch and the sharded step as workloads (`jaxmlp.measure.workload.measure`: compiled once
and timed apart, every call ending in ``block_until_ready``, the first call kept apart) and checks the epoch's
params against the one-device ``scan`` epoch; it prints one `ProcessResult` as its last line.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, cast

from jaxmlp.errors import JaxmlpError
from jaxmlp.measure.records import ProcessResult
from jaxmlp.measure.scaling import Scaling
from jaxmlp.measure.workers import serve

if TYPE_CHECKING:
    from jaxmlp.pipelines.epochs import _ShardedEpoch


def measure_devices(settings: Scaling) -> ProcessResult:
    """In a process that sees ``settings.devices`` devices of its backend: the sharded epoch and step, and the
    check."""
    import jax

    from jaxmlp.measure import workload as w
    from jaxmlp.measure.environment import metadata
    from jaxmlp.model import LAYER_SIZES, init_network_params, max_relative_difference
    from jaxmlp.pipelines.epochs import make_epoch
    from jaxmlp.pipelines.mnist import load_arrays

    seen = jax.devices(settings.backend)
    if len(seen) != settings.devices:
        raise JaxmlpError(f"asked for {settings.devices} {settings.backend} devices, JAX sees {len(seen)}")
    train, _ = load_arrays(settings.dataset, settings.data_dir, settings.limit)
    device = seen[0]
    batch_size = settings.batch_size
    with jax.default_device(device):
        params = init_network_params(LAYER_SIZES, jax.random.PRNGKey(0))
        reference = make_epoch("scan", train, batch_size=batch_size, device=device)(params)
        epoch = cast("_ShardedEpoch", make_epoch("sharded", train, batch_size=batch_size, device=device))
        params = epoch.place(params)  # once: every timed call starts from the same replicated params
        step, step_args = epoch.sharded_step(params)
        times = {
            "epoch": w.measure(w.Workload("epoch", epoch, (params,), lambda: epoch.compile(params)), settings.epochs),
            "step": w.measure(w.Workload("step", step, step_args), settings.calls),
        }
        difference = max_relative_difference(epoch.local(epoch(params)), reference)
    meta = {**metadata(device), "devices": settings.devices, "dataset": settings.dataset,
            "samples": epoch.n_samples, "steps": epoch.n_steps, "batch_size": batch_size, "flops": epoch.flops,
            "max_relative_difference": difference}  # fmt: skip
    return ProcessResult(meta, times)


if __name__ == "__main__":
    sys.exit(serve(sys.argv[1:], measure_devices, Scaling.from_json, "jaxmlp scaling worker"))
