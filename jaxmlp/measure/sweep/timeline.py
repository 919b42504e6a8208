"""`jaxmlp sweep timeline A B`: every release from A to B measured as one sweep matrix."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from jaxmlp.errors import JaxmlpError
from jaxmlp.measure.environments import disk as env_disk
from jaxmlp.measure.environments import envs, published
from jaxmlp.measure.sweep.settings import MIN_PROCESSES, Matrix, Timeline
from jaxmlp.registry import version_key
from jaxmlp.units import minutes


def releases(timeline: Timeline, known: Sequence[str] | None = None) -> list[str]:
    """The releases from A to B, oldest first: all, or the last patch of each minor (A and B kept)."""
    for version in (timeline.first, timeline.last):
        envs.check_release(version)
    if timeline.versions is not None:
        listed = {envs.check_release(v) for v in timeline.versions} | {timeline.first, timeline.last}
        known = sorted(listed, key=version_key)
    elif known is None:
        known = published.available(timeline.wheels)
    found = published.between(known, timeline.first, timeline.last)
    if timeline.every == "minor":
        ends = {found[0], found[-1]}
        lasts = set(published.last_of_each_minor(found)) | ends
        found = [v for v in found if v in lasts]
    if len(found) < 3:
        raise JaxmlpError(
            f"only {len(found)} releases from {timeline.first} to {timeline.last}: a timeline needs 3 or "
            "more (`jaxmlp sweep run` compares two)"
        )
    return found


def fitted_processes(budget_seconds: float, spent: float, per_round: float) -> int:
    """The processes a release that fit in what is left of the budget, at least `MIN_PROCESSES`."""
    return MIN_PROCESSES if per_round <= 0 else max(MIN_PROCESSES, math.floor((budget_seconds - spent) / per_round))


def shared(matrix: Matrix, share: tuple[int, int]) -> Matrix:
    """``matrix`` with its processes rounded up to a multiple of the ranks, and this rank's rounds."""
    ranks = share[1]
    return replace(matrix, processes=math.ceil(matrix.processes / ranks) * ranks, share=share)


def fitted(timeline: Timeline, matrix: Matrix, per_round: float) -> Matrix:
    """``matrix`` with the processes a release that fit in ``--budget``; as it is without one."""
    if not timeline.budget:
        return matrix
    processes = fitted_processes(timeline.budget * 60 * matrix.share[1], 0.0, per_round)
    return shared(replace(matrix, processes=processes), matrix.share)


def opening(timeline: Timeline, versions: Sequence[str], matrix: Matrix, asked: int, ranked: bool) -> list[str]:
    """What a timeline says before it measures: its releases, columns, disk, processes and ranks."""
    lines = [
        f"Timeline {timeline.first} to {timeline.last}: {len(versions)} releases ({', '.join(versions)}), "
        f"{1 + len(matrix.xla_flags)} column(s); {disk(versions, matrix)}; a probe process each, then "
        + (
            f"as many processes a release as fit in {timeline.budget:g} min"
            if timeline.budget
            else f"{matrix.processes} processes a release"
        )
    ]
    if ranked:
        ranks = matrix.share[1]
        rounded = f" (--processes {asked} rounded up to a multiple of the ranks)" if matrix.processes != asked else ""
        lines.append(
            f"{ranks} ranks share the rounds: {matrix.processes} processes a release{rounded}, round r measured by "
            f"rank r mod {ranks} on its node; rank 0 files the verdicts"
        )
    return lines


def cost(cells: int, matrix: Matrix, per_round: float, spent: float) -> str:
    """The line that says what the probe found the rounds will cost, the ranks sharing them."""
    return (
        f"Cost: {cells} cells x {matrix.processes} processes = {cells * matrix.processes} processes; the probe's "
        f"processes took {per_round:.1f} s a round ({minutes(spent)} so far, environments included): about "
        f"{minutes(per_round * matrix.processes / matrix.share[1])} to go"
    )


def disk(versions: Sequence[str], matrix: Matrix) -> str:
    """The disk the environments not made yet will take, as measured on those made here."""
    missing = [v for v in versions if not envs.made_any(v, matrix.envs, matrix.source)]
    size = env_disk.env_megabytes(matrix.envs)
    if missing and size:
        return f"about {size * len(missing) / 1e3:.1f} GB of disk for {len(missing)} not made yet"
    return f"{len(missing)} not made yet (size unknown: none made here)" if missing else "every environment made"
