"""Measuring: everything that runs a workload and times it. Nothing here writes a file (`jaxmlp.results` does).

- `environment`, `timing`, `memory`: the device, the metadata every result carries, compile stages, peak memory;
- `workload`, `programs`: the workload contract and what a workload compiled; `floor`, `ceilings`: the hardware;
- `train`, `tta`, `profiling`: `jaxmlp train`, `jaxmlp tta`, XLA profiler captures;
- `workers`, `records`, `distributed`: child processes, what they report, several joined as one run;
- `scaling`, `scaling_worker`, `bisection`, `sweep`: `jaxmlp scaling`, the bisection (pure), the version sweep."""
