"""Training runs: loss falls on real MNIST, a synthetic run learns, divergence is reported."""

import math

import jax
import numpy as np
import pytest
from jax import random

from jaxmlp import model
from jaxmlp.errors import JaxmlpError
from jaxmlp.measure.train import EpochRecord, TrainConfig, steady_state_seconds, to_rows, train, validate_config
from jaxmlp.pipelines import data
from jaxmlp.pipelines.steps import CompiledStep, seed_epoch


@pytest.fixture(scope="module")
def synthetic():
    return data.load_datasets("synthetic", synthetic_sizes=(4000, 1000))


@pytest.mark.mnist
def test_loss_falls_over_a_few_steps_on_real_mnist(mnist):
    params = model.init_network_params(model.LAYER_SIZES, random.PRNGKey(0))
    loader = iter(data.make_loader(mnist.train, batch_size=128))
    x0, y0 = next(loader)
    y0 = model.one_hot(y0, 10)
    before = float(model.loss(params, x0, y0))
    for x, y in [next(loader) for _ in range(20)]:
        params = model.update(params, x, model.one_hot(y, 10))
    after = float(model.loss(params, x0, y0))
    assert after < 0.5 * before


def test_compiled_step_equals_the_jitted_update(synthetic):
    params = model.init_network_params(model.LAYER_SIZES, random.PRNGKey(0))
    x, y = next(iter(data.make_loader(synthetic.train, batch_size=100)))
    y = model.one_hot(y, 10)
    step = CompiledStep(0.01)
    assert step.compile(params, [100]) > 0
    for a, b in zip(
        jax.tree_util.tree_leaves(step(params, x, y)), jax.tree_util.tree_leaves(model.update(params, x, y))
    ):
        np.testing.assert_array_equal(a, b)


def test_seed_epoch_equals_stepping_by_hand(synthetic):
    params = model.init_network_params(model.LAYER_SIZES, random.PRNGKey(0))
    loader = data.make_loader(synthetic.train, batch_size=512)
    by_hand = params
    for x, y in loader:
        by_hand = model.update(by_hand, x, model.one_hot(y, 10))
    epoch = seed_epoch(params, loader, CompiledStep(0.01))
    for a, b in zip(jax.tree_util.tree_leaves(epoch), jax.tree_util.tree_leaves(by_hand)):
        np.testing.assert_array_equal(a, b)


def test_one_epoch_on_synthetic_data_learns(synthetic):
    seen = []
    result = train(TrainConfig(epochs=2, batch_size=32, dataset="synthetic"), synthetic, on_epoch=seen.append)
    assert seen == result.records and [r.epoch for r in seen] == [0, 1]
    first, second = result.records
    assert first.steps == math.ceil(4000 / 32)
    assert second.train_accuracy > 0.6 and second.test_accuracy > 0.6  # chance is 0.1
    assert second.train_loss < first.train_loss
    assert first.compile_seconds > 0 and second.compile_seconds == 0.0  # compiled once, ahead
    assert first.epoch_seconds > 0 and not first.diverged
    assert math.isclose(first.samples_per_second, 4000 / first.epoch_seconds)
    assert result.metadata["backend"] == "cpu" and result.metadata["jax"] == jax.__version__

    rows = to_rows(
        TrainConfig(epochs=2, batch_size=32, dataset="synthetic"), synthetic, result.records, result.metadata
    )
    assert rows[0]["dataset"] == "synthetic" and rows[0]["config_batch_size"] == 32
    assert rows[1]["epoch"] == 1 and rows[1]["jaxlib"] and rows[1]["device_kind"]


def test_a_diverging_run_stops_and_reports_no_accuracy(synthetic):
    result = train(TrainConfig(epochs=5, batch_size=64, step_size=1e4, dataset="synthetic"), synthetic)
    last = result.records[-1]
    assert last.diverged and last.train_accuracy is None and last.train_loss is None
    assert len(result.records) < 5


def test_steady_state_leaves_out_epoch_zero():
    def record(epoch, seconds):
        return EpochRecord(epoch, seconds, 0.0, 1, 1.0, 0.1, 0.9, 0.1, 0.9, False)

    assert steady_state_seconds([9.0, 2.0, 4.0, 3.0]) == 3.0
    assert math.isnan(steady_state_seconds([9.0]))  # one epoch: the first's own costs, no steady state


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"epochs": 0}, "--epochs must be at least 1"),
        ({"batch_size": -1}, "--batch-size must be at least 1"),
        ({"step_size": 0.0}, "--step-size must be a positive finite number"),
        ({"step_size": float("nan")}, "--step-size must be a positive finite number"),
        ({"workers": -2}, "--workers must be at least 0"),
        ({"backend": "npu"}, "unknown --backend 'npu'"),
        ({"dataset": "cifar"}, "unknown --dataset 'cifar'"),
        ({"pipeline": "magic"}, "unknown pipeline 'magic'"),
    ],
)
def test_impossible_settings_are_refused(change, message):
    with pytest.raises(JaxmlpError, match=message):
        validate_config(TrainConfig(**change))


def test_batch_larger_than_the_data_is_refused(synthetic):
    with pytest.raises(JaxmlpError, match="--batch-size 4001 is larger than the training set"):
        train(TrainConfig(batch_size=4001, dataset="synthetic"), synthetic)
