"""Release environments, one room: the environment of release V for Python P from source S, made or reused, and
checked (`environments`, the one entry every command uses). Inside: where an environment comes from and how it is
made (`envs`: `Source`, `make_env`, under a lock), which releases a source holds (`published`), the Python each is
made with (`pythons`), and their disk (`disk`: sizes, install times, the `JAXMLP_ENVS_MAX_GB` cap)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

from jaxmlp.errors import JaxmlpError
from jaxmlp.measure.environments import disk, envs, published, pythons
from jaxmlp.measure.environments.envs import Source
from jaxmlp.units import minutes


class Asked(Protocol):
    """Where and how the environments are asked for (a sweep's `Matrix` is one): their folder (None: the default),
    their source, the interpreters given, the whole series a Python is chosen for, the environments made by hand."""

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


def environments(
    asked: Asked, versions: Sequence[str], say: Callable[[str], None] = print, *, tidy: bool = False
) -> dict[str, str]:
    """Each release's python (made first where missing, with the time that takes said before), on the Python
    `pythons.for_releases` gives it (a release none here supports named before any is made), plus the hand-made
    ones. ``tidy``: then the least recently used others removed while the folder is over its cap (`disk.prune`)."""
    for version in versions:
        envs.check_release(version)
    published.check_held(versions, asked.source)
    over = list(dict.fromkeys([*asked.series, *versions]))  # one Python for the whole series where it allows it
    chosen = pythons.for_releases(over, asked.source, asked.pythons, asked.envs, say) if versions else {}
    missing = [v for v in versions if not envs.is_made(v, asked.envs, asked.source, chosen[v])]
    if missing:
        each, size = disk.install_seconds(asked.envs), disk.env_megabytes(asked.envs)
        cost = (
            f"about {size:.0f} MB each and {minutes(each * len(missing))} in all, as the ones made here took"
            if each and size
            else "size and time unknown: none made here yet"
        )
        say(f"Environments: {len(versions) - len(missing)} made, {len(missing)} to make ({', '.join(missing)}; {cost})")
    made = {v: str(envs.make_env(v, asked.envs, say, asked.source, chosen[v])) for v in versions}
    if tidy:
        disk.prune(versions, asked.envs, say, asked.source)
    made.update(asked.hand_made)
    if not made:
        raise JaxmlpError("no releases to measure: name them (jaxmlp sweep 0.6.2 0.8.3) or give --env LABEL=PYTHON")
    return made
