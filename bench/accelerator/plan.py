"""The accelerator check's plan, said before any step runs: each step asked for, in the order it runs, with its cap;
what it needs, from the logs of earlier runs on the same backend kept in the results folder (`plan_logs.measured`:
each step's ``== STEP: exit 0 after N s``, opening the chip included; a bench step's benchmarks asked for at their
durations there, a train step's time at the epochs it trained, its other epochs estimated; one cut off gives a lower
bound), else estimated from its benchmarks' count (`ESTIMATES`, said "estimated"); its cap from that need
(`cap_for`); and what the limit leaves out.

    python3 bench/accelerator/plan.py BACKEND LIMIT LEFT REPORTS [--caps FILE] [--reserve S] [--ids DIR]
        STEP:CAP:MIN[:COUNT]...

LEFT: the seconds the steps have (the limit less what has run and what packing keeps); with ``--reserve S`` (a plan
made before the script's start, ``run.sh --plan-only``) LEFT is the limit less packing's S, and the newest log's
start (installs, the device check, the benchmarks' count) is taken from it too. CAP: a step's own limit where
nothing measured nor estimated it; MIN: the least time left the script starts it with; COUNT: a bench step's
benchmarks (as collected), a train step's epochs. ``--caps FILE``: each step's ``NAME CAP`` written there for the
script; ``--ids DIR``: a bench step's benchmarks as collected, ``DIR/NAME.txt``, each timed at its duration in the
log that measured the step (pytest's ``--durations``).

Plain Python (the standard library): it runs before anything is installed.
"""

import math
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # plan_logs beside it, run as a script or loaded from its file
from plan_logs import Measure, measured, shown  # noqa: E402

ESTIMATES: dict[str, dict[str, tuple[int, float]]] = {
    # The TPU v5e runs' logs (reports/tpu-*/log.txt) over their bench files' rows: floor 88 s for 17 rows, epoch
    # 134 s for 12 and 80 s for 6, the slow rungs 87 s for 4, update 67 s for 9, predict 67 s for 12; each
    # process's start and the chip's opening 15 s; a one-epoch train step 27-29 s. A train step's later epochs: no
    # TPU log has a train step of more than one epoch (an epoch of `scan` is 15 ms there): 3 s an epoch, its
    # evaluation of both splits after it, estimated with room. The kernel's forms: 87 and 98 s inside their process
    # (reports/kernel-forms-*-tpu.jsonl's wall_seconds) with 26 variants, the process's start and the plain-JAX
    # scans added since: 150 s.
    "tpu": {
        "bench-floor": (15, 4.5),
        "bench-epoch": (15, 11.0),
        "bench-epoch-slow": (15, 18.0),
        "bench-update": (15, 6.0),
        "bench-predict": (15, 4.5),
        "bench-loader": (15, 3.0),
        "profile": (30, 0),
        "train": (28, 3.0),
        "scaling": (45, 0),
        "forms": (150, 0),
    },
    # No GPU run's log yet: the TPU's, with a GPU's own figures where known: an H200 compiles faster than the TPU
    # v5e's host (floor 110-140 s for its 41 rows with the tf32 ones), the tutorial's epoch 1.78 s there (the slow
    # rung: its checked first epoch, a round, the reference epoch, the DataLoader's start), torch.compile's
    # compiles in the epoch rows, the nox session 250-330 s at smoke sizes.
    "gpu": {
        "bench-floor": (15, 3.0),
        "bench-epoch": (15, 10.0),
        "bench-epoch-slow": (15, 20.0),
        "bench-update": (15, 6.0),
        "bench-predict": (15, 4.5),
        "bench-loader": (15, 8.0),
        "profile": (32, 0),
        "train": (28, 3.0),
        "scaling": (60, 0),
        "nox": (290, 0),
        "forms": (150, 0),
    },
    # The dry run at smoke sizes on a CPU of a few cores: one round of tiny benchmarks.
    "cpu": {
        "bench-floor": (10, 0.5),
        "bench-epoch": (10, 1.5),
        "bench-epoch-slow": (10, 8.0),
        "bench-update": (10, 0.5),
        "bench-predict": (10, 0.5),
        "bench-loader": (10, 2.0),
        "profile": (15, 0),
        "train": (20, 2.0),
        "scaling": (40, 0),
        "forms": (120, 0),
    },
}
"""Per backend and step (a bench module's ``bench-<module>``, or a kind: ``profile``, ``train``, ``scaling``,
``nox``, ``forms``): the seconds it needs before its first benchmark (a train step: with its first epoch) and each
benchmark's (each later epoch's), for a step no earlier run's log has (`estimate`) and to scale one measured at
another count; a plan says "estimated" beside every figure from here."""

CAP_FACTOR, CAP_ROOM = 1.5, 15
"""A step's cap: its need times `CAP_FACTOR` plus `CAP_ROOM` seconds (`cap_for`): a need measured before (a bench
step's: its most, `from_durations`; a step cut off, or one only estimated: at least the script's own cap)."""


