"""The sweep's matrix: a probe process a cell, then rounds of worker processes in rotating order."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from jaxmlp.errors import NotMeasured
from jaxmlp.measure import distributed, workers
from jaxmlp.measure.environments import envs
from jaxmlp.measure.records import ProcessResult
from jaxmlp.measure.sweep.settings import TOLERANCE, Matrix, Measuring
from jaxmlp.pipelines.mnist import default_cache_dir
from jaxmlp.units import minutes

WORKER = "jaxmlp.measure.sweep.worker"
Say = Callable[[str], None]
Tick = Callable[[int, str], None]
"""Told after each process: its round (from 0) and its cell's name."""
Progress = Callable[[int], contextlib.AbstractContextManager[Tick]]
"""Given the number of processes to come, a context in which to `Tick` (a progress bar, lines in a log)."""


@dataclass(frozen=True)
class Runner:
    """How to start one cell's worker processes: its environment's python, its XLA flags, what they measure."""

    label: str  # the release, or the name given with --env LABEL=PYTHON
    python: str
    measuring: Measuring
    xla_flags: str = ""
    flags_index: int = 0  # which --xla-flags value (from 1); 0: none

    @property
    def name(self) -> str:
        return cell_name(self.label, self.xla_flags)


def cell_name(label: str, xla_flags: str) -> str:
    """A cell's name: its release (or label), and its XLA flags where it has any."""
    return f"{label} [{xla_flags}]" if xla_flags else label


class UnknownFlag(Exception):
    """XLA refused a flag in XLA_FLAGS: this release does not know it."""


def worker_environment(runner: Runner, pythonpath: str | None = None) -> dict[str, str]:
    """A worker's environment: the CPU, the cell's XLA flags alone, and alone even under mpirun or srun."""
    env = {key: value for key, value in distributed.alone(os.environ).items() if key != "XLA_FLAGS"}
    env["JAX_PLATFORMS"] = "cpu"
    env.setdefault("JAXMLP_CACHE_DIR", str(default_cache_dir()))  # the prepared MNIST files, shared with this one
    if runner.xla_flags:
        env["XLA_FLAGS"] = runner.xla_flags
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (pythonpath, env.get("PYTHONPATH")) if p)
    return env


@dataclass(frozen=True)
class Failure:
    """A process of ``cell`` (in ``round``, from 0; -1: its probe) that gave no sample, and why."""

    cell: str
    round: int
    reason: str

    def to_json(self) -> dict[str, object]:
        return {"cell": self.cell, "round": self.round, "failed": self.reason}


Record = Callable[[str, int, "ProcessResult | Failure"], None]
"""Told of each process as it ends: its cell, its round and its sample (or its `Failure`)."""


def run_worker(runner: Runner, pythonpath: str | None = None, timeout: float | None = None) -> ProcessResult:
    """One worker process's measurements (`jaxmlp.measure.sweep.worker`), under ``timeout`` seconds."""
    env = worker_environment(runner, pythonpath)
    settings = json.dumps(runner.measuring.for_workers().to_json())
    child = workers.Child(
        f"{runner.name} ({', '.join(runner.measuring.names)})", [runner.python, "-m", WORKER, settings], env, timeout
    )
    said: list[str] = []
    try:
        result = ProcessResult.from_json(workers.run_json(child, on_line=said.append))
    except workers.ChildFailed as e:
        if unknown := [line for line in e.stderr.splitlines() if "Unknown flag" in line]:
            raise UnknownFlag(unknown[-1].split("] ", 1)[-1].strip()) from None
        raise
    warned = [line.split("] ", 1)[-1].strip() for line in said if "no longer supported" in line]
    meta = {**result.metadata, "workload_source": runner.measuring.workload_source}  # not the worker's absolute paths
    return dataclasses.replace(result, metadata={**meta, "xla_warning": warned[-1]} if warned else meta)


def round_order(labels: list[str], round_: int) -> list[str]:
    """The labels' order in one round, rotating by one a round so drift falls on all labels alike."""
    shift = round_ % len(labels)
    return labels[shift:] + labels[:shift]


def run_rounds(
    runners: Mapping[str, Runner],
    processes: int,
    tick: Tick | None = None,
    pythonpath: str | None = None,
    timeout: float | None = None,
    record: Record | None = None,
    done: Mapping[tuple[str, int], ProcessResult] | None = None,
    say: Say = print,
    mine: Callable[[int], bool] = lambda round_: True,
) -> tuple[dict[str, list[ProcessResult]], list[Failure]]:
    """``processes`` rounds of one worker per runner; a process that fails or outlives ``timeout`` is a `Failure`."""
    done = done or {}
    results: dict[str, list[ProcessResult]] = {name: [] for name in runners}
    failures: list[Failure] = []
    for round_ in filter(mine, range(processes)):
        for name in round_order(list(runners), round_):
            sample: ProcessResult | Failure | None = done.get((name, round_))
            ran = sample is None
            if sample is None:
                failed = ""
                try:
                    result = run_worker(runners[name], pythonpath, timeout)
                    failed = "" if result.workloads else next(reversed(result.failed.values()), "")
                except workers.ChildFailed as e:
                    failed = str(e)
                if failed:  # the worker failed, or every workload in it did: a process that failed
                    sample = Failure(name, round_, runners[name].measuring.as_recorded(failed))
                    say(f"  round {round_ + 1}: {sample.reason}; recorded as failed, going on")
                else:
                    sample = result
                if record:
                    record(name, round_, sample)
            if isinstance(sample, Failure):
                failures.append(sample)
            else:
                results[name].append(sample)
            if tick and ran:  # a kept sample is said once, in the line before the rounds
                tick(round_, name)
    return results, failures


