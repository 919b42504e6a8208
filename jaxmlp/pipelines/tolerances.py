"""How close two programs that compute the same float32 epoch in a different order end (docs/questions/loaders.md)."""

TOLERANCE = 1e-4
"""The bound after at most `TOLERANCE_STEPS` steps of float32 math in another order (docs/questions/loaders.md)."""

TOLERANCE_STEPS = 32

EPOCH_TOLERANCE = 5e-3
"""The same bound for a full epoch, where SGD on unscaled pixels amplifies the rounding (docs/questions/loaders.md)."""


def reordered(n_steps: int) -> float:
    """The bound for an epoch of ``n_steps`` steps: `TOLERANCE` up to `TOLERANCE_STEPS`, else `EPOCH_TOLERANCE`."""
    return TOLERANCE if n_steps <= TOLERANCE_STEPS else EPOCH_TOLERANCE
