"""The accelerator check's plan, said before any step runs: each step asked for, in the order it runs, with its cap;
what it needs, from the logs of earlier runs on the same backend kept in the results folder (each step's
``== STEP: exit 0 after N s``; one cut off gives a lower bound), else estimated from its benchmarks' count
(`ESTIMATES`, said "estimated"); and what the limit leaves out.

    python3 bench/accelerator/plan.py BACKEND LIMIT LEFT REPORTS STEP:CAP:MIN[:ROWS]...

LEFT: the seconds the steps have (the limit less what has run and what packing keeps); CAP: a step's own limit; MIN:
the least time left the script starts it with; ROWS: a bench step's benchmarks (as collected), for its estimate.

Plain Python (the standard library): it runs before anything is installed.
"""

import re
import sys
from pathlib import Path

HEADER = re.compile(r"^== \S*run\.sh .*--backend (\w+)")
ENDED = re.compile(r"^== (\S+): exit (\d+) after (\d+) s$")
STAMP = re.compile(r"\d{8}T\d{6}")

ESTIMATES: dict[str, dict[str, tuple[int, float]]] = {
    # The TPU v5e runs' logs (reports/tpu-*/log.txt) over their bench files' rows: floor 88 s for 17 rows, epoch
    # 134 s for 12 and 80 s for 6, the slow rungs 87 s for 4, update 67 s for 9, predict 67 s for 12; each
    # process's start and the chip's opening 15 s.
    "tpu": {
        "bench-floor": (15, 4.5),
        "bench-epoch": (15, 11.0),
        "bench-epoch-slow": (15, 18.0),
        "bench-update": (15, 6.0),
        "bench-predict": (15, 4.5),
        "bench-loader": (15, 3.0),
        "profile": (30, 0),
        "train": (28, 0),
        "scaling": (45, 0),
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
        "train": (28, 0),
        "scaling": (60, 0),
        "nox": (290, 0),
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
        "train": (20, 0),
        "scaling": (40, 0),
    },
}
"""Per backend and step (a bench module's ``bench-<module>``, or a kind: ``profile``, ``train``, ``scaling``,
``nox``): the seconds it needs before its first benchmark and each benchmark's, for a step no earlier run's log has
(`estimate`); a plan says "estimated" beside every figure from here."""


def measured(reports: Path, backend: str) -> dict[str, tuple[int, bool, str]]:
    """Per step, what the newest log of a run on ``backend`` under ``reports`` says it took: (seconds, whether it
    completed, the log); a step cut off (exit 124) is a lower bound."""
    logs = []
    for log in reports.glob("*/log.txt"):
        try:
            lines = log.read_text(errors="replace").splitlines()
        except OSError:
            continue
        header = HEADER.match(lines[0]) if lines else None
        if header and header.group(1) == backend:
            stamp = STAMP.search(log.parent.name)
            logs.append((stamp.group(0) if stamp else "", log, lines))
    found: dict[str, tuple[int, bool, str]] = {}
    for _, log, lines in sorted(logs, key=lambda item: item[0]):  # oldest first: the newest measure stays
        for line in lines:
            ended = ENDED.match(line)
            if ended and ended.group(2) in ("0", "124"):
                found[ended.group(1)] = (int(ended.group(3)), ended.group(2) == "0", str(log))
    return found


def estimate(backend: str, name: str, rows: int | None) -> tuple[int, str] | None:
    """What step ``name`` needs on ``backend`` by `ESTIMATES` (a bench step: its start and ``rows`` benchmarks), and
    how it was estimated; None where there is no estimate (a bench step whose benchmarks were not counted)."""
    table = ESTIMATES.get(backend, {})
    kind = name if name.startswith("bench-") else name.split("-")[0]
    if kind not in table:
        return None
    start, each = table[kind]
    if not name.startswith("bench-"):
        return start, f"estimated {start} s"
    if rows is None:
        return None
    need = round(start + rows * each)
    counted = f"{rows} benchmark{'' if rows == 1 else 's'}"
    return need, f"estimated {need} s: {counted} at {each:g} s and {start} s to start"


def _shown(path: str | Path) -> str:
    """A path as the plan prints it: relative to the folder the script runs in, where it lies under it."""
    here, where = Path.cwd().resolve(), Path(path).resolve()
    return str(where.relative_to(here)) if where.is_relative_to(here) else str(path)


def plan(
    backend: str, limit: int, left: int, reports: Path, steps: list[tuple[str, int, int, int | None]]
) -> list[str]:
    """The plan's lines: the time the steps have, a line a step, and what the limit leaves out (a step measured
    before, at its need; one estimated, at its estimate; one neither, at the least time the script starts it with,
    and then the plan cannot tell what will fit and says so)."""
    found = measured(reports, backend)
    lines = [f"== plan: {len(steps)} steps in the {left} s the {limit} s limit leaves them"]
    used, estimated, reserved, left_out, unknown = 0, 0, 0, [], []
    for name, cap, least, rows in steps:
        guess = estimate(backend, name, rows)
        if name in found:
            seconds, completed, log = found[name]
            need = min(seconds, cap) if completed else cap
            said = f"needs about {seconds} s" if completed else f"needs more than {seconds} s (cut off)"
            said += f" ({_shown(log)}); cap {cap} s"
        elif guess is not None:
            need, how = guess
            need = min(need, cap)
            said = f"needs about {need} s ({how}; no earlier {backend} run's log has it); cap {cap} s"
        else:
            need, said = least, f"needs unknown (no earlier {backend} run's log nor an estimate has it); cap {cap} s"
        if used + estimated + reserved + need > left:
            left_out.append(name)
            lines.append(f"==   {name}: {said}: LEFT OUT at {limit} s")
            continue
        if name in found:
            used += need
        elif guess is not None:
            estimated += need
        else:
            reserved += need
            unknown.append(name)
        lines.append(f"==   {name}: {said}")
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
    return [*lines, f"== {summary}"]


def parse_step(text: str) -> tuple[str, int, int, int | None]:
    """``NAME:CAP:MIN[:ROWS]`` as (name, cap, least, rows); ROWS ``-`` or absent: not counted."""
    name, cap, least, *rest = text.split(":")
    rows = int(rest[0]) if rest and rest[0] not in ("", "-") else None
    return name, int(cap), int(least), rows


if __name__ == "__main__":
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    backend, limit, left, reports = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4])
    print("\n".join(plan(backend, limit, left, reports, [parse_step(step) for step in sys.argv[5:]])))
