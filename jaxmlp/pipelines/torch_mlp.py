"""The tutorial's MLP and SGD step in PyTorch, imported only when a torch pipeline is built."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import torch

from jaxmlp.errors import JaxmlpError
from jaxmlp.pipelines.tolerances import EPOCH_TOLERANCE as EPOCH_TOLERANCE
from jaxmlp.pipelines.tolerances import TOLERANCE as TOLERANCE
from jaxmlp.pipelines.tolerances import TOLERANCE_STEPS as TOLERANCE_STEPS
from jaxmlp.registry import N_TARGETS

TorchParams = list[tuple[Any, Any]]
"""Params as torch tensors: ``[(w, b), ...]`` (``torch.Tensor`` is Any where torch is untyped)."""


def cpu_threads() -> int:
    """The CPUs this process may run on (its affinity), which XLA's thread pool is sized from too."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def use_cpu_threads(n: int) -> None:
    """torch's intra-op threads (its CPU kernels' parallelism): ``n``, as many as XLA's pool has."""
    torch.set_num_threads(n)


def facts(device: Any) -> dict[str, Any]:
    """What a torch result was measured with: torch's version, its threads and device."""
    return {"torch": torch.__version__, "torch_threads": torch.get_num_threads(), "torch_device": str(device)}


def compile_cache() -> bool:
    """Whether Inductor's on-disk cache is on: like JAX's persistent cache, it turns a later process's compile of the
    same graphs into a load (measured here: 37 s cold, 3.6 s warm)."""
    import torch._inductor.config as inductor

    return bool(inductor.fx_graph_cache)


def as_tensor(array: np.ndarray, device: Any) -> Any:
    """``array`` as a tensor on ``device``: a view of the same memory on the CPU (no copy)."""
    return torch.from_numpy(array).to(device)


def is_torch(params: Sequence[Sequence[Any]]) -> bool:
    return bool(params) and isinstance(params[0][0], torch.Tensor)


def device_for(platform: str) -> Any:
    """The torch device matching a JAX platform (a `JaxmlpError` where torch sees none)."""
    if platform == "cpu":
        return torch.device("cpu")
    if platform == "gpu" and torch.cuda.is_available():
        return torch.device("cuda", 0)
    raise JaxmlpError(
        f"the torch pipelines run on the CPU or a CUDA GPU; torch {torch.__version__} sees no CUDA GPU for JAX's "
        f"{platform} device: use --backend cpu"
    )


def to_torch(params: Iterable[Sequence[Any]], device: Any) -> TorchParams:
    """Copies of ``params`` as float32 leaf tensors on ``device`` that require gradients."""
    out = []
    for layer in params:
        w, b = (
            (
                p.detach().to(device, torch.float32, copy=True)
                if isinstance(p, torch.Tensor)
                else torch.from_numpy(np.array(p, dtype=np.float32)).to(device)
            )
            for p in layer
        )
        out.append((w.requires_grad_(), b.requires_grad_()))
    return out


def to_numpy(params: TorchParams) -> list[tuple[np.ndarray, np.ndarray]]:
    """``params`` as host numpy arrays (what JAX's `evaluate` and the comparisons take)."""
    return [(w.detach().cpu().numpy(), b.detach().cpu().numpy()) for w, b in params]


def predict(params: TorchParams, images: Any) -> Any:
    """Log-probabilities ``(B, 10)`` for images ``(B, 784)``, `jaxmlp.model.predict` batched by hand."""
    activations = images
    for w, b in params[:-1]:
        activations = torch.relu(activations @ w.T + b)
    final_w, final_b = params[-1]
    logits = activations @ final_w.T + final_b
    return logits - torch.logsumexp(logits, dim=1, keepdim=True)


def loss(params: TorchParams, images: Any, targets: Any) -> Any:
    """The tutorial's loss: ``-mean(preds * targets)``, i.e. cross-entropy divided by 10."""
    return -torch.mean(predict(params, images) * targets)


LossFunction = Callable[[TorchParams, Any, Any], Any]


def loss_bf16(params: TorchParams, images: Any, targets: Any) -> Any:
    """`loss` in mixed precision on the CPU: its matrix products under ``torch.autocast``."""
    with torch.autocast("cpu", dtype=torch.bfloat16):
        return loss(params, images, targets)


def loss_bf16_cuda(params: TorchParams, images: Any, targets: Any) -> Any:
    """`loss_bf16` on a CUDA GPU."""
    with torch.autocast("cuda", dtype=torch.bfloat16):
        return loss(params, images, targets)


def loss_bf16_graphed(params: TorchParams, images: Any, targets: Any) -> Any:
    """`loss_bf16_cuda` without autocast's weight cache, which a CUDA graph must not keep."""
    with torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False):
        return loss(params, images, targets)


