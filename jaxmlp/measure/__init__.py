"""Measuring: everything that runs a workload and times it. Nothing here writes a file (`jaxmlp.results` does)."""
