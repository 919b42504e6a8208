"""Release environments, one room: the environment of release V for Python P from source S, made or reused, and
checked (`environments`, the one entry every command uses). Inside: where an environment comes from and how it is
made (`envs`: `Source`, `make_env`, under a lock), which releases a source holds (`published`), the Python each is
made with (`pythons`), and their disk (`disk`: sizes, install times, the `JAXMLP_ENVS_MAX_GB` cap). What would be
made, planned before anything is (`planned`: a dry run's)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from jaxmlp.errors import JaxmlpError
from jaxmlp.measure.environments import disk, envs, plan
from jaxmlp.measure.environments.asked import Asked
from jaxmlp.measure.environments.plan import EnvPlan

__all__ = ["Asked", "environments", "planned"]


def environments(
    asked: Asked, versions: Sequence[str], say: Callable[[str], None] = print, *, tidy: bool = False
) -> dict[str, str]:
    """Each release's python (made first where missing, with the time that takes said before), on the Python
    `pythons.for_releases` gives it (a release none here supports named before any is made), plus the hand-made
    ones. ``tidy``: then the least recently used others removed while the folder is over its cap (`disk.prune`)."""
    planned = plan.plans(asked, versions, say)
    if line := plan.cost_line(planned, asked.envs):
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
    """Each release's environment as `environments` would use it, nothing made (what a dry run lists), and about
    the seconds making the missing ones takes (`plan.make_seconds`: an estimate, None where none was made here)."""
    found = plan.plans(asked, versions, say)
    return found, plan.make_seconds(found, asked.envs)
