"""`jaxmlp sweep timeline A B`: every release from A to B measured as one sweep matrix (`jaxmlp.measure.sweep.matrix`:
a probe process a release, then rounds in rotating order), its processes a release fitted to ``--budget``.

The change points are not decided here: the commands file the sweep, and `jaxmlp.changepoints` reads its samples.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from jaxmlp.errors import JaxmlpError
from jaxmlp.measure.sweep import envs, published
from jaxmlp.measure.sweep.settings import MIN_PROCESSES, Timeline
from jaxmlp.registry import version_key


def releases(timeline: Timeline, known: Sequence[str] | None = None) -> list[str]:
    """The releases from A to B, oldest first: every one published for jax and jaxlib alike (``known``: the
    package index's or the wheel folder's, else ``--versions``), or the last patch of each minor (``--every
    minor``; A and B kept)."""
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
    """The processes a release that fit in what is left of the budget (``spent`` already: the probe), each round
    taking ``per_round`` seconds (the probe's processes together); never fewer than `MIN_PROCESSES`."""
    if per_round <= 0:
        return MIN_PROCESSES
    return max(MIN_PROCESSES, math.floor((budget_seconds - spent) / per_round))
