"""Measuring: everything that runs a workload and times it (the device, the workloads, the hardware's floor, training,
child processes, scaling, the bisection and the release sweep). Nothing here writes a file (`jaxmlp.results` does)."""
