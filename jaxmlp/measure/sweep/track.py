"""`jaxmlp track`: which releases a call measures (pure; docs/questions/tracking.md)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from jaxmlp import errors, registry
from jaxmlp.errors import JaxmlpError
from jaxmlp.measure.environments import envs
from jaxmlp.registry import version_key

PINNED = "pinned"
PREVIOUS = "previous"
AGAINST = (PREVIOUS, PINNED)
"""What a tracked release is compared with: the release tracked before it, and the release the user runs today."""


@dataclass(frozen=True)
class Track:
    """One call of `jaxmlp track`: the release run today (None: the series' start, else the newest), its budget in
    minutes, ``strict``, ``threshold`` (0.05 is ±5%) and ``dry_run``."""

    pinned: str | None = None
    budget: float = 12.0
    strict: bool = False
    threshold: float = registry.THRESHOLD
    dry_run: bool = False

    def __post_init__(self) -> None:
        if self.pinned is not None:
            envs.check_release(self.pinned)
        errors.positive_finite("--budget", self.budget)
        errors.positive_finite("--threshold", self.threshold)


@dataclass(frozen=True)
class Step:
    """What one call does: the last release tracked, the new ones, the pinned one, and why it starts there."""

    last: str
    new: tuple[str, ...]
    pinned: str
    start: str = ""

    @property
    def cells(self) -> tuple[str, ...]:
        """The releases measured side by side, oldest first: the pinned one, the last tracked and each new one."""
        return () if not self.new else tuple(sorted({self.pinned, self.last, *self.new}, key=version_key))

    @property
    def pairs(self) -> tuple[tuple[str, str, str], ...]:
        """(release, baseline, against) of each comparison: against ``previous`` and ``pinned``."""
        found = []
        for before, release in zip((self.last, *self.new), self.new):
            found.append((release, before, PREVIOUS))
            if self.pinned not in (release, before):
                found.append((release, self.pinned, PINNED))
        return tuple(found)


def newer(available: Sequence[str], last: str) -> list[str]:
    """The releases in ``available`` newer than ``last``, oldest first (nightlies by build date)."""
    return sorted((v for v in available if version_key(v) > version_key(last)), key=version_key)


def step(available: Sequence[str], last: str | None, pinned: str | None, start: str | None = None) -> Step:
    """What a call measures: every release newer than ``last``, each also against ``pinned``."""
    if not available:
        raise JaxmlpError("no release to track: the source holds none (give --wheels DIR, or check the package index)")
    newest = max(available, key=version_key)
    if last is None:
        first = pinned or newest
        found = Step(first, tuple(newer(available, first)), first, "--pinned" if pinned else "the newest release")
    else:
        found = Step(last, tuple(newer(available, last)), pinned or start or last)
    if pinned is not None and pinned not in available and (found.new or found.start):
        raise JaxmlpError(
            f"--pinned {pinned} is not among the releases of the source ({', '.join(available[-6:])}, ...): "
            "name one it holds"
        )
    return found


def started(step: Step, source: str, series: str) -> str:
    """Where a call starts its series, in a line; "" for a series begun before."""
    if not step.start:
        return ""
    if not step.new:
        return said(step, source, series)
    return f"Started the series of {series} at jax {step.last} ({step.start})."


def said(step: Step, source: str, series: str) -> str:
    """The first line a call says: the series started, nothing new, or what it measures."""
    if step.start and not step.new:
        return (
            f"Started the series of {series} at jax {step.last} ({step.start}); nothing newer in {source} yet: "
            "the next call measures each newer release against it"
        )
    if not step.new:
        return f"Nothing new to track: {source} holds nothing newer than jax {step.last}, the last tracked for {series}"
    begun = f"{started(step, source, series)} " if step.start else ""
    return (
        f"{begun}New in {source}: jax {', '.join(step.new)}; measuring {', '.join(step.cells)} side by side "
        f"(each new release against the one before it and against the pinned {step.pinned})"
    )
