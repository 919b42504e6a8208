"""The jax/jaxlib version sweep (``jaxmlp sweep``; docs/questions/releases.md). None writes a file; this file imports
nothing, since the worker processes import `worker` alone."""
