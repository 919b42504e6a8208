"""Every difference between the JAX versions jaxmlp supports, in one place."""

from __future__ import annotations

import contextlib

import jax


def enable_x64():
    """A context manager that turns on 64-bit types (``jax.enable_x64`` from 0.5, experimental before)."""
    if hasattr(jax, "enable_x64"):
        return jax.enable_x64(True)
    from jax.experimental import enable_x64 as _enable_x64  # jax < 0.5

    return _enable_x64()


def cost_analysis(compiled) -> dict:
    """``Compiled.cost_analysis()`` as a dict: a dict from jax 0.4.38, a one-element list before, maybe None."""
    with contextlib.suppress(Exception):  # documented as best-effort; some backends raise
        costs = compiled.cost_analysis()
        if isinstance(costs, (list, tuple)):
            costs = costs[0] if costs else None
        return dict(costs or {})
    return {}
