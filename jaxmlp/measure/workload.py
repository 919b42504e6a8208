"""The sweep's workload contract: ``make()`` returns ``(fn, args)`` or a `Workload` (docs/questions/releases.md)."""

from __future__ import annotations

import functools
import importlib
import importlib.util
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jaxmlp.errors import JaxmlpError
from jaxmlp.measure.programs import Program
from jaxmlp.measure.records import Leaf, Output, WorkloadTimes
from jaxmlp.measure.workload_names import parse_spec, spec_name
from jaxmlp.registry import SWEEP_PIPELINES, SWEEP_WORKLOADS

BATCH_SIZE = 128
"""The built-in workloads' batch: the tutorial's."""


@dataclass(frozen=True)
class Workload:
    """``fn(*args)`` is one call; it returns arrays (a pytree of them). With ``compile`` None, ``fn`` is
    jitted and compiled ahead for ``args``; otherwise ``compile()`` compiles what ``fn`` runs."""

    name: str
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    compile: Callable[[], object] | None = None
    programs: Callable[[], Sequence[Program]] | None = None
    """The programs one call runs, to lower and compile apart for their facts (`jaxmlp.measure.programs`); None:
    ``jax.jit(fn)`` for ``args`` when ``compile`` is None, else none known."""

    def program_list(self) -> list[Program]:
        """`programs`, or the one jitted ``fn`` of a plain ``(fn, args)`` workload."""
        import jax

        if self.programs is not None:
            return list(self.programs())
        return [Program(self.name, jax.jit(self.fn), self.args)] if self.compile is None else []


def load_make(spec: str) -> Callable[[], Any]:
    """The ``make`` function a spec names; a one-line `JaxmlpError` when it cannot be imported."""
    where, attribute = parse_spec(spec)
    try:
        if where.endswith(".py"):
            path = Path(where)
            if not path.is_file():
                raise JaxmlpError(f"workload {spec!r}: no file {where}")
            module_spec = importlib.util.spec_from_file_location(f"jaxmlp_workload_{path.stem}", path)
            assert module_spec is not None and module_spec.loader is not None
            module = importlib.util.module_from_spec(module_spec)
            sys.modules[module_spec.name] = module
            module_spec.loader.exec_module(module)
        else:
            module = importlib.import_module(where)
    except JaxmlpError:
        raise
    except Exception as e:
        raise JaxmlpError(f"workload {spec!r} failed to import: {type(e).__name__}: {e}") from None
    make: object = getattr(module, attribute, None)
    if not callable(make):
        raise JaxmlpError(f"workload {spec!r}: {where} defines no function {attribute}")
    return make


def from_spec(spec: str) -> Workload:
    """Import a user workload and call its ``make()``: one-line errors for everything it can get wrong."""
    make = load_make(spec)
    try:
        made = make()
    except Exception as e:
        raise JaxmlpError(f"workload {spec!r}: make() raised {type(e).__name__}: {e}") from None
    name = spec_name(spec)
    if isinstance(made, Workload):
        return made
    if not (isinstance(made, tuple) and len(made) == 2 and callable(made[0]) and isinstance(made[1], (tuple, list))):
        raise JaxmlpError(
            f"workload {spec!r}: make() must return (fn, args), a callable and a tuple of its "
            f"arguments; it returned {type(made).__name__}"
        )
    return Workload(name, made[0], tuple(made[1]))


def output_of(result: Any, name: str) -> Output:
    """What a call returned, in brief (`Output`); a `JaxmlpError` when it is not arrays."""
    import jax
    import numpy as np

    leaves = jax.tree_util.tree_leaves(result)
    if not leaves or not all(hasattr(leaf, "shape") and hasattr(leaf, "dtype") for leaf in leaves):
        kinds = sorted({type(leaf).__name__ for leaf in leaves}) or ["nothing"]
        raise JaxmlpError(f"workload {name!r} must return arrays (or a pytree of them), not {', '.join(kinds)}")
    out = []
    for leaf in leaves:
        values = np.asarray(leaf)
        flat = values.astype(np.float64).ravel()
        picks: Sequence[int] | np.ndarray = (
            np.linspace(0, flat.size - 1, min(Leaf.SAMPLED, flat.size)).astype(int) if flat.size else []
        )
        out.append(
            Leaf(
                tuple(int(n) for n in values.shape),
                str(values.dtype),
                tuple(float(flat[i]) for i in picks),
                float(flat.sum()),
                float(np.abs(flat).sum()),
            )
        )
    return Output(tuple(out))


