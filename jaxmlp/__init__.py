"""jaxmlp: benchmarks and profiles of the JAX MNIST tutorial's training pipeline. The tutorial's names load from here on
first use: ``import jaxmlp`` pulls in neither JAX nor torch."""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    # the pure model (jax and numpy only)
    "init_network_params": "jaxmlp.model",
    "random_layer_params": "jaxmlp.model",
    "relu": "jaxmlp.model",
    "predict": "jaxmlp.model",
    "batched_predict": "jaxmlp.model",
    "one_hot": "jaxmlp.model",
    "loss": "jaxmlp.model",
    "accuracy": "jaxmlp.model",
    "update": "jaxmlp.model",
    "sgd_update": "jaxmlp.model",
    "evaluate": "jaxmlp.model",
    "LAYER_SIZES": "jaxmlp.model",
    # the data shim (torch and torchvision)
    "numpy_collate": "jaxmlp.pipelines.data",
    "NumpyLoader": "jaxmlp.pipelines.data",
    "FlattenAndCast": "jaxmlp.pipelines.data",
    "SyntheticMNIST": "jaxmlp.pipelines.data",
    "load_datasets": "jaxmlp.pipelines.data",
    # training
    "TrainConfig": "jaxmlp.measure.train",
    "train": "jaxmlp.measure.train",
    "JaxmlpError": "jaxmlp.errors",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'jaxmlp' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
