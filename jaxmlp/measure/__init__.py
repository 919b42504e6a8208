"""Measuring: timing and compile time, the compute floor, metadata, profiler traces, and the version sweep.

- `environment`: the device and the metadata every result carries;
- `timing`: JAX's own compile-stage durations inside a block;
- `floor`: what the hardware can do (matmul rate, the step's matmuls);
- `profiling`, `traces`: XLA profiler captures with step markers, and their summaries;
- `workload`: the sweep's workload contract (the built-in MLP workloads and the user's own);
- `sweep`: the jax/jaxlib version sweep (`jaxmlp sweep`): cells, XLA flags, bisection, the detector's trials;
- `bisection`: the bisection's logic, over any measurement; `envs`: one environment per release.

Statistics are `jaxmlp.stats`; results go through `jaxmlp.results`.
"""