def allow_tf32(allowed: bool) -> None:
    """Whether torch's float32 products on a CUDA GPU may take TF32 passes; the CPU has none."""
    torch.backends.cuda.matmul.allow_tf32 = allowed


def loss_of(precision: str, device: Any, graphed: bool = False) -> LossFunction:
    """The loss a precision trains (``graphed``: the form a CUDA graph captures)."""
    allow_tf32(precision == "tf32")
    if precision == "bf16":
        if device.type != "cuda":
            return loss_bf16
        return loss_bf16_graphed if graphed else loss_bf16_cuda
    return loss


def sgd_step(params: TorchParams, x: Any, y: Any, step_size: float, loss_fn: LossFunction = loss) -> None:
    """One plain SGD step on ``loss_fn``, in place: ``p <- p - step_size * dp`` for every leaf."""
    leaves = [p for layer in params for p in layer]
    grads = torch.autograd.grad(loss_fn(params, x, y), leaves)
    with torch.no_grad():
        for p, g in zip(leaves, grads):
            p.sub_(g, alpha=step_size)


class StaticStep:
    """`sgd_step` on buffers whose addresses never change, replayed as a CUDA graph once `capture` recorded it."""

    def __init__(self, params: TorchParams, size: int, features: int, step_size: float, loss_fn: LossFunction):
        device = params[0][0].device
        self.params = params
        self.x = torch.zeros(size, features, device=device)
        self.y = torch.zeros(size, N_TARGETS, device=device)
        self.step_size = step_size
        self.loss_fn = loss_fn
        self.graph: Any = None

    def load(self, x: Any, y: Any) -> None:
        """Copy a batch into the step's buffers (on the device: one copy kernel each)."""
        self.x.copy_(x)
        self.y.copy_(y)

    def eager(self) -> None:
        sgd_step(self.params, self.x, self.y, self.step_size, self.loss_fn)

    def run(self) -> None:
        """One step on what the buffers hold: the graph's replay where captured, else eager."""
        if self.graph is not None:
            self.graph.replay()
        else:
            self.eager()

    def capture(self, warmups: int = 3, pool: Any = None) -> Any:
        """Record the step as a CUDA graph (``pool``: another graph's memory pool) and return its pool."""
        kept = [p.detach().clone() for layer in self.params for p in layer]
        new_stream: Any = torch.cuda.Stream  # unannotated in torch; Any where torch is not installed (lint)
        side = new_stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(warmups):
                self.eager()
        torch.cuda.current_stream().wait_stream(side)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph, pool=pool):
            self.eager()
        with torch.no_grad():
            for p, saved in zip((p for layer in self.params for p in layer), kept):
                p.copy_(saved)
        torch.cuda.synchronize()
        return self.graph.pool()


def assign(params: TorchParams, values: Iterable[Sequence[Any]]) -> None:
    """Copy ``values`` into ``params`` in place, so the addresses a captured graph reads stay."""
    with torch.no_grad():
        for layer, given in zip(params, values):
            for p, v in zip(layer, given):
                p.copy_(v if isinstance(v, torch.Tensor) else torch.from_numpy(np.array(v, dtype=np.float32)))


def compiled_loss(loss_fn: LossFunction = loss) -> LossFunction:
    """``loss_fn`` through ``torch.compile``; a `JaxmlpError` saying why where it cannot work here."""
    if not (shutil.which("cc") or shutil.which("gcc") or shutil.which(os.environ.get("CXX", "c++"))):
        raise JaxmlpError("torch.compile needs a C compiler (Inductor builds C++ kernels): none found here (cc, gcc)")
    return torch.compile(loss_fn, dynamic=False)  # type: ignore[no-any-return]  # torch is untyped here


def warm_up(params: TorchParams, batches: Iterable[tuple[Any, Any]], loss_fn: LossFunction) -> None:
    """Compile ``loss_fn`` ahead of the epoch on copies of ``params``; a `JaxmlpError` where that fails."""
    copies = to_torch(params, params[0][0].device)
    try:
        for x, y in batches:
            torch.autograd.grad(loss_fn(copies, x, y), [p for layer in copies for p in layer])
    except Exception as e:  # Inductor's failures are of many types (BackendCompilerFailed, CalledProcessError...)
        said = next((line.strip() for line in str(e).splitlines() if line.strip()), type(e).__name__)
        raise JaxmlpError(f"torch.compile failed here ({type(e).__name__}): {said[:300]}") from None


def synchronize(device: Any) -> None:
    """Wait for ``device``'s queued work (a no-op on the CPU, where torch is synchronous)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
