"""One epoch of input alone (no compute): the tutorial's NumpyLoader by worker count, vs slicing arrays."""

import time

import numpy as np
import pytest
from benchutil import measure

from jaxmlp.pipelines import data
from jaxmlp.pipelines.epochs import as_arrays, slices


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


def test_loader(benchmark, sizes, split, workers):
    benchmark.group = "loader: one epoch, batch 128"
    start = time.perf_counter()
    loader = data.make_loader(split, batch_size=128, workers=workers)  # spawned, persistent workers
    # The first epoch starts the workers: timed on its own, outside the rounds, and checked.
    labels = np.concatenate([y for _, y in loader])
    benchmark.extra_info["first_epoch_seconds"] = time.perf_counter() - start
    np.testing.assert_array_equal(labels, as_arrays(split)[1])
    expected = (len(slices(len(split), 128)), len(split))
    assert measure_and_count(benchmark, sizes, lambda: iterate(loader)) == expected


def test_arrays(benchmark, sizes, split):
    """The alternative: the split converted to arrays once, batches sliced from them."""
    benchmark.group = "loader: one epoch, batch 128"
    images, labels = as_arrays(split)
    batches = slices(len(images), 128)
    np.testing.assert_array_equal(np.concatenate([labels[s] for s in batches]), labels)
    expected = (len(batches), len(images))
    assert measure_and_count(benchmark, sizes, lambda: iterate((images[s], labels[s]) for s in batches)) == expected


def measure_and_count(benchmark, sizes, target):
    counts = []
    measure(benchmark, lambda: counts.append(target()), sizes, rounds=sizes["epoch_rounds"])
    assert len(set(counts)) == 1
    return counts[0]
