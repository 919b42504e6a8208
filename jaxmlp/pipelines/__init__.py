"""How data reaches the step, and training: the ring around the pure core (`jaxmlp.model`).

- `mnist`: the MNIST IDX files and the synthetic set as numpy arrays (no torch, no JAX);
- `data`: torchvision's MNIST and the tutorial's `NumpyLoader` (the only torch module);
- `epochs`: one definition of each input pipeline's epoch, shared by training, benchmarks, profiler and sweep;
- `train`: the training run behind `jaxmlp train`.

This file imports nothing: spawned DataLoader workers import `jaxmlp.pipelines.data` and must stay JAX-free.
"""