def _kind(name: str) -> str:
    """The `ESTIMATES` key of step ``name``: a bench module's own name, else its kind (``profile-scan``: profile)."""
    return name if name.startswith("bench-") else name.split("-")[0]


def estimate(backend: str, name: str, count: int | None) -> tuple[int, str] | None:
    """What step ``name`` needs on ``backend`` by `ESTIMATES` (a bench step: its start and ``count`` benchmarks; a
    train step: its first epoch and ``count - 1`` more), and how it was estimated; None where there is no estimate
    (a bench step whose benchmarks were not counted)."""
    table = ESTIMATES.get(backend, {})
    if _kind(name) not in table:
        return None
    start, each = table[_kind(name)]
    if name.startswith("train-") and count is not None and count > 1 and each:
        need = round(start + (count - 1) * each)
        return need, f"estimated {need} s: {start} s with its first epoch, {count - 1} more at {each:g} s"
    if not name.startswith("bench-"):
        return start, f"estimated {start} s"
    if count is None:
        return None
    need = round(start + count * each)
    counted = f"{count} benchmark{'' if count == 1 else 's'}"
    return need, f"estimated {need} s: {counted} at {each:g} s and {start} s to start"


def from_durations(backend: str, name: str, found: Measure, asked: list[str]) -> tuple[int, int, str]:
    """What bench step ``name`` needs for the benchmarks ``asked`` (their ids) by its earlier logs' measure of it: the
    newest one's start, each asked benchmark one of them ran at its newest duration; those none ran, as many as one
    of them skipped at none (the benchmarks that skip), the rest at `ESTIMATES`' seconds a benchmark; and at most,
    every one none ran at that estimate (one that skipped then may run now: a package installed since)."""
    ran = dict(found.durations)
    known = [ran[i] for i in asked if i in ran]
    new = max(len(asked) - len(known) - found.skipped, 0)
    each = ESTIMATES.get(backend, {}).get(_kind(name), (0, 0.0))[1]
    need = round(found.start + sum(known) + new * each)
    most = round(found.start + sum(known) + (len(asked) - len(known)) * each)
    how = (
        f"{shown(found.log)} and older: {len(known)} benchmarks they ran {sum(known):.0f} s, start {found.start:.0f} s"
    )
    if new:
        how += f", {new} it did not run at an estimated {each:g} s"
    return need, most, how


def from_measure(backend: str, name: str, found: Measure, count: int | None) -> tuple[int, str]:
    """What step ``name`` needs by its earlier logs' measure of it, and how: as measured where it ran the same count
    (or its count is unknown); a bench step's time past its start (`ESTIMATES`) scaled to ``count`` benchmarks; a
    train step's with its epochs beyond those measured at `ESTIMATES`' seconds an epoch."""
    where = shown(found.log)
    if not found.completed or count is None or found.count is None or count == found.count:
        return found.seconds, where
    start, each = ESTIMATES.get(backend, {}).get(_kind(name), (0, 0.0))
    unit = "epoch" if name.startswith("train-") else "benchmark"
    then = f"{found.seconds} s for {found.count} {unit}{'' if found.count == 1 else 's'} in {where}"
    if name.startswith("train-"):
        if count < found.count or not each:
            return found.seconds, then
        need = round(found.seconds + (count - found.count) * each)
        return need, f"{then}, {count - found.count} more at an estimated {each:g} s"
    start = min(start, found.seconds)
    need = round(start + (found.seconds - start) * count / max(found.count, 1))
    return need, f"{then}, scaled to {count}"


def cap_for(need: int) -> int:
    """A step's cap from what it needs: `CAP_FACTOR` times it and `CAP_ROOM` seconds."""
    return math.ceil(need * CAP_FACTOR + CAP_ROOM)


@dataclass(frozen=True)
class Step:
    """A step asked for: its name, its cap where nothing measured nor estimated it, the least time the script
    starts it with, and its count (a bench step's benchmarks, a train step's epochs; None: not counted)."""

    name: str
    cap: int
    least: int
    count: int | None = None
    ids: tuple[str, ...] = ()  # a bench step's benchmarks, as collected (`from_durations`)


