"""What `jaxmlp sweep corpus` will start, said first: each case's processes and time estimated from an earlier run."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from jaxmlp.errors import JaxmlpError
from jaxmlp.measure.sweep.corpus import Case
from jaxmlp.measure.sweep.slowdown import FACTORS
from jaxmlp.measure.workload_names import workload_name
from jaxmlp.results.schema.bench import BenchmarkDocument
from jaxmlp.results.schema.sweep import SweepDocument
from jaxmlp.results.store import layout
from jaxmlp.results.store.reading import read_document
from jaxmlp.results.sweep.explain_files import EXPLAIN_PROCESSES
from jaxmlp.units import count, minutes


@dataclass(frozen=True)
class CasePlan:
    """A case's worker processes by step (a step read from an earlier case's folder: none), and the seconds a
    process took in an earlier run of it (None: none found) with where that figure comes from."""

    case: str
    timeline: int
    bisect: int
    explain: int
    trials: int
    each: float | None = None
    each_from: str = ""
    bisect_said: str = ""  # where its bisection starts none: why

    @property
    def processes(self) -> int:
        return self.timeline + self.bisect + self.explain + self.trials

    @property
    def seconds(self) -> float | None:
        """The estimate: its processes at the seconds a process took before (None: no earlier run to go by)."""
        return None if self.each is None else self.processes * self.each


def changes_explained(case: Case) -> int:
    """The changes a case's timeline explains where it finds what the case expects (two for a transient)."""
    if case.is_control or case.expect.direction == "fails":
        return 0
    return (2 if case.kind == "transient" else 1) + (1 if case.expect.flag_kept else 0)


def bisect_processes(between: int, processes: int) -> int:
    """The processes of a bisection over ``between`` releases when every probe is conclusive."""
    probes, releases = (math.ceil(math.log2(between + 1)), 3) if between else (1, 2)
    return probes * releases * (processes + 1)


def case_plan(
    case: Case, shared: Mapping[str, str], between: Sequence[str] | None, each: tuple[float, str] | None
) -> CasePlan:
    """``case``'s worker processes (``shared``: its steps read from an earlier case, `corpus.shared_steps`;
    ``between``: the releases its bisection searches between its ends, None: no bisection, or none listed now)."""
    p = case.runs.processes or 0
    columns = 2 if case.expect.flag else 1
    timeline = 0 if "timeline" in shared else len(case.releases) * columns * (p + 1)
    bisect, said = 0, "no bisection"
    if "bisect" in shared:
        said = "bisection read from an earlier case"
    elif between is not None and set(between) <= set(case.releases) and case.expect.direction != "fails":
        said = "bisection read from the timeline (no release between its ends that the timeline lacks)"
    elif between is not None and case.expect.direction == "fails":  # a probe's probe processes, then one a release
        bisect = 3 + math.ceil(math.log2(len(between) + 1))
    elif between is not None:
        bisect = bisect_processes(len(between), p)
    explain = changes_explained(case) * 2 * min(p, EXPLAIN_PROCESSES)
    trials = (case.runs.slowdown_trials or 0) * (len(FACTORS) + 1) * p if case.metric == "run" else 0  # + unslowed
    seconds, where = each if each else (None, "")
    return CasePlan(case.name, timeline, bisect, explain, trials, seconds, where, said)


def earlier_seconds(case: Case, out: Path) -> tuple[float, str] | None:
    """The seconds a process of ``case`` took in the newest earlier corpus run under ``out`` alike, and which run."""
    name = workload_name(case.workload)
    for corpus in sorted(out.glob(f"{layout.CORPUS}-*"), reverse=True):
        starts: list[datetime] = []
        for path in sorted((corpus / case.name).glob(f"{layout.TIMELINE}-*/jax-*.json")):
            try:
                doc = read_document(path)
            except JaxmlpError:
                continue
            if not isinstance(doc, BenchmarkDocument):
                continue
            for p in SweepDocument.from_benchmarks(doc).processes:
                times, start = p.workloads.get(name), p.metadata.get("timestamp")
                if times is None or len(times.call_seconds) + 1 != case.runs.calls or not start:
                    break
                starts.append(datetime.fromisoformat(str(start)))
        gaps = [(b - a).total_seconds() for a, b in zip(sorted(starts), sorted(starts)[1:])]
        gaps = [g for g in gaps if g > 0]
        if len(gaps) >= 3:
            return statistics.mean(gaps), f"{corpus.name}'s timeline of it"
    return None


def plan_lines(plans: Sequence[CasePlan]) -> list[str]:
    """The plan in lines: a line a case, then the total, each time said as estimated and from what."""
    lines = ["Plan (worker processes each case will start; the times are estimates, not measurements):"]
    for p in plans:
        parts = [
            f"timeline {p.timeline}" if p.timeline else "timeline read from an earlier case",
            f"bisection {p.bisect}" if p.bisect else p.bisect_said,
            f"explanations {p.explain}",
            f"injected-slowdown trials {p.trials}",
        ]
        when = (
            f"about {minutes(p.seconds)} at {p.each:.1f} s a process ({p.each_from})"
            if p.seconds is not None
            else "time unknown (no earlier run of it with these calls under the results folder)"
        )
        lines.append(f"  {p.case}: {count(p.processes, 'process', 'processes')} ({', '.join(parts)}); {when}")
    known = [p.seconds for p in plans if p.seconds is not None]
    total = sum(p.processes for p in plans)
    said = (
        f"about {minutes(sum(known))} for the {len(known)} case(s) with an earlier run to go by"
        if known
        else "time unknown"
    )
    lines.append(
        f"In all: {count(total, 'worker process', 'worker processes')}; {said} (estimated; environments to make "
        "not counted)"
    )
    return lines


def plan(
    cases: Sequence[Case],
    shared: Mapping[str, Mapping[str, str]],
    between: Callable[[Case], Sequence[str] | None],
    out: Path,
) -> list[CasePlan]:
    """Each case's `CasePlan` (``between``: the releases its bisection searches between its ends, None: none)."""
    return [case_plan(c, shared.get(c.name, {}), between(c), earlier_seconds(c, out)) for c in cases]
