"""``jaxmlp sweep env VERSION ...``: each release's environment made (or found) and checked."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from jaxmlp.cli import options
from jaxmlp.cli.sweep.common import source_of
from jaxmlp.measure import workers
from jaxmlp.measure.sweep import envs
from jaxmlp.measure.sweep.matrix import Runner, environments, run_worker
from jaxmlp.measure.sweep.settings import Matrix, Measuring

DESCRIPTION = (
    "Make each release's environment under --envs (or find it made) and check that "
    "a worker process runs in it: two short epochs of the synthetic set."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("versions", nargs="+", metavar="VERSION", help="jax/jaxlib releases (e.g. 0.6.2 0.8.3)")
    options.add(parser, options.ENVS, options.WHEELS, options.PYTHON)


def run(args: argparse.Namespace) -> int:
    """Make (or find) each release's environment and check that a worker runs in it."""
    check(tuple(args.versions), args.envs, source_of(args), tuple(args.python or ()))
    return 0


def check(
    versions: Sequence[str],
    root: Path | None = None,
    source: envs.Source = envs.INDEX,
    interpreters: Sequence[str] = (),
) -> dict[str, str]:
    """Each of ``versions``' environment under ``root`` (None: the default) made or found from ``source``, with one
    of ``interpreters`` where given (`--python`), and a worker run in it (two short epochs of the synthetic set),
    said; returns each release's python."""
    matrix = Matrix(tuple(versions), envs=root, source=source, pythons=tuple(interpreters))
    pythons = environments(matrix, matrix.versions)
    short = Measuring(dataset="synthetic", limit=512, epochs=2, calls=2)
    with envs.jaxmlp_path() as path:
        for label, python in pythons.items():
            result = run_worker(Runner(label, python, short), path, workers.FIRST_SECONDS)
            meta = result.metadata
            print(
                f"jax {label}: {python} runs (jax {meta.get('jax')}, jaxlib {meta.get('jaxlib')}, "
                f"Python {meta.get('python')})"
            )
    return pythons
