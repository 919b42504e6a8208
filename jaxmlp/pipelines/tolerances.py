"""How close two programs that compute the same float32 epoch in a different order end (`max_relative_difference`
of their params): the torch pipelines against ``scan``, and the Pallas kernel against the step's loop on a TPU."""

TOLERANCE = 1e-4
"""The bound after an epoch of at most `TOLERANCE_STEPS` steps (tested on the first 4096 MNIST training images). Both
compute the same float32 math in a different order: XLA's dots, reductions and fused logsumexp against torch's BLAS
(oneDNN/MKL) kernels, or a TPU kernel's own exponential and sums, which block and sum the inner products
differently. Measured after 32 steps: torch 1.9e-7 from scan on a CPU (each 4e-7 from the float64 epoch), the Pallas
kernel 9.1e-8 from the step's loop on a TPU v5e; leaving the last batch out changes them by 1.9e-2. 1e-4 leaves a
wide margin for other kernels and still tells any real difference."""

TOLERANCE_STEPS = 32

EPOCH_TOLERANCE = 5e-3
"""The same bound for a longer epoch (a full MNIST epoch is 469 steps). The tutorial's SGD on unscaled pixels
amplifies rounding step after step (ReLUs flip, logits saturate): measured after a full epoch, torch and scan are
5e-4 to 1.6e-3 apart on a CPU, the Pallas kernel 2.3e-3 from the step's loop on a TPU v5e, and scan is itself 5.6e-3
from the float64 epoch, so no float32 pair can be held to 1e-4 there. Leaving the last batch out changes them by
1e-2, which this still tells; the full epoch is also held to its test accuracy (`tests/test_pipelines.py`)."""


def reordered(n_steps: int) -> float:
    """The bound for an epoch of ``n_steps`` steps: `TOLERANCE` up to `TOLERANCE_STEPS`, else `EPOCH_TOLERANCE`."""
    return TOLERANCE if n_steps <= TOLERANCE_STEPS else EPOCH_TOLERANCE
