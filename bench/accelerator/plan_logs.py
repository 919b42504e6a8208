"""What the accelerator check's earlier logs say each step took (`measured`), for its plan (`plan.py`): each step's
``== STEP: exit 0 after N s`` (or 124: cut off), a bench step's benchmarks at their durations (pytest's
``--durations``) and its start outside them, a train step's epochs, and the start before a log's plan.

Plain Python (the standard library): it runs before anything is installed.
"""

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path

HEADER = re.compile(r"^== \S*run\.sh .*--backend (\w+)")
STARTED = re.compile(r"^== (\S+) \(at most \d+ s\): (.*)$")
ENDED = re.compile(r"^== (\S+): exit (\d+) after (\d+) s\b")
PLANNED = re.compile(r"^== plan: \d+ steps in the (\d+) s the (\d+) s limit leaves them")
COLLECTED = re.compile(r"^=*\s*((?:\d+ (?:passed|failed|skipped|errors?|xfailed|xpassed)(?:, )?)+).* in [\d.]+s")
DURATION = re.compile(r"^(\d+(?:\.\d+)?)s (?:setup|call|teardown)\s+(\S+::\S+)$")
TRAIN = re.compile(r" -m jaxmlp train .*--pipeline (\S+) --epochs (\d+) --precision (\S+)")
STAMP = re.compile(r"\d{8}T\d{6}")


@dataclass(frozen=True)
class Measure:
    """What one earlier log says a step took: its seconds (start, opening the chip and compiles included), whether it
    completed (else it was cut off: a lower bound), the log, and its count (a bench step's benchmarks, run or
    skipped; a train step's epochs; None where the log does not say)."""

    seconds: int
    completed: bool
    log: str
    count: int | None = None
    durations: tuple[tuple[str, float], ...] = ()  # a bench step's: each benchmark's seconds (pytest's --durations)
    skipped: int = 0  # a bench step's benchmarks that skipped
    start: float = 0.0  # a bench step's seconds outside its benchmarks: the process's start, the chip, the collection


def _count(name: str, command: str, summary: str | None) -> int | None:
    """A step's count as its log shows it: a train step's ``--epochs``, a bench step's benchmarks in pytest's last
    line (passed, failed, skipped)."""
    if name.startswith("train-"):
        found = TRAIN.search(command)
        return int(found.group(2)) if found else None
    if summary is None:
        return None
    return sum(int(n) for n, kind in re.findall(r"(\d+) (\w+)", summary) if kind != "deselected")


def _name(name: str, command: str) -> str:
    """A step's name as the script names it now: an older log's ``train-<precision>`` (the scan pipeline's) as
    ``train-<pipeline>-<precision>``, read from its command."""
    found = TRAIN.search(command) if name.startswith("train-") else None
    return f"train-{found.group(1)}-{found.group(3)}" if found else name


def read_log(lines: list[str], log: str = "") -> tuple[dict[str, Measure], int | None]:
    """One log's steps as `Measure` (exit 0, or 124: cut off), and its start (the seconds before the plan: the
    limit less the steps' time its plan line says, packing's reserve included); None where it has no plan line."""
    steps: dict[str, Measure] = {}
    command, summary, planned = "", None, None
    durations: dict[str, float] = {}
    for line in lines:
        started, ended = STARTED.match(line), ENDED.match(line)
        collected, duration = COLLECTED.match(line), DURATION.match(line)
        if started:
            command, summary, durations = started.group(2), None, {}
        elif duration:
            durations[duration.group(2)] = durations.get(duration.group(2), 0.0) + float(duration.group(1))
        elif collected:
            summary = collected.group(1)
        elif ended and ended.group(2) in ("0", "124"):
            name = ended.group(1)
            skipped = re.search(r"(\d+) skipped", summary or "")
            steps[_name(name, command)] = Measure(
                int(ended.group(3)),
                ended.group(2) == "0",
                log,
                _count(name, command, summary),
                tuple(durations.items()),
                int(skipped.group(1)) if skipped else 0,
                max(int(ended.group(3)) - sum(durations.values()), 0.0),
            )
        elif planned is None and PLANNED.match(line):
            left, limit = PLANNED.match(line).groups()  # type: ignore[union-attr]
            planned = int(limit) - int(left)
    return steps, planned


def measured(reports: Path, backend: str, reserve: int = 0) -> tuple[dict[str, Measure], int | None]:
    """Per step, what the newest log of a run on ``backend`` under ``reports`` says it took (`Measure`), and that
    newest log's start before its plan (its limit less its steps' time less ``reserve``); None where no log says."""
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
    found: dict[str, Measure] = {}
    start = None
    for _, log, lines in sorted(logs, key=lambda item: item[0]):  # oldest first: the newest measure stays
        steps, before = read_log(lines, str(log))
        for name, measure in steps.items():  # a bench step's benchmarks: each at its newest duration, in any log
            older = found.get(name)
            if older is not None and measure.completed:
                durations = {**dict(older.durations), **dict(measure.durations)}
                skipped = max(older.skipped, measure.skipped)
                measure = dataclasses.replace(measure, durations=tuple(durations.items()), skipped=skipped)
            found[name] = measure
        if before is not None:
            start = before - reserve
    return found, start


def shown(path: str | Path) -> str:
    """A path as the plan prints it: relative to the folder the script runs in, where it lies under it."""
    here, where = Path.cwd().resolve(), Path(path).resolve()
    return str(where.relative_to(here)) if where.is_relative_to(here) else str(path)
