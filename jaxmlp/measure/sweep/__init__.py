"""The jax/jaxlib version sweep (``jaxmlp sweep``): worker processes in rotating order, one environment per release
(docs/questions/releases.md). None writes a file.

This file imports nothing: the worker processes import `worker` alone."""