PROBE_FAILED = "failed at its probe"
"""The start of a cell's status when its probe process failed, or outlived its time limit."""


@dataclass(frozen=True)
class Outcome:
    """What became of a cell at its probe: ``ok``, or why it was not measured; and what XLA said of its flags."""

    status: str
    note: str = ""


@dataclass(frozen=True)
class Probed:
    """The probe processes' findings: the cells that run, what became of each, and the cost of one process."""

    runners: dict[str, Runner]
    outcomes: dict[str, Outcome]
    seconds: dict[str, float]
    reference: dict[str, ProcessResult]


def probe(
    runners: Sequence[Runner], pythonpath: str | None = None, say: Say = print, timeout: float | None = None
) -> Probed:
    """One process per cell before the rounds; a cell whose probe fails or outlives ``timeout`` is not measured."""
    ok: dict[str, Runner] = {}
    outcomes: dict[str, Outcome] = {}
    seconds: dict[str, float] = {}
    reference: dict[str, ProcessResult] = {}
    for runner in runners:
        start = time.monotonic()
        try:
            result = run_worker(
                dataclasses.replace(runner, measuring=runner.measuring.probing()),
                pythonpath,
                workers.FIRST_SECONDS if timeout is None else timeout,
            )
        except UnknownFlag as e:
            why = f"flag unknown in {runner.label} ({e})"
            say(f"  {runner.name}: not measured: {why}")
            outcomes[runner.name] = Outcome(why)
            continue
        except workers.ChildFailed as e:
            failed = runner.measuring.as_recorded(str(e))
            say(f"  probe: {failed}; this cell is not measured")
            outcomes[runner.name] = Outcome(f"{PROBE_FAILED}: {failed.split(': ', 1)[-1]}")
            continue
        if result.failed and not result.workloads:  # every workload failed: as a process that failed
            failed = runner.measuring.as_recorded(list(result.failed.values())[-1])
            say(f"  probe: {runner.name}: {failed}; this cell is not measured")
            outcomes[runner.name] = Outcome(f"{PROBE_FAILED}: the worker failed: {failed}")
            continue
        seconds[runner.name] = time.monotonic() - start
        for workload, why in result.failed.items():
            say(f"  {runner.name}: {workload} not measured: {runner.measuring.as_recorded(why)}; the others are")
        note = str(result.metadata.get("xla_warning") or "")
        if note:
            say(f"  {runner.name}: XLA says: {note}")
        ok[runner.name] = runner
        reference[runner.name] = result
        outcomes[runner.name] = Outcome("ok", note)
    return Probed(ok, outcomes, seconds, reference)


def differences(reference: Mapping[str, ProcessResult], tolerance: float) -> dict[str, dict[str, str]]:
    """For each cell, the workloads whose values are not the first cell's, and why (its file's record)."""
    names = list(reference)
    return {n: why for n in names[1:] if (why := between(reference, names[0], n, tolerance))}


DIFFER_FROM = "results differ from "
"""How `between` starts each workload's why, the other cell's name after it (`jaxmlp.measure.sweep.pairs.named`)."""


def between(processes: Mapping[str, ProcessResult], a: str, b: str, tolerance: float) -> dict[str, str]:
    """The workloads whose values differ between cells ``a`` and ``b`` within ``tolerance``, and why."""
    out: dict[str, str] = {}
    if a not in processes or b not in processes:
        return out
    for workload, times in processes[b].workloads.items():
        other = processes[a].workloads.get(workload)
        if other is None or other.output is None or times.output is None:
            continue
        if why := other.output.differs(times.output, tolerance):
            out[workload] = f"{DIFFER_FROM}{a}: {why}"
    return out


def runners_for(pythons: Mapping[str, str], matrix: Matrix, measuring: Measuring) -> list[Runner]:
    """The matrix: every release without XLA flags, then with each --xla-flags value (its own column)."""
    flags = ["", *matrix.xla_flags]
    return [
        Runner(label, python, measuring, value, i) for i, value in enumerate(flags) for label, python in pythons.items()
    ]


