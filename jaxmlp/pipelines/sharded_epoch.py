"""The ``sharded`` epoch: the scan epoch data-parallel over a mesh of every device JAX sees."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, cast

import jax
import numpy as np

from jaxmlp.errors import JaxmlpError
from jaxmlp.model import Params, step_function
from jaxmlp.pipelines.array_epochs import ScanEpoch
from jaxmlp.pipelines.epoch_base import Progress

MESH_AXIS = "data"
"""The one axis of the sharded pipeline's mesh: the batch is split along it."""


def check_divides(batch_size: int, n_devices: int) -> None:
    """A batch splits evenly over the devices, or a `JaxmlpError` naming both numbers."""
    if batch_size % n_devices:
        raise JaxmlpError(
            f"--batch-size {batch_size} does not split evenly over {n_devices} devices: choose a multiple of "
            f"{n_devices} (e.g. {max(n_devices, batch_size // n_devices * n_devices)})"
        )


class ShardedEpoch(ScanEpoch):
    """The scan epoch, data-parallel over every device of ``device``'s platform (every process's, when joined)."""

    def _prepare(self) -> None:
        from jax.sharding import Mesh, NamedSharding, PartitionSpec

        self.devices = jax.devices(self.platform)  # every process's, in a distributed run
        check_divides(self.batch_size, len(self.devices))
        self.mesh = Mesh(np.array(self.devices), (MESH_AXIS,))
        # jax's PartitionSpec is unannotated, hence the ignores
        self.replicated = NamedSharding(self.mesh, PartitionSpec())  # type: ignore[no-untyped-call]
        self.by_batch = NamedSharding(self.mesh, PartitionSpec(None, MESH_AXIS))  # type: ignore[no-untyped-call]

    @staticmethod
    def _placed(array: np.ndarray, sharding: jax.sharding.Sharding) -> jax.Array:
        return jax.make_array_from_callback(array.shape, sharding, lambda index: array[index])

    def _batches(self, array: np.ndarray) -> jax.Array:
        return self._placed(array, self.by_batch)

    def _whole(self, array: np.ndarray) -> jax.Array:
        return self._placed(array, self.replicated)

    def place(self, params: Params) -> Params:
        """``params`` replicated over the mesh (those from the previous epoch already are)."""
        if all(getattr(leaf, "sharding", None) == self.replicated for leaf in jax.tree_util.tree_leaves(params)):
            return params
        return cast(
            Params, jax.tree_util.tree_map(lambda leaf: self._placed(np.asarray(leaf), self.replicated), params)
        )

    def local(self, params: Params) -> Params:
        """This process's copy of replicated ``params`` (host arrays), for evaluating and saving."""
        return cast(Params, jax.tree_util.tree_map(lambda leaf: np.asarray(leaf.addressable_data(0)), params))

    def sharded_step(self, params: Params) -> tuple[Callable[..., Params], tuple[Any, ...]]:
        """One full batch's data-parallel SGD step, jitted with its shardings, and its arguments."""
        from jax.sharding import NamedSharding, PartitionSpec

        rows = NamedSharding(self.mesh, PartitionSpec(MESH_AXIS))  # type: ignore[no-untyped-call]  # unannotated in jax
        x, y = (self._placed(a[: self.batch_size], rows) for a in (self.images, self.targets))
        rep = self.replicated
        step = jax.jit(
            step_function(self.precision, self.bf16_step), in_shardings=(rep, rows, rows, rep), out_shardings=rep
        )
        return step, (self.place(params), x, y, self.step_size)

    def _scan(self, **shardings: Any) -> Any:
        rep, batches = self.replicated, self.by_batch
        return super()._scan(in_shardings=(rep, batches, batches, rep, rep), out_shardings=rep)

    def compile(self, params: Params) -> float:
        """The sharded programs' compile time (the one-device step only when its FLOPs are asked for)."""
        self._keep_shapes(self.local(params))  # one device, whatever the placement
        start = time.perf_counter()
        self.scan = self._compile_scan(self.place(params))
        return time.perf_counter() - start

    def __call__(self, params: Params, progress: Progress | None = None) -> Params:
        return super().__call__(self.place(params), progress)
