"""Each release's environment made (or found) and checked (``jaxmlp sweep env``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from jaxmlp.measure import workers
from jaxmlp.measure.environments import environments, envs
from jaxmlp.measure.sweep.matrix import Runner, run_worker
from jaxmlp.measure.sweep.settings import Matrix, Measuring


def check(
    versions: Sequence[str],
    root: Path | None = None,
    source: envs.Source = envs.INDEX,
    interpreters: Sequence[str] = (),
) -> dict[str, str]:
    """Each of ``versions``' environments under ``root`` (None: the default) made or found, with one of ``interpreters``
    where given, and a short worker run in it, said; returns each release's python."""
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
