"""The accelerator check's plan, said before any step runs: each step asked for, in the order it runs, with its cap;
what it needs, from the logs of earlier runs on the same backend kept in the results folder (each step's
``== STEP: exit 0 after N s``; one cut off gives a lower bound), else unknown; and what the limit leaves out.

    python3 bench/accelerator/plan.py BACKEND LIMIT RESERVE REPORTS STEP:CAP...

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


def plan(backend: str, limit: int, reserve: int, reports: Path, steps: list[tuple[str, int]]) -> list[str]:
    """The plan's lines: the budget, a line a step, and what the limit leaves out."""
    found = measured(reports, backend)
    budget = limit - reserve
    lines = [f"== plan: {len(steps)} steps in {budget} s ({limit} s, {reserve} s kept to pack what they measure)"]
    used, left_out, unknown = 0, [], []
    for name, cap in steps:
        if name not in found:
            unknown.append(name)
            lines.append(
                f"==   {name}: needs unknown (no earlier {backend} run's log in {reports} has it); cap {cap} s"
            )
            continue
        seconds, completed, log = found[name]
        need = min(seconds, cap) if completed else cap
        said = f"about {seconds} s" if completed else f"more than {seconds} s (cut off)"
        if used + need > budget:
            left_out.append(name)
            lines.append(f"==   {name}: needs {said} ({log}); cap {cap} s: LEFT OUT at {limit} s")
            continue
        used += need
        lines.append(f"==   {name}: needs {said} ({log}); cap {cap} s")
    summary = f"left out at {limit} s: {', '.join(left_out)}" if left_out else f"nothing left out at {limit} s"
    summary += f" (the steps measured before need {used} s of {budget} s)"
    if unknown:
        summary += f"; {len(unknown)} not measured before share the {budget - used} s left: {', '.join(unknown)}"
    return [*lines, f"== {summary}"]


if __name__ == "__main__":
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    backend, limit, reserve, reports = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4])
    asked = [(step.rpartition(":")[0], int(step.rpartition(":")[2])) for step in sys.argv[5:]]
    print("\n".join(plan(backend, limit, reserve, reports, asked)))
