"""The accelerator check's plan, said before any step runs: each step asked for, in the order it runs, with its cap;
what it needs, from the logs of earlier runs on the same backend kept in the results folder (each step's
``== STEP: exit 0 after N s``; one cut off gives a lower bound), else unknown; and what the limit leaves out.

    python3 bench/accelerator/plan.py BACKEND LIMIT LEFT REPORTS STEP:CAP:MIN...

LEFT: the seconds the steps have (the limit less what has run and what packing keeps); CAP: a step's own limit; MIN:
the least time left the script starts it with.

Plain Python (the standard library): it runs before anything is installed.
"""

import re
import sys
from pathlib import Path

HEADER = re.compile(r"^== \S*run\.sh .*--backend (\w+)")
ENDED = re.compile(r"^== (\S+): exit (\d+) after (\d+) s$")
STAMP = re.compile(r"\d{8}T\d{6}")


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


def _shown(path: str | Path) -> str:
    """A path as the plan prints it: relative to the folder the script runs in, where it lies under it."""
    here, where = Path.cwd().resolve(), Path(path).resolve()
    return str(where.relative_to(here)) if where.is_relative_to(here) else str(path)


def plan(backend: str, limit: int, left: int, reports: Path, steps: list[tuple[str, int, int]]) -> list[str]:
    """The plan's lines: the time the steps have, a line a step, and what the limit leaves out (a step measured
    before, at its need; one not, at the least time the script starts it with)."""
    found = measured(reports, backend)
    lines = [f"== plan: {len(steps)} steps in the {left} s the {limit} s limit leaves them"]
    used, reserved, left_out, unknown = 0, 0, [], []  # reserved: the least each unmeasured step starts with
    for name, cap, least in steps:
        if name in found:
            seconds, completed, log = found[name]
            need = min(seconds, cap) if completed else cap
            said = f"needs about {seconds} s" if completed else f"needs more than {seconds} s (cut off)"
            said += f" ({_shown(log)}); cap {cap} s"
        else:
            where = _shown(reports)
            need, said = least, f"needs unknown (no earlier {backend} run's log in {where} has it); cap {cap} s"
        if used + reserved + need > left:
            left_out.append(name)
            lines.append(f"==   {name}: {said}: LEFT OUT at {limit} s")
            continue
        if name in found:
            used += need
        else:
            reserved += need
            unknown.append(name)
        lines.append(f"==   {name}: {said}")
    summary = f"left out at {limit} s: {', '.join(left_out)}" if left_out else f"nothing left out at {limit} s"
    summary += f" (the steps measured before need {used} s of {left} s)"
    if unknown:
        summary += f"; {len(unknown)} not measured before share the {left - used} s left: {', '.join(unknown)}"
    return [*lines, f"== {summary}"]


if __name__ == "__main__":
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    backend, limit, left, reports = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4])
    asked = [(name, int(cap), int(least)) for name, cap, least in (step.split(":") for step in sys.argv[5:])]
    print("\n".join(plan(backend, limit, left, reports, asked)))
