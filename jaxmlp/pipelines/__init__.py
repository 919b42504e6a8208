"""How data reaches the step: the datasets and loaders, the compiled step and each pipeline's epoch, around the pure
core (`jaxmlp.model`).

This file imports nothing: spawned DataLoader workers import `jaxmlp.pipelines.data` and must stay JAX-free."""
