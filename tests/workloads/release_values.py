"""A user's workload whose results depend on the release (as a release that changed a computation's numbers): the
tests' fake release environments set ``RELEASE_SCALE`` in the releases whose results differ."""

import os

import numpy as np


def make():
    scale = np.float32(os.environ.get("RELEASE_SCALE", "1"))
    return (lambda x: x * scale), (np.ones(8, np.float32),)
