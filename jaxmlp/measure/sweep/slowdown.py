"""A corpus case's injected-slowdown trials at one release (docs/results/corpus.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from jaxmlp.jsonio import Plain
from jaxmlp.measure.environments.envs import jaxmlp_path
from jaxmlp.measure.sweep.matrix import Runner, Say, run_rounds
from jaxmlp.measure.sweep.settings import Measuring

FACTORS = (1.1, 1.25)
"""The slowdowns each trial puts in, as new over old time: x1.10, the smallest step a verdict is asked to find, and
x1.25 (earlier runs put in x1.25 and x1.5: each run's trials record theirs, ``factors``)."""
UNSLOWED = "x1"
"""The group of a trial that runs the workload as it is."""


def group(factor: float) -> str:
    """A trial's group name for a slowdown: ``x1.5``."""
    return f"x{factor:g}"


@dataclass(frozen=True)
class SlowdownTrials(Plain):
    """A case's injected-slowdown trials at ``release``: each group's seconds, ``failures``, ``unslowed_from``."""

    release: str
    processes: int
    calls: int
    factors: tuple[float, ...]
    values: tuple[Mapping[str, tuple[float, ...]], ...]
    failures: tuple[str, ...] = ()
    unslowed_from: str = ""


def run(
    release: str,
    python: str,
    measuring: Measuring,
    processes: int,
    trials: int,
    timeout: float | None = None,
    factors: Sequence[float] = FACTORS,
    say: Say = print,
) -> SlowdownTrials:
    """``trials`` trials of one workload in ``release``'s environment, unslowed and with each of ``factors``."""
    runners = {UNSLOWED: Runner(release, python, measuring)}
    for factor in factors:
        runners[group(factor)] = Runner(release, python, replace(measuring, inject_slowdown=factor - 1))
    (name,) = measuring.names
    values: list[dict[str, tuple[float, ...]]] = []
    failures: list[str] = []
    with jaxmlp_path() as path:
        for trial in range(trials):
            results, failed = run_rounds(runners, processes, None, path, timeout, say=say)
            measured = {g: tuple(p.workloads[name].steady_seconds for p in results[g]) for g in runners}
            values.append(measured)
            failures += [f"trial {trial + 1}, {f.cell}: {f.reason}" for f in failed]
    return SlowdownTrials(release, processes, measuring.calls, tuple(factors), tuple(values), tuple(failures))