def plan(
    backend: str,
    limit: int,
    left: int,
    reports: Path,
    steps: list[Step],
    reserve: int | None = None,
) -> tuple[list[str], dict[str, int]]:
    """The plan's lines (the time the steps have, a line a step, and what the limit leaves out: a step measured
    before, at its need; one estimated, at its estimate; one neither, at the least time the script starts it with,
    and then the plan cannot tell what will fit and says so) and each step's cap. ``reserve``: a plan made before
    the script starts (``left`` the limit less it), less the newest log's start too."""
    found, start = measured(reports, backend, reserve or 0)
    lines = []
    if reserve is not None:
        if start is None:
            lines.append(f"== no earlier {backend} run's log says how long its start took: the plan counts none")
        else:
            left -= start
            lines.append(f"== the start (installs, the device, the benchmarks' count) as the newest log's: {start} s")
    lines.append(f"== plan: {len(steps)} steps in the {left} s the {limit} s limit leaves them")
    caps: dict[str, int] = {}
    used, estimated, reserved, left_out, unknown = 0, 0, 0, [], []
    for step in steps:
        name = step.name
        need, caps[name], said, kind = step_need(backend, step, found)
        if used + estimated + reserved + need > left:
            left_out.append(name)
            lines.append(f"==   {name}: {said}: LEFT OUT at {limit} s")
            continue
        if kind == MEASURED:
            used += need
        elif kind == ESTIMATED:
            estimated += need
        else:
            reserved += need
            unknown.append(name)
        lines.append(f"==   {name}: {said}")
    return [*lines, f"== {plan_summary(limit, left, used, estimated, left_out, unknown)}"], caps


MEASURED, ESTIMATED, UNKNOWN = "measured", "estimated", "unknown"
"""How a step's need is known: from an earlier log (cut off or not), from the script's estimate, or not at all."""


def step_need(backend: str, step: Step, found: dict[str, Measure]) -> tuple[int, int, str, str]:
    """A step's need in seconds, its cap, the plan's words for them and how its need is known: measured before (its
    benchmarks' durations, or the step's whole time; cut off: more than its time, its cap at least the script's),
    estimated (its cap at least the script's own), or neither (the least time the script starts it with)."""
    name, guess = step.name, estimate(backend, step.name, step.count)
    if name in found and found[name].completed and step.ids and found[name].durations:
        need, most, how = from_durations(backend, name, found[name], list(step.ids))
        return need, cap_for(most), f"needs about {need} s ({how}); cap {cap_for(most)} s", MEASURED
    if name in found and found[name].completed:
        need, how = from_measure(backend, name, found[name], step.count)
        return need, cap_for(need), f"needs about {need} s ({how}); cap {cap_for(need)} s", MEASURED
    if name in found:
        need = found[name].seconds
        cap = max(step.cap, cap_for(need))
        return need, cap, f"needs more than {need} s (cut off) ({shown(found[name].log)}); cap {cap} s", MEASURED
    if guess is not None:
        need, how = guess
        cap = max(step.cap, cap_for(need))
        return need, cap, f"needs about {need} s ({how}; no earlier {backend} run's log has it); cap {cap} s", ESTIMATED
    said = f"needs unknown (no earlier {backend} run's log nor an estimate has it); cap {step.cap} s"
    return step.least, step.cap, said, UNKNOWN


def plan_summary(limit: int, left: int, used: int, estimated: int, left_out: list[str], unknown: list[str]) -> str:
    """The plan's last line: what the limit leaves out (or whether it can tell), and the time each kind needs."""
    if left_out:
        summary = f"left out at {limit} s: {', '.join(left_out)}"
    elif unknown:
        summary = f"cannot tell what {limit} s leaves out"
    elif estimated:
        summary = f"nothing left out at {limit} s if the estimates hold"
    else:
        summary = f"nothing left out at {limit} s"
    summary += f" (the steps measured before need {used} s, those estimated {estimated} s, of {left} s)"
    if unknown:
        summary += f"; {len(unknown)} neither measured nor estimated share the {left - used - estimated} s left: "
        summary += ", ".join(unknown)
    return summary


def parse_step(text: str, ids: Path | None = None) -> Step:
    """``NAME:CAP:MIN[:COUNT]`` as a `Step`; COUNT ``-`` or absent: not counted; its benchmarks' ids from
    ``ids/NAME.txt`` where that is (a line an id)."""
    name, cap, least, *rest = text.split(":")
    count = int(rest[0]) if rest and rest[0] not in ("", "-") else None
    listed = ids / f"{name}.txt" if ids else None
    found = tuple(listed.read_text().split()) if listed and listed.is_file() else ()
    return Step(name, int(cap), int(least), count, found)


def main(argv: list[str]) -> int:
    """The plan printed (and its caps written where ``--caps FILE`` says)."""
    args, options = list(argv), {}
    for option in ("--caps", "--reserve", "--ids"):
        if option in args:
            at = args.index(option)
            options[option] = args[at + 1]
            del args[at : at + 2]
    caps_file, ids = options.get("--caps"), options.get("--ids")
    reserve = int(options["--reserve"]) if "--reserve" in options else None
    if len(args) < 4:
        sys.exit(__doc__)
    backend, limit, left, reports = args[0], int(args[1]), int(args[2]), Path(args[3])
    lines, caps = plan(
        backend, limit, left, reports, [parse_step(step, ids and Path(ids)) for step in args[4:]], reserve
    )
    print("\n".join(lines))
    if caps_file:
        Path(caps_file).write_text("".join(f"{name} {cap}\n" for name, cap in caps.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
