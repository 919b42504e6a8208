"""How close two programs that compute the same float32 epoch in a different order end (`max_relative_difference`
of their params): the torch pipelines against ``scan``, and the Pallas kernel against the step's loop on a TPU."""

TOLERANCE = 1e-4
"""The bound after an epoch of at most `TOLERANCE_STEPS` steps: float32 math in another order of operations
(docs/questions/loaders.md)."""

TOLERANCE_STEPS = 32

EPOCH_TOLERANCE = 5e-3
"""The same bound for a full epoch, where SGD on unscaled pixels amplifies the rounding (docs/questions/loaders.md)."""


def reordered(n_steps: int) -> float:
    """The bound for an epoch of ``n_steps`` steps: `TOLERANCE` up to `TOLERANCE_STEPS`, else `EPOCH_TOLERANCE`."""
    return TOLERANCE if n_steps <= TOLERANCE_STEPS else EPOCH_TOLERANCE
