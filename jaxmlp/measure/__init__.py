"""Measuring: everything that runs a workload and times it. Nothing here writes a file (`jaxmlp.results` does).

- `environment`: the device and the metadata every result carries; `timing`: JAX's compile-stage durations;
- `floor`: what the hardware can do (matmul rate, the step's matmuls);
- `workload`: the workload contract (the built-in MLP workloads and the user's own), compiled once, timed apart;
- `train`: the training run behind `jaxmlp train`; `profiling`: XLA profiler captures with step markers;
- `workers`: the one way to run a child Python process (time limit, progress, JSON result, last error, kill);
  `records`: what a worker process reports (the JSON-line protocol);
- `distributed`: the local multi-process launcher and jax.distributed's start-up;
- `scaling`, `scaling_worker`: `jaxmlp scaling`, one process per device count;
- `bisection`: the bisection's logic over any measurement (pure);
- `sweep`: the jax/jaxlib version sweep (settings, worker, matrix, bisect, trials, envs).

Statistics are `jaxmlp.stats`.
"""
