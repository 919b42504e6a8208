"""How data reaches the step: the ring around the pure core (`jaxmlp.model`).

- `mnist`: the MNIST IDX files and the synthetic set as numpy arrays (no torch, no JAX);
- `data`: torchvision's MNIST and the tutorial's `NumpyLoader` (torch);
- `torch_mlp`: the MLP and its SGD step in PyTorch, for the torch pipelines only (imported when one is built);
- `loaders`: the loaders a pipeline draws from (DataLoader, Grain, Hugging Face, preloaded slices);
- `grain_input`, `hf_input`: the Grain and Hugging Face datasets sources;
- `steps`: the compiled step, the batch slices, the scanned epoch (jax only);
- `epochs`: one definition of each input pipeline's epoch, shared by training, benchmarks, profiler and sweep.

This file imports nothing: spawned DataLoader workers import `jaxmlp.pipelines.data` and must stay JAX-free.
"""
