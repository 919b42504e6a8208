"""How data reaches the step: the ring around the pure core (`jaxmlp.model`).

- `mnist` (numpy), `data` (torch), `loaders`, `grain_input`, `hf_input`: the datasets and the loaders pipelines draw
  from;
- `steps` (the compiled step, the scanned epoch), `epochs` (one definition of each pipeline's epoch), `pallas_epoch`,
  `torch_mlp` (the torch pipelines' math).

This file imports nothing: spawned DataLoader workers import `jaxmlp.pipelines.data` and must stay JAX-free."""
