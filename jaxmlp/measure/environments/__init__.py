"""Release environments, one room: the environment of release V for Python P from source S, planned, made or reused and
checked (`environments`, the one entry every command uses)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from jaxmlp.errors import JaxmlpError
from jaxmlp.measure.environments import disk, envs
from jaxmlp.measure.environments.disk import env_megabytes, install_seconds
from jaxmlp.measure.environments.envs import Interpreter, Source, check_release, env_path, is_made
from jaxmlp.measure.environments.published import check_held
from jaxmlp.measure.environments.pythons import for_releases
from jaxmlp.units import minutes

__all__ = ["Asked", "EnvPlan", "environments", "planned"]


Say = Callable[[str], None]


class Asked(Protocol):
    """Where and how the environments are asked for: their folder, source, interpreters, series and hand-made ones."""

    @property
    def envs(self) -> Path | None: ...
    @property
    def source(self) -> Source: ...
    @property
    def pythons(self) -> tuple[str, ...]: ...
    @property
    def series(self) -> tuple[str, ...]: ...
    @property
    def hand_made(self) -> Mapping[str, str]: ...


@dataclass(frozen=True)
class EnvPlan:
    """One release's environment: the Python it is made with, where it lives, whether it is made already."""

    release: str
    python: Interpreter
    path: Path
    made: bool


def plans(asked: Asked, versions: Sequence[str], say: Say = print) -> list[EnvPlan]:
    """Each of ``versions``' environment as ``asked`` would use it, on the Python chosen for it; nothing is made."""
    for version in versions:
        check_release(version)
    check_held(versions, asked.source)
    over = list(dict.fromkeys([*asked.series, *versions]))  # one Python for the whole series where it allows it
    chosen = for_releases(over, asked.source, asked.pythons, asked.envs, say) if versions else {}
    return [
        EnvPlan(
            v,
            chosen[v],
            env_path(v, asked.envs, asked.source, chosen[v]),
            is_made(v, asked.envs, asked.source, chosen[v]),
        )
        for v in versions
    ]


def make_seconds(planned: Sequence[EnvPlan], root: Path | None) -> float | None:
    """An estimate of the seconds ``planned``'s missing environments take to make; None where none was made here."""
    missing = [p for p in planned if not p.made]
    if not missing:
        return 0.0
    each = install_seconds(root)
    return each * len(missing) if each else None


def cost_line(planned: Sequence[EnvPlan], root: Path | None) -> str | None:
    """The line said before the missing environments are made (how many, which, their cost); None where none is."""
    missing = [p.release for p in planned if not p.made]
    if not missing:
        return None
    seconds, size = make_seconds(planned, root), env_megabytes(root)
    cost = (
        f"about {size:.0f} MB each and {minutes(seconds)} in all, as the ones made here took"
        if seconds and size
        else "size and time unknown: none made here yet"
    )
    return f"Environments: {len(planned) - len(missing)} made, {len(missing)} to make ({', '.join(missing)}; {cost})"


def environments(
    asked: Asked, versions: Sequence[str], say: Callable[[str], None] = print, *, tidy: bool = False
) -> dict[str, str]:
    """Each release's python, made first where missing, plus the hand-made ones; ``tidy``: then pruned to the cap."""
    planned = plans(asked, versions, say)
    if line := cost_line(planned, asked.envs):
        say(line)
    made = {p.release: str(envs.make_env(p.release, asked.envs, say, asked.source, p.python)) for p in planned}
    if tidy:
        disk.prune(versions, asked.envs, say, asked.source)
    made.update(asked.hand_made)
    if not made:
        raise JaxmlpError("no releases to measure: name them (jaxmlp sweep 0.6.2 0.8.3) or give --env LABEL=PYTHON")
    return made


def planned(
    asked: Asked, versions: Sequence[str], say: Callable[[str], None] = print
) -> tuple[list[EnvPlan], float | None]:
    """Each release's environment as `environments` would use it, nothing made, and an estimate of the making."""
    found = plans(asked, versions, say)
    return found, make_seconds(found, asked.envs)
