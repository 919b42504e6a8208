"""A pytest plugin for a long benchmark run on an accelerator (`nox -s bench-tpu`): at its start, how long it will
take, from each benchmark's duration in the earlier runs' logs of the same backend (reports/<backend>-*/log.txt,
pytest's ``--durations``; `plan_logs.measured`), the benchmarks no log has at `plan.ESTIMATES`' seconds a benchmark,
said "estimated"; and how to make it shorter; then, every `EVERY` seconds, how far it is and how long is left.

    PYTHONPATH=bench/accelerator JAXMLP_PROGRESS_BACKEND=tpu pytest bench -p bench_progress

Without JAXMLP_PROGRESS_BACKEND it says nothing.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import plan  # bench/accelerator/plan.py and plan_logs.py, beside this file
import plan_logs

EVERY = 30.0
"""Seconds between two progress lines."""

SHORTER = (
    "shorter: `-- -k epoch` (one module's benchmarks), `-- --pipelines scan,pallas`, or the accelerator check in "
    "calls of at most 540 s each (bench/accelerator/README.md)"
)


class Progress:
    """Each collected benchmark's expected seconds (measured before, else estimated) and the run's progress."""

    def __init__(self, backend: str, reports: Path):
        self.backend, self.reports = backend, reports
        self.expected: dict[str, tuple[float, bool]] = {}  # nodeid: (seconds, measured)
        self.done: set[str] = set()
        self.start = time.monotonic()
        self.said = self.start

    def plan(self, ids: list[str]) -> str:
        """The opening line: how many benchmarks, how long (measured part, estimated part), how to shorten it."""
        found, _ = plan_logs.measured(self.reports, self.backend)
        durations: dict[str, float] = {}
        logs = set()
        for name, measure in found.items():
            if name.startswith("bench-") and measure.durations:
                durations.update(measure.durations)
                logs.add(plan_logs.shown(measure.log))
        table = plan.ESTIMATES.get(self.backend, {})
        for nodeid in ids:
            module = "bench-" + nodeid.split("::")[0].rsplit("/", 1)[-1].removesuffix(".py").removeprefix("bench_")
            if nodeid in durations:
                self.expected[nodeid] = (durations[nodeid], True)
            else:
                self.expected[nodeid] = (table.get(module, (0, 0.0))[1], False)
        measured = [s for s, known in self.expected.values() if known]
        rest = [s for s, known in self.expected.values() if not known]
        said = f"== {len(ids)} benchmarks on {self.backend}: about {sum(measured) + sum(rest):.0f} s"
        said += f" ({len(measured)} measured in an earlier run, {sum(measured):.0f} s"
        said += f" ({', '.join(sorted(logs))})" if logs else ""
        said += f"; {len(rest)} estimated, {sum(rest):.0f} s at most: those that skip take none)"
        return f"{said}; {SHORTER}"

    def finished(self, nodeid: str) -> str | None:
        """A progress line, where `EVERY` seconds have passed since the last one."""
        self.done.add(nodeid)
        now = time.monotonic()
        if now - self.said < EVERY:
            return None
        self.said = now
        left = sum(s for i, (s, _) in self.expected.items() if i not in self.done)
        share = 100 * len(self.done) / max(len(self.expected), 1)
        return (
            f"== {len(self.done)} of {len(self.expected)} benchmarks ({share:.0f}%) after {now - self.start:.0f} s; "
            f"about {left:.0f} s left (measured before where an earlier run has them, else estimated)"
        )


_PROGRESS: list[Progress] = []


def pytest_collection_finish(session: Any) -> None:
    backend = os.environ.get("JAXMLP_PROGRESS_BACKEND")
    if not backend:
        return
    progress = Progress(backend, Path(session.config.rootpath) / "reports")
    _PROGRESS.append(progress)
    _write(session.config, progress.plan([item.nodeid for item in session.items]))


def pytest_runtest_logfinish(nodeid: str, location: Any) -> None:
    if _PROGRESS:
        said = _PROGRESS[0].finished(nodeid)
        if said and _CONFIG:
            _write(_CONFIG[0], said)


_CONFIG: list[Any] = []


def pytest_configure(config: Any) -> None:
    _CONFIG.append(config)


def _write(config: Any, line: str) -> None:
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(line)
    else:
        print(line, flush=True)
