"""A user's workload that fails on the releases that removed what it calls (as code calling `jax.tree_map` fails from
jax 0.6.0 on): the tests' fake release environments set ``REMOVED_API`` in the releases that lack it."""

import os

import numpy as np


def make():
    removed = os.environ.get("REMOVED_API")
    if removed:
        raise AttributeError(f"module 'jax' has no attribute '{removed}'")
    return (lambda x: x * 2.0), (np.ones(8, np.float32),)
