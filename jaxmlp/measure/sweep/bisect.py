"""`jaxmlp sweep bisect GOOD BAD`: each probe of `jaxmlp.measure.bisection` measured as a small matrix."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from jaxmlp.errors import JaxmlpError
from jaxmlp.measure.bisection import RUNS, Bisection, BisectProbe, ReleasesFailed, ResultsDiffer, bisect
from jaxmlp.measure.environments import environments, envs, published
from jaxmlp.measure.sweep.matrix import (
    PROBE_FAILED,
    Measured,
    Probed,
    Progress,
    Runner,
    Say,
    measure_cells,
    probe,
)
from jaxmlp.measure.sweep.settings import Bisect, Detector, Matrix, Measuring, is_builtin
from jaxmlp.measure.sweep.unmeasured import unmeasured, unmeasured_line
from jaxmlp.measure.workload_names import spec_name, workload_name
from jaxmlp.registry import SWEEP_WORKLOADS, version_key

RecordProbe = Callable[[int, Sequence[Runner], Measured], None]
"""Told each probe's number, its cells and what they measured (the command files it as a sweep folder)."""


@dataclass(frozen=True)
class Known:
    """Samples of the bisected workload already measured with the bisection's settings, by release, and what to tell."""

    samples: Mapping[str, Sequence[float]]
    told: Callable[[int, list[str]], None]


RecordCheck = Callable[[str, str], None]
"""Told each release the search for the first that fails checked, and what it did (`RUNS` or its failure)."""


def candidates(bisect_: Bisect) -> list[str]:
    """The good end, the releases between, the bad end (the good end first, whichever is newer)."""
    for version in (bisect_.good, bisect_.bad):
        envs.check_release(version)
    if bisect_.versions is not None:
        known = sorted({envs.check_release(v) for v in bisect_.versions} | {bisect_.good, bisect_.bad}, key=version_key)
    else:
        known = published.available(bisect_.wheels)
    between = published.between(known, bisect_.good, bisect_.bad)
    return between[::-1] if version_key(bisect_.good) > version_key(bisect_.bad) else between


def bisected(specs: Sequence[str], on: str | None) -> tuple[str, str]:
    """The workload a bisection measures, (name, spec): ``on``, else the first given, else ``batched``."""
    named = {workload_name(s): s for s in specs}
    if on is None:
        return next(iter(named.items()), (SWEEP_WORKLOADS[0], SWEEP_WORKLOADS[0]))
    if on in named:
        return on, named[on]
    if is_builtin(on):
        return on, on
    if ":" in on or on.endswith(".py"):
        return spec_name(on), on
    known = ", ".join([*named, *SWEEP_WORKLOADS])
    raise JaxmlpError(f"--on {on!r} names no workload of this run ({known}): give its file with --workload")


class _Failed(Exception):
    """A probe's cell failed at its probe process: its rounds would decide nothing."""

    def __init__(self, probed: Probed, differs: dict[str, dict[str, str]]) -> None:
        super().__init__()
        self.probed, self.differs = probed, differs


def _no_failure(probed: Probed, differs: dict[str, dict[str, str]], limit: float) -> None:
    """Told the probe's findings before the rounds: raises `_Failed` where a release failed at its probe."""
    if any(o.status.startswith(PROBE_FAILED) for o in probed.outcomes.values()):
        raise _Failed(probed, differs)


@dataclass(frozen=True)
class _Probing:
    """What every probe of a bisection runs with: the workload, its settings, the XLA flags, and where it reports."""

    target: str
    measuring: Measuring
    matrix: Matrix
    record_probe: RecordProbe
    say: Say
    bar: Progress | None

    @property
    def flags(self) -> str:
        return self.matrix.xla_flags[0] if self.matrix.xla_flags else ""

    def runner(self, release: str, python: str) -> Runner:
        return Runner(release, python, self.measuring, self.flags, 1 if self.flags else 0)


def _measured(p: _Probing, names: list[str], number: int) -> dict[str, list[float]]:
    """Probe ``number``'s releases measured and recorded: each one's steady states of the target."""
    pythons = environments(p.matrix, names, p.say)
    runners = [p.runner(v, pythons[v]) for v in names]
    try:
        measured = measure_cells(runners, p.matrix, p.say, p.bar, planned=_no_failure)
    except _Failed as e:  # no rounds: the probe is filed as far as it went, its cells' outcomes its answer
        measured = Measured(e.probed, {}, e.differs, tolerance=p.matrix.tolerance)
    p.record_probe(number, runners, measured)
    _usable(measured, runners, p.target, p.say)
    return {r.label: [x.workloads[p.target].steady_seconds for x in measured.processes[r.name]] for r in runners}


