"""`jaxmlp sweep trials`: the regression detector's own check on this machine. One release against itself (A/A)
and against itself with the test hook ``inject_slowdown`` (a known, recorded slowdown): three groups of worker
processes a trial (A, A again, A with the hook), one of each per round, the order rotating every round; processes
added to a comparison that is not yet settled, as `jaxmlp track` adds them, until it is or the trial's budget ends."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from jaxmlp.errors import NotMeasured
from jaxmlp.jsonio import Plain
from jaxmlp.measure import workers
from jaxmlp.measure.environments.envs import jaxmlp_path
from jaxmlp.measure.noise import neighbour
from jaxmlp.measure.records import ProcessResult
from jaxmlp.measure.sweep.budget import Stopwatch, Taken
from jaxmlp.measure.sweep.matrix import Failure, Progress, Runner, Say, run_rounds
from jaxmlp.measure.sweep.settings import Detector, Measuring, Trials
from jaxmlp.measure.wall_or_cpu import Metric, choose, steady
from jaxmlp.stats import Comparison, compare

SIDES = {"aa": ("A", "A2"), "injected": ("A", "H")}
"""Each comparison of a trial and the groups it compares."""


@dataclass(frozen=True)
class Trial(Plain):
    """One trial: A against A with the test hook (``injected``), and A against A again (``aa``)."""

    trial: int
    values: Mapping[str, tuple[float, ...]]  # each side's steady state, a process each
    injected: Comparison
    aa: Comparison
    metric: str = ""  # the time compared (`jaxmlp.measure.wall_or_cpu`); "": wall time, in older files
    why: str = ""  # why that time (`jaxmlp.measure.wall_or_cpu.choose`)
    seconds: Mapping[str, float] | None = None  # each comparison's seconds until it settled (or the trial ended)


Keep = Callable[[Mapping[str, Any], Trial], None]
"""Handed each trial as it ends, with the first process's metadata."""
More = Callable[[Comparison], int]
"""The processes a side a comparison still needs to settle (0: settled), `jaxmlp track`'s rule."""


def run(
    trials: Trials,
    measuring: Measuring,
    detector: Detector,
    progress: Progress,
    keep: Keep,
    said: Say = print,
    more: More = lambda comparison: 0,
) -> None:
    """Every trial in turn, each handed to ``keep`` as it ends, then told (a stop between the two loses none that
    was told); ``more`` settles each comparison (none: ``trials.processes`` a side, no more)."""
    target = measuring.specs[0]
    base = replace(measuring, workloads=(target,))
    hooked = replace(base, inject_slowdown=trials.inject_slowdown)
    runners = {
        "A": Runner("A", sys.executable, base),
        "A2": Runner("A2", sys.executable, base),
        "H": Runner("H", sys.executable, hooked),
    }
    with jaxmlp_path() as path, neighbour(trials.noise, measuring.pin_cpu), progress(trials.trials) as tick:
        for number in range(trials.trials):
            trial, first = one_trial(number, runners, trials, detector, base.names[0], path, more, said)
            keep(first, trial)
            tick(number, f"trial {number + 1}")
            said(trial_line(trial))


def trial_line(trial: Trial) -> str:
    """A trial as its line says it: each comparison's ratio, p, word and seconds, the metric and why."""
    seconds = trial.seconds or {}
    told = [
        f"{name} ratio {c.ratio:.3f} p {c.p_slower:.2g} -> {c.word} ({c.n_baseline}+{c.n_new} processes"
        + (f", {seconds[key]:.0f} s)" if key in seconds else ")")
        for key, name, c in (("injected", "injected", trial.injected), ("aa", "A/A", trial.aa))
    ]
    return f"trial {trial.trial + 1}: {'; '.join(told)}; on {trial.metric} ({trial.why})"


def one_trial(
    number: int,
    runners: Mapping[str, Runner],
    trials: Trials,
    detector: Detector,
    name: str,
    path: str,
    more: More,
    said: Say,
) -> tuple[Trial, Mapping[str, Any]]:
    """One trial: ``trials.processes`` rounds of every group, then rounds of the groups of the comparisons not yet
    settled (``more``) while what is left of ``trials.budget`` minutes fits them (`Taken.fit`: each process at the
    slowest so far); with the first process's metadata. Rounds that end past the budget all the same
    settle nothing: a comparison still open before them ends as it was then."""
    began, budget = time.monotonic(), trials.budget * 60
    settled: dict[str, tuple[Comparison, float]] = {}  # a comparison as it settled, and when: kept as it was
    results: dict[str, list[ProcessResult]] = {name: [] for name in runners}
    groups, rounds, taken = dict(runners), trials.processes, Taken()
    before: Trial | None = None  # the trial as judged before the last rounds, which were planned to fit the budget
    while True:
        watch = Stopwatch(time.monotonic)
        done, failed = run_rounds(groups, rounds, watch.tick, path, workers.FIRST_SECONDS, say=said)
        _merge(number, results, done, failed)
        trial = judged(number, results, name, detector)
        taken = watch.taken(taken)
        elapsed = time.monotonic() - began
        open_ = [key for key in SIDES if key not in settled]
        if before is not None and elapsed > budget:  # past the budget: what these rounds settled is not kept
            metric = Metric(before.metric, before.why)  # their samples kept, as the metric judged before reads them
            late = replace(before, values={k: tuple(steady(v, name, metric)) for k, v in results.items()})
            return _ended(late, settled, elapsed), results["A"][0].metadata
        needs = {key: more(getattr(trial, key)) for key in open_}
        settled.update({key: (getattr(trial, key), elapsed) for key, n in needs.items() if not n})
        groups = {g: runners[g] for key, n in needs.items() if n for g in SIDES[key]}
        rounds = min(max(needs.values(), default=0), taken.fit(budget - elapsed, groups))
        if rounds < 1:
            return _ended(trial, settled, elapsed), results["A"][0].metadata
        before = trial


def _ended(trial: Trial, settled: Mapping[str, tuple[Comparison, float]], elapsed: float) -> Trial:
    """The trial as it ends: each comparison as it settled and when, one never settled as judged last, at
    ``elapsed``."""
    ended = {key: settled.get(key, (getattr(trial, key), elapsed)) for key in SIDES}
    return replace(
        trial, seconds={key: s for key, (_, s) in ended.items()}, **{key: c for key, (c, _) in ended.items()}
    )


def _merge(
    number: int, results: dict[str, list[ProcessResult]], done: Mapping[str, list[ProcessResult]], failed: list[Failure]
) -> None:
    """The rounds' processes added to each group's; a group none of whose processes ran ends the command."""
    for side, processes in done.items():
        results[side].extend(processes)
        if not results[side]:  # no comparison, and no first process to file the trials' metadata from
            last = [f.reason for f in failed if f.cell == side][-1:] or ["none ran"]
            raise NotMeasured(f"trial {number + 1}: every process of {side} failed (the last: {last[0]})")


def judged(number: int, results: Mapping[str, list[ProcessResult]], name: str, detector: Detector) -> Trial:
    """A trial's two comparisons of workload ``name`` from its processes, on the one time `choose` gives the
    trial."""
    metric = choose([*results["A"], *results["A2"]], results["H"], name)
    values = {k: tuple(steady(v, name, metric)) for k, v in results.items()}
    injected = compare(values["A"], values["H"], detector.threshold, detector.alpha)
    aa = compare(values["A"], values["A2"], detector.threshold, detector.alpha)
    return Trial(number, values, injected, aa, metric.name, metric.why)