def measure(
    workload: Workload,
    calls: int,
    timed: Callable[[Callable[[], Any]], tuple[Any, float, float]] | None = None,
    clock: Callable[[], float] = time.perf_counter,
    compiles: int = 1,
) -> WorkloadTimes:
    """Compile ``workload`` (timed apart), then time ``calls`` calls; its own exceptions become `JaxmlpError`s."""
    import jax

    def plain(fn: Callable[[], Any]) -> tuple[Any, float, float]:
        start, cpu = clock(), time.process_time()
        result = fn()
        return result, clock() - start, time.process_time() - cpu

    def compiled() -> tuple[Callable[[], Any], float]:
        """A fresh compile, JAX's caches cleared first (jax's functions here are unannotated)."""
        jax.clear_caches()  # type: ignore[no-untyped-call]
        start = clock()
        if workload.compile is None:
            executable = jax.jit(workload.fn).lower(*workload.args).compile()
            seconds = clock() - start

            def call() -> Any:
                return jax.block_until_ready(executable(*workload.args))  # type: ignore[no-untyped-call]

            return call, seconds
        workload.compile()
        seconds = clock() - start

        def call_own() -> Any:
            return jax.block_until_ready(workload.fn(*workload.args))  # type: ignore[no-untyped-call]

        return call_own, seconds

    timed = timed or plain
    try:
        call, first_compile = compiled()
        seconds, cpu, result = [], [], None
        for _ in range(calls):
            result, took, used = timed(call)
            seconds.append(took)
            cpu.append(used)
        again = [compiled()[1] for _ in range(compiles - 1)]  # after the calls: they run as they would alone
    except JaxmlpError:
        raise
    except Exception as e:
        message = str(e).strip().splitlines()[0] if str(e).strip() else ""
        raise JaxmlpError(f"workload {workload.name!r} raised {type(e).__name__}: {message}") from None
    return WorkloadTimes.of([first_compile, *again], seconds, output_of(result, workload.name), cpu)


# --- the built-in workloads: the MLP's epochs and its step, instances of the same contract ---------------------


def builtin(
    names: Sequence[str] = SWEEP_WORKLOADS,
    train: Any = None,
    batch_size: int = BATCH_SIZE,
    precision: str = "f32",
    device: Any = None,
) -> list[Workload]:
    """The tutorial's MLP as workloads over ``train``: each sweep pipeline's epoch and the SGD step."""
    import jax
    import numpy as np

    from jaxmlp.model import LAYER_SIZES, one_hot
    from jaxmlp.pipelines.epochs import make_epoch
    from jaxmlp.pipelines.steps import CompiledStep, images_for

    if unknown := sorted(set(names) - set(SWEEP_WORKLOADS)):
        raise JaxmlpError(f"unknown built-in workload {', '.join(unknown)}: choose from {', '.join(SWEEP_WORKLOADS)}")
    device = device or jax.devices()[0]
    rng = np.random.default_rng(0)
    scale = np.float32(1e-2)
    params = jax.device_put(
        [
            (scale * rng.standard_normal((n, m), np.float32), scale * rng.standard_normal(n, np.float32))
            for m, n in zip(LAYER_SIZES[:-1], LAYER_SIZES[1:])
        ],
        device,
    )
    workloads = []
    for name in names:
        if name in SWEEP_PIPELINES:
            epoch = make_epoch(name, train, batch_size=batch_size, device=device, precision=precision)
            workloads.append(
                Workload(
                    name,
                    epoch,
                    (params,),
                    functools.partial(epoch.compile, params),
                    functools.partial(epoch_programs, epoch, params, precision),
                )
            )
        else:
            step = CompiledStep(precision=precision)
            images = np.asarray(train.data[:batch_size], np.float32).reshape(batch_size, -1)
            x = jax.device_put(images_for(images, precision), device)
            y = jax.device_put(one_hot(np.asarray(train.targets[:batch_size]), 10), device)
            workloads.append(
                Workload(
                    name,
                    step,
                    (params, x, y),
                    functools.partial(step.compile, params, [batch_size], dtype=x.dtype),
                    functools.partial(step_programs, params, x, y, step.step_size, precision),
                )
            )
    return workloads


def step_programs(params: Any, x: Any, y: Any, step_size: float, precision: str = "f32") -> list[Program]:
    """The jitted step of ``precision`` alone: one program, run once a call."""
    from jaxmlp.pipelines.steps import jit_step

    return [Program("step", jit_step(precision), (params, x, y, step_size), precision=precision)]


def epoch_programs(epoch: Any, params: Any, precision: str = "f32") -> list[Program]:
    """The programs an epoch of a sweep pipeline runs in ``precision``."""
    import functools

    import jax
    import jax.numpy as jnp

    from jaxmlp.model import N_TARGETS, data_dtype
    from jaxmlp.pipelines.steps import jit_step, scan_steps, sgd_scan

    def batch(size: int) -> tuple[Any, Any]:
        return (
            jax.ShapeDtypeStruct((size, 784), data_dtype(precision)),  # type: ignore[no-untyped-call]
            jax.ShapeDtypeStruct((size, N_TARGETS), jnp.float32),  # type: ignore[no-untyped-call]
        )

    step = jit_step(precision)
    full, rest = divmod(epoch.n_samples, epoch.batch_size)
    if epoch.pipeline == "scan":
        # XLA's cost analysis counts a loop's body once: the scan's costs count once a full batch
        scan = scan_steps if precision == "f32" else jax.jit(functools.partial(sgd_scan, precision=precision))
        programs = [Program("scan", scan, (params, epoch.xs, epoch.ys, epoch.step_size), full, precision)]
    else:
        programs = [Program("step", step, (params, *batch(epoch.batch_size), epoch.step_size), full, precision)]
    if rest:
        programs.append(Program("step (last batch)", step, (params, *batch(rest), epoch.step_size), 1, precision))
    return programs