def _usable(measured: Measured, runners: Sequence[Runner], target: str, say: Say) -> None:
    """Raises what ends a bisection at a probe (`ReleasesFailed`, `ResultsDiffer`, a refused flag, a failed release)."""
    _refused(measured)
    failed = {n: o.status for n, o in measured.probed.outcomes.items() if o.status.startswith(PROBE_FAILED)}
    if failed:  # the search for the first that fails decides what comes next
        say(f"  {unmeasured_line(failed)}")
        raise ReleasesFailed({r.label: failed[r.name] for r in runners if r.name in failed})
    missing = unmeasured(measured)  # every process failed in the rounds, after its probe ran
    if missing:
        raise JaxmlpError(f"{unmeasured_line(missing)}: no bisection past this probe")
    _same_results(measured, [r.name for r in runners], target)


def _fails(p: _Probing, release: str, record_check: RecordCheck | None) -> str:
    """One probe process of ``release``: its failure, "" where it runs (told to ``record_check``)."""
    runner = p.runner(release, environments(p.matrix, [release], p.say)[release])
    with envs.jaxmlp_path() as path:
        status = probe([runner], path, p.say, p.matrix.timeout).outcomes[runner.name].status
    if status != "ok" and not status.startswith(PROBE_FAILED):  # a refused flag is no failure of the release
        raise JaxmlpError(f"not measured: {release} ({status}): no bisection past this probe")
    failure = "" if status == "ok" else status
    p.say(f"probe of {release}: {failure or RUNS}")
    if record_check is not None:
        record_check(release, failure or RUNS)
    return failure


def run(
    releases: Sequence[str],
    target: str,
    measuring: Measuring,
    matrix: Matrix,
    detector: Detector,
    record_probe: RecordProbe,
    say: Say = print,
    progress: Callable[[BisectProbe], None] | None = None,
    bar: Progress | None = None,
    record_check: RecordCheck | None = None,
    known: Known | None = None,
) -> Bisection:
    """Bisect ``releases`` on ``target``'s steady state a probe at a time, each to ``record_probe``; failing releases
    searched one process a release (``record_check``), ``known`` samples read where held."""
    if len(matrix.xla_flags) > 1:
        raise JaxmlpError("bisect takes one --xla-flags value (the setting every probe runs with)")
    probing = _Probing(target, measuring, matrix, record_probe, say, bar)
    probes: list[int] = []
    searched: list[str] = []

    def measure(names: list[str]) -> dict[str, list[float]]:
        probes.append(len(probes) + 1)
        if known is not None and all(len(known.samples.get(n, ())) >= 2 for n in names):
            known.told(probes[-1], names)
            return {n: list(known.samples[n]) for n in names}
        return _measured(probing, names, probes[-1])

    def fails(release: str) -> str:
        if not searched:
            say("Searching for the first release that fails, a probe process each")
        searched.append(release)
        return _fails(probing, release, record_check)

    try:
        return bisect(releases, measure, detector.threshold, detector.alpha, progress, fails)
    except ReleasesFailed as e:
        later = len(probes) > 1  # the low end ran in an earlier probe, failed in this one
        why = (
            "no release of this probe before it runs"
            if later
            else "a failure is bisected from a GOOD release that runs"
        )
        raise JaxmlpError(f"not measured: {e}: no bisection past this probe ({why})") from None


def _refused(measured: Measured) -> None:
    """Raises the one line of a cell whose release refused the probe's XLA flag: the bisection has no answer there."""
    refused = {
        name: o.status
        for name, o in measured.probed.outcomes.items()
        if o.status != "ok" and not o.status.startswith(PROBE_FAILED)
    }
    if refused:
        raise JaxmlpError(f"{unmeasured_line(refused)}: no bisection past this probe")


def _same_results(measured: Measured, names: Sequence[str], target: str) -> None:
    """Raises `ResultsDiffer` naming each pair of the probe's cells whose values of ``target`` differ."""
    pairs = {
        (a, b): why[target] for a, b in itertools.combinations(names, 2) if target in (why := measured.apart(a, b))
    }
    if pairs:
        raise ResultsDiffer(target, pairs)
