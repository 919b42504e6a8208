"""One epoch of input alone (no compute): each pipeline's loader by worker count (`registry.LOADER_PIPELINES`):
the tutorial's DataLoader a sample at a time, the same DataLoader a batch at a time, Grain, and array slicing."""

import time

import numpy as np
import pytest
from benchutil import epoch_rounds, measure

from jaxmlp import registry
from jaxmlp.pipelines.loaders import as_arrays, make_loader, missing_package
from jaxmlp.pipelines.steps import slices

PIPELINES = registry.LOADER_PIPELINES


def iterate(batches):
    """Consume an epoch of batches; returns (batches, samples). Host-only: nothing to wait for on a device."""
    n_batches = n_samples = 0
    for x, _ in batches:
        n_batches += 1
        n_samples += len(x)
    return n_batches, n_samples


@pytest.fixture(scope="module")
def split(datasets):
    return datasets.train


def test_loader(benchmark, sizes, split, pipeline, workers):
    if why := missing_package(pipeline):
        pytest.skip(why)
    benchmark.group = "loader: one epoch, batch 128"
    start = time.perf_counter()
    loader = make_loader(pipeline, split, batch_size=128, workers=workers)
    # The first epoch starts the workers (they persist, torch's and Grain's): timed on its own,
    # outside the rounds, and checked: the tutorial's batches, in order.
    images, labels = as_arrays(split)
    batches = list(loader)
    benchmark.extra_info["first_epoch_seconds"] = time.perf_counter() - start
    np.testing.assert_array_equal(np.concatenate([y for _, y in batches]), labels)
    np.testing.assert_array_equal(batches[-1][0], images[slices(len(images), 128)[-1]])
    del batches
    expected = (len(slices(len(split), 128)), len(split))
    counts = []
    measure(benchmark, lambda: counts.append(iterate(loader)), sizes, **epoch_rounds(sizes, pipeline))
    assert set(counts) == {expected}
