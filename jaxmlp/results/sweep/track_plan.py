"""`jaxmlp track --dry-run`'s lines (pure): what a call would measure and an estimate of its minutes."""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable, Sequence
from pathlib import Path

from jaxmlp.errors import JaxmlpError
from jaxmlp.measure.environments import EnvPlan
from jaxmlp.measure.sweep.chosen import in_envs
from jaxmlp.registry import version_key
from jaxmlp.results.schema.track import TrackDocument
from jaxmlp.results.store import layout
from jaxmlp.results.sweep.files import RunLog
from jaxmlp.results.sweep.tracked import same_series
from jaxmlp.units import count, minutes

DRY_RUN = "Dry run: nothing is measured or written."


def seconds_a_call(documents: Iterable[TrackDocument], machine: str, workloads: Sequence[str]) -> list[float]:
    """The seconds each earlier call of the series took that measured something (its ``track.json``'s)."""
    return [d.seconds for d in documents if same_series(d, machine, workloads) and d.measured and d.seconds > 0]


def expected_line(budget: float, make_seconds: float | None, to_make: int, earlier: Sequence[float]) -> str:
    """The minutes a call expects, as an estimate from ``budget`` and what this machine took before."""
    known = [budget * 60, make_seconds or 0.0]
    if earlier:
        known.append((make_seconds or 0.0) + statistics.median(earlier))
    making = (
        "every environment made already"
        if not to_make
        else f"{count(to_make, 'environment')} to make, time unknown (none made here yet)"
        if make_seconds is None
        else f"{count(to_make, 'environment')} to make, about {minutes(make_seconds)} as those made here took"
    )
    history = (
        f"this series' earlier calls took {minutes(statistics.median(earlier))} (the median of {len(earlier)})"
        if earlier
        else "the first rounds not estimated: no earlier call of this series"
    )
    return (
        f"Expected: about {minutes(max(known))} (an estimate, not a measurement: --budget {budget:g} min holds the "
        f"call but lets the environments and the first rounds finish; {making}; {history})"
    )


def plan_lines(
    planned: Sequence[EnvPlan],
    workloads: Sequence[str],
    processes: int,
    budget: float,
    make_seconds: float | None,
    earlier: Sequence[float],
) -> list[str]:
    """The dry run's lines: releases, Pythons, environments, workloads, processes, then the expected minutes."""
    if not planned:
        return [DRY_RUN]
    lines = [DRY_RUN]
    for p in planned:
        state = "made" if p.made else "to make"
        lines.append(
            f"  jax {p.release}: Python {p.python.words} ({p.python.path}), its environment {state} ({p.path})"
        )
    lines.append(
        f"  workloads: {', '.join(workloads)}; 1 probe and {processes} processes a release, then more for what is "
        "inconclusive while the budget lasts"
    )
    lines.append(expected_line(budget, make_seconds, sum(not p.made for p in planned), earlier))
    return lines


def stopped_call(folder: Path, name: str, cells: Sequence[str], workloads: Sequence[str], envs: Path) -> Path | None:
    """The newest stopped call's folder under ``folder`` that the next one goes on from; None where none."""
    machine = re.sub(r"^[^-]+-[^-]+-|-\d+$", "", name)
    wanted = tuple(sorted(cells, key=version_key))
    for path in sorted(folder.glob(f"{layout.TRACK}-*-{machine}-*"), key=layout.stamp_in, reverse=True):
        if not (path / layout.INCOMPLETE_FILE).is_file() or (path / layout.TRACK_FILE).exists():
            continue
        try:
            plan, _ = RunLog(path).read()
        except JaxmlpError:
            continue
        runners = [*plan.runners, *plan.probed.runners.values()]
        if not plan.runners or tuple(sorted({r.label for r in plan.runners}, key=version_key)) != wanted:
            continue
        if all(r.measuring.workloads == tuple(workloads) and in_envs(r.python, envs) for r in runners):
            return path
    return None
