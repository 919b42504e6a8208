"""What several ``jaxmlp sweep`` subcommands share: their option groups, the settings built from them."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Sequence

from jaxmlp import registry
from jaxmlp.cli import options
from jaxmlp.errors import JaxmlpError
from jaxmlp.measure.distributed import Ranks
from jaxmlp.measure.environments import envs
from jaxmlp.measure.sweep.settings import Matrix, Measuring
from jaxmlp.measure.workload_names import check_specs

DEFAULT_WORKLOAD = registry.SWEEP_WORKLOADS[0]
SWEEP_BACKEND = options.BACKEND.but(
    help="the JAX backend each process measures on; gpu or tpu also installs that release's accelerator packages "
    "in its environment (jax[cuda13]==V, jax[tpu]==V) (default: JAX's default device, no accelerator packages)"
)
WORKLOADS = f"a built-in ({', '.join(registry.SWEEP_WORKLOADS)}) or your own, path/to/file.py:make or module:make"


RANKED = ("timeline", "corpus")
"""The subcommands whose rounds the ranks of mpirun or srun share; the others run on one machine."""


def alone(name: str, run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """``run``, refused in one line under mpirun or srun (a subcommand whose processes one machine runs)."""

    def refusing(args: argparse.Namespace) -> int:
        if ranks := Ranks.found():
            raise JaxmlpError(
                f"jaxmlp sweep {name} runs on one machine, not as {ranks.size} ranks of mpirun or srun: start it "
                f"without them (the ranks share only {' and '.join(f'sweep {r}' for r in RANKED)})"
            )
        return run(args)

    return refusing


MEASURING = (options.WORKLOAD, *options.DATA, *options.TIMING, options.COMPILES, options.PIN_CPU, options.PRECISION)
"""What each process measures: the workloads, the data, the timing (then `SWEEP_BACKEND`)."""


def add_measuring(parser: argparse.ArgumentParser) -> None:
    """What each process measures: the workloads, the data, the timing, the backend."""
    options.add(parser, *MEASURING, SWEEP_BACKEND)


def add_matrix(parser: argparse.ArgumentParser, *own: options.Option) -> None:
    """How the releases are measured, the options (``own``: the command's rewording of some, `options.reworded`)."""
    options.add(parser, *options.reworded(options.MATRIX, *own))


def measuring_of(args: argparse.Namespace) -> Measuring:
    """What each process measures, from `add_measuring`'s options, workload files checked (`check_specs`)."""
    for spec in getattr(args, "workload", None) or ():
        if re.fullmatch(r"\d+(\.\d+)+", spec):  # `sweep run --workload scan 0.6.2`: the list took the release
            raise JaxmlpError(
                f"--workload {spec}: a release, not a workload; --workload takes every value up to the "
                "next option: give the releases first (jaxmlp sweep run 0.6.2 0.8.3 --workload scan)"
            )
    measuring = Measuring(
        tuple(getattr(args, "workload", None) or ()),
        args.dataset,
        args.data_dir,
        args.limit,
        args.epochs,
        args.calls,
        args.pin_cpu,
        precision=getattr(args, "precision", "f32"),
        backend=getattr(args, "backend", None),
        compiles=getattr(args, "compiles", 1),
    )
    check_specs(measuring.workloads)  # before any environment is made: bad usage, exit 2
    return measuring


def matrix_of(args: argparse.Namespace, versions: Sequence[str] = ()) -> Matrix:
    """How ``versions`` are measured, from `add_matrix`'s options (``--xla-flags``, ``--env`` where taken)."""
    source = source_of(args)
    return Matrix(
        tuple(versions),
        args.processes,
        tuple(getattr(args, "xla_flags", None) or ()),
        args.tolerance,
        args.envs,
        hand_made(tuple(getattr(args, "env", None) or ())),
        args.timeout,
        source,
        pythons=tuple(getattr(args, "python", None) or ()),
    )


def hand_made(specs: tuple[str, ...]) -> dict[str, str]:
    """``--env LABEL=PYTHON`` values as {label: python}."""
    out = {}
    for spec in specs:
        label, _, python = spec.partition("=")
        if not label or not python:
            raise JaxmlpError(f"--env {spec!r}: give it as LABEL=PYTHON (a release's environment made by hand)")
        out[label] = python
    return out


def source_of(args: argparse.Namespace) -> envs.Source:
    """Where the releases' environments come from (``--wheels``, else the index) and ``--backend``'s packages."""
    return envs.Source(getattr(args, "wheels", None), getattr(args, "backend", None))


def versions_of(given: Sequence[str] | None) -> tuple[str, ...] | None:
    """``--versions`` as given (None: the package index's), refused if comma-separated."""
    if given and any("," in v for v in given):
        raise JaxmlpError(
            f"--versions {' '.join(given)}: give the releases space-separated, e.g. --versions 0.6.2 0.7.0 0.7.1"
        )
    return None if given is None else tuple(given)