@dataclass(frozen=True)
class Measured:
    """A matrix measured: the probe's findings, every process of every cell, and each cell's differences."""

    probed: Probed
    processes: dict[str, list[ProcessResult]]
    differs: dict[str, dict[str, str]]
    failures: tuple[Failure, ...] = ()
    limit: float | None = None  # each worker process's time limit, in seconds
    complete: bool = True  # False: the rounds were stopped (an interrupt) before every process ran
    tolerance: float = TOLERANCE  # the relative tolerance within which two cells' values are the same

    def apart(self, a: str, b: str) -> dict[str, str]:
        """The workloads whose values differ between cells ``a`` and ``b`` themselves, and why."""
        firsts = {n: p[0] for n, p in self.processes.items() if p}
        return between({**firsts, **self.probed.reference}, a, b, self.tolerance)


@contextlib.contextmanager
def _silent(total: int) -> Iterator[Tick]:
    yield lambda round_, name: None


def measure_cells(
    runners: Sequence[Runner],
    matrix: Matrix,
    say: Say = print,
    progress: Progress | None = None,
    record: Record | None = None,
    planned: Callable[[Probed, dict[str, dict[str, str]], float], None] | None = None,
    fit: Callable[[Probed], Matrix] | None = None,
) -> Measured:
    """Probe every cell, say the cost and limit, then run the rounds; ``fit`` sets the processes from the probe."""
    with envs.jaxmlp_path() as path:
        say(f"Probing {len(runners)} cell(s), one process each")
        probed = probe(runners, path, say, matrix.timeout)
        if not probed.runners:
            said = "; ".join(f"{name} ({o.status})" for name, o in probed.outcomes.items())
            raise NotMeasured(f"no cell could be measured: {said}")
        differs = differences(probed.reference, matrix.tolerance)
        for name, why in differs.items():
            for workload, text in why.items():
                say(f"  {name}: {workload}: {text} (a comparison across the difference is marked 'results differ')")
        limit = workers.time_limit(matrix.timeout, probed.seconds.values())
        if fit:
            matrix = fit(probed)
        if planned:
            planned(probed, differs, limit)
        return rounds(probed, differs, matrix, limit, path, say, progress, record)


NOT_HERE = "planned by rank 0, but this rank has no environment for it"


def follow(
    runners: Sequence[Runner],
    plan: Probed,
    differs: dict[str, dict[str, str]],
    matrix: Matrix,
    limit: float,
    say: Say = print,
    progress: Progress | None = None,
    record: Record | None = None,
) -> Measured:
    """Ranks 1 on: rank 0's plan measured as it stands; a cell without a runner here is a `Failure` of each round."""
    own = {r.name: r for r in runners}
    lacking = [
        Failure(name, round_, NOT_HERE)
        for name in plan.runners
        if name not in own
        for round_ in filter(matrix.mine, range(matrix.processes))
    ]
    for failure in lacking:
        say(f"  {failure.cell}: {NOT_HERE}; its rounds recorded as failed")
        if record:
            record(failure.cell, failure.round, failure)
    probed = dataclasses.replace(plan, runners={name: own[name] for name in plan.runners if name in own})
    with envs.jaxmlp_path() as path:
        measured = rounds(probed, differs, matrix, limit, path, say, progress, record)
    return dataclasses.replace(measured, failures=(*measured.failures, *lacking))


def rounds(
    probed: Probed,
    differs: dict[str, dict[str, str]],
    matrix: Matrix,
    limit: float,
    path: str | None,
    say: Say = print,
    progress: Progress | None = None,
    record: Record | None = None,
    done: Mapping[tuple[str, int], ProcessResult | Failure] | None = None,
) -> Measured:
    """The rounds of a probed matrix (those of ``done`` kept from an earlier try, not run again)."""
    kept = {
        key: sample
        for key, sample in (done or {}).items()
        if not isinstance(sample, Failure) and key[0] in probed.runners and key[1] < matrix.processes
    }
    per_process = sum(probed.seconds.values()) / max(len(probed.seconds), 1)
    total = len(probed.runners) * sum(map(matrix.mine, range(matrix.processes)))
    todo = total - len(kept)  # a failed process is run again
    given = "--timeout" if matrix.timeout is not None else f"{workers.DERIVED_LIMIT} (of the probes); --timeout to set"
    ranks = matrix.share[1]
    shared = f" ({total} of them this rank's: round r is rank r mod {ranks}'s)" if ranks > 1 else ""
    say(
        f"Measuring {len(probed.runners)} cell(s) x {matrix.processes} processes = "
        f"{len(probed.runners) * matrix.processes} processes{shared}"
        + (f" ({len(kept)} kept from before, {todo} to run)" if kept else "")
        + f", about {minutes(per_process * todo)} (from the probe processes), in rotating order; each process's time "
        f"limit {minutes(limit)} ({given})"
    )
    with (progress or _silent)(todo) as tick:
        processes, failures = run_rounds(
            probed.runners, matrix.processes, tick, path, limit, record, kept, say, matrix.mine
        )
    return Measured(probed, processes, differs, tuple(failures), limit, tolerance=matrix.tolerance)
