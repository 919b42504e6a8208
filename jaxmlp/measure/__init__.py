"""Measuring: timing and compile time, the compute floor, metadata, profiler traces, and the version sweep.

- `environment`: the device and the metadata every result carries;
- `timing`: JAX's own compile-stage durations inside a block;
- `floor`: what the hardware can do (matmul rate, the step's matmuls);
- `profiling`, `traces`: XLA profiler captures with step markers, and their summaries;
- `sweep`: the jax/jaxlib version sweep and the regression detector's trials.

Statistics are `jaxmlp.stats`; results go through `jaxmlp.results`.
"""
