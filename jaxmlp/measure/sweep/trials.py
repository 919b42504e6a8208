"""`jaxmlp sweep trials`: the regression detector's own check on this machine. One release against itself (A/A)
and against itself with the test hook ``inject_slowdown`` (a known, recorded slowdown): three groups of worker
processes a trial (A, A again, A with the hook), one of each per round, the order rotating every round."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from jaxmlp.errors import NotMeasured
from jaxmlp.measure import workers
from jaxmlp.measure.environments.envs import jaxmlp_path
from jaxmlp.measure.noise import neighbour
from jaxmlp.measure.records import ProcessResult
from jaxmlp.measure.sweep.matrix import Progress, Runner, Say, run_rounds
from jaxmlp.measure.sweep.settings import Detector, Measuring, Trials
from jaxmlp.measure.wall_or_cpu import choose, steady
from jaxmlp.stats import Comparison, compare


@dataclass(frozen=True)
class Trial:
    """One trial: A against A with the test hook (``injected``), and A against A again (``aa``)."""

    trial: int
    values: Mapping[str, tuple[float, ...]]  # each side's steady state, a process each
    injected: Comparison
    aa: Comparison
    metric: str = ""  # the time compared (`jaxmlp.measure.wall_or_cpu`); "": wall time, in older files

    def to_json(self) -> dict[str, Any]:
        return {
            "trial": self.trial,
            "values": {k: list(v) for k, v in self.values.items()},
            "injected": self.injected.to_json(),
            "aa": self.aa.to_json(),
            "metric": self.metric,
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Trial:
        return cls(
            doc["trial"],
            {k: tuple(v) for k, v in doc["values"].items()},
            Comparison.from_json(doc["injected"]),
            Comparison.from_json(doc["aa"]),
            str(doc.get("metric") or ""),
        )


Keep = Callable[[Mapping[str, Any], Trial], None]
"""Handed each trial as it ends, with the first process's metadata."""


def run(
    trials: Trials, measuring: Measuring, detector: Detector, progress: Progress, keep: Keep, said: Say = print
) -> None:
    """Every trial in turn, each handed to ``keep`` as it ends, then told (a stop between the two loses none that
    was told)."""
    target = measuring.specs[0]
    base = replace(measuring, workloads=(target,))
    hooked = replace(base, inject_slowdown=trials.inject_slowdown)
    runners = {
        "A": Runner("A", sys.executable, base),
        "A2": Runner("A2", sys.executable, base),
        "H": Runner("H", sys.executable, hooked),
    }
    name = base.names[0]
    first: dict[str, list[ProcessResult]] = {}
    total = trials.trials * trials.processes * len(runners)
    with jaxmlp_path() as path, neighbour(trials.noise, measuring.pin_cpu), progress(total) as tick:
        for trial in range(trials.trials):
            results, failed = run_rounds(runners, trials.processes, tick, path, workers.FIRST_SECONDS, say=said)
            for side, done in results.items():
                if not done:  # no comparison, and no first process to file the trials' metadata from
                    last = [f.reason for f in failed if f.cell == side][-1:] or ["none ran"]
                    raise NotMeasured(f"trial {trial + 1}: every process of {side} failed (the last: {last[0]})")
            first = first or results
            metric = choose([*results["A"], *results["A2"]], results["H"], name)  # one metric for the trial
            values = {k: tuple(steady(v, name, metric)) for k, v in results.items()}
            injected = compare(values["A"], values["H"], detector.threshold, detector.alpha)
            aa = compare(values["A"], values["A2"], detector.threshold, detector.alpha)
            keep(first["A"][0].metadata, Trial(trial, values, injected, aa, metric.name))
            said(
                f"trial {trial + 1}: injected ratio {injected.ratio:.3f} p {injected.p_slower:.2g} -> "
                f"{injected.word}; A/A ratio {aa.ratio:.3f} p {aa.p_slower:.2g} -> {aa.word}; on {metric.name} "
                f"({metric.why})"
            )
