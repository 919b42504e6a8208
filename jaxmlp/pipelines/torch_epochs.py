"""The ``torch``, ``torch_compile`` and ``torch_graph`` epochs: the tutorial's MLP in PyTorch over the same arrays."""

from __future__ import annotations

import time
from typing import Any, cast

import numpy as np

from jaxmlp.model import Params
from jaxmlp.pipelines import tolerances
from jaxmlp.pipelines.epoch_base import ArrayEpoch, Progress, wrap


class TorchEpoch(ArrayEpoch):
    """The tutorial's MLP and step in PyTorch over views of the same arrays, on a copy of the params."""

    compiled = False
    bf16_images = False  # torch takes float32 images and casts them under autocast

    def __init__(self, *args: Any):
        super().__init__(*args)
        from jaxmlp.pipelines import torch_mlp

        self.torch = torch_mlp
        self.tolerance = tolerances.reordered(self.n_steps)  # float32 rounding, amplified over the epoch's steps
        self.torch_device = torch_mlp.device_for(self.device.platform)
        torch_mlp.use_cpu_threads(torch_mlp.cpu_threads())
        self.x = torch_mlp.as_tensor(self.images, self.torch_device)  # a view of the same array on the CPU
        self.y = torch_mlp.as_tensor(np.array(self.targets, dtype=np.float32), self.torch_device)  # writable: a copy
        self.loss: torch_mlp.LossFunction = torch_mlp.loss_of(self.precision, self.torch_device)
        self.eager_loss = self.loss

    def compile(self, params: Params) -> float:
        """Nothing to compile in eager (the JAX step for the FLOPs only when asked for)."""
        self._keep_shapes(params)
        return 0.0

    def place(self, params: Params) -> Params:
        return cast(Params, self.torch.to_torch(params, self.torch_device))

    def local(self, params: Params) -> Params:
        return cast(Params, self.torch.to_numpy(cast(Any, params))) if self.torch.is_torch(params) else params

    def facts(self) -> dict[str, Any]:
        return {**self.torch.facts(self.torch_device), "torch_compiled": self.compiled}

    def __call__(self, params: Params, progress: Progress | None = None) -> Params:
        weights = self.torch.to_torch(params, self.torch_device)  # a copy: 670k floats, well under 1 ms
        batches = ((self.x[s], self.y[s]) for s in self.batches)
        for x, y in wrap(progress, batches, self.n_steps):
            self.torch.sgd_step(weights, x, y, self.step_size, self.loss)
        self.torch.synchronize(self.torch_device)  # the CPU: already done (torch is synchronous there)
        return cast(Params, self.torch.to_numpy(weights))  # materialised: host arrays


class TorchCompileEpoch(TorchEpoch):
    compiled = True

    def compile(self, params: Params) -> float:
        """The loss compiled by ``torch.compile`` for each batch size; a `JaxmlpError` where it cannot compile here."""
        super().compile(params)
        start = time.perf_counter()
        self.loss = self.torch.compiled_loss(self.eager_loss)
        firsts = [self.batches[0], *([self.batches[-1]] if len(self.sizes) > 1 else [])]
        self.torch.warm_up(self.place(params), [(self.x[s], self.y[s]) for s in firsts], self.loss)
        self.torch.synchronize(self.torch_device)
        return time.perf_counter() - start

    def facts(self) -> dict[str, Any]:
        return {**super().facts(), "torch_compile_cache": self.torch.compile_cache()}

    def __call__(self, params: Params, progress: Progress | None = None) -> Params:
        if self.loss is self.eager_loss:
            self.compile(params)
        return super().__call__(params, progress)


class TorchGraphEpoch(TorchEpoch):
    """Each step replayed from a CUDA graph, one per batch size; ``capture`` False runs the same steps eagerly."""

    def __init__(self, *args: Any, capture: bool = True):
        super().__init__(*args)
        self.capture = capture
        self.loss = self.eager_loss = self.torch.loss_of(self.precision, self.torch_device, graphed=capture)
        self.steps: dict[int, Any] = {}

    def compile(self, params: Params) -> float:
        """The static buffers made and each batch size's step captured as a CUDA graph (no value changed)."""
        super().compile(params)
        start = time.perf_counter()
        weights = self.torch.to_torch(params, self.torch_device)
        features = self.x.shape[1]
        self.steps = {
            size: self.torch.StaticStep(weights, size, features, self.step_size, self.loss) for size in self.sizes
        }
        if self.capture:
            pool = None
            for step in self.steps.values():
                pool = step.capture(pool=pool)
        self.torch.synchronize(self.torch_device)
        return time.perf_counter() - start

    def facts(self) -> dict[str, Any]:
        return {**super().facts(), "torch_cuda_graph": self.capture}

    def __call__(self, params: Params, progress: Progress | None = None) -> Params:
        if not self.steps:
            self.compile(params)
        first = next(iter(self.steps.values()))
        self.torch.assign(first.params, params)  # the captured graphs read these addresses: copied in, not replaced
        batches = ((self.x[s], self.y[s]) for s in self.batches)
        for x, y in wrap(progress, batches, self.n_steps):
            step = self.steps[len(x)]
            step.load(x, y)
            step.run()
        self.torch.synchronize(self.torch_device)
        return cast(Params, self.torch.to_numpy(first.params))
