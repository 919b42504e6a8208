"""How ``sweep run``, ``resume`` and ``timeline`` end: samples logged, files written, verdicts and misses said."""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import pandas as pd

from jaxmlp.errors import Interrupted, JaxmlpError, gate
from jaxmlp.measure.sweep.matrix import Measured
from jaxmlp.measure.sweep.unmeasured import unmeasured, unmeasured_line
from jaxmlp.report.summaries import summaries
from jaxmlp.report.text import render
from jaxmlp.results.store.frames import load
from jaxmlp.results.store.writing import ResultsStore
from jaxmlp.results.sweep.files import Plan, RunLog
from jaxmlp.results.sweep.folders import FiledChange, folder_verdicts, verdicts
from jaxmlp.units import minutes


@dataclass(frozen=True)
class SweepOutcome:
    """How a measured sweep ended: its folder, the exit code it implies, the line naming what it could not measure (""
    if none) and the changes it found (none on a rank other than 0)."""

    folder: Path
    code: int
    unmeasured: str = ""
    changes: tuple[FiledChange, ...] = ()

    def verdicts(self) -> pd.DataFrame:
        """Each comparison the sweep filed, per flags column and workload, read from the folder."""
        return verdicts(self.folder)


def measure_into(
    run: RunLog,
    plans: list[Plan],
    measure: Callable[[], Measured],
    start: float,
    shared: bool = False,
    strict: bool = False,
    tables: bool = True,
    goes_on: str = "",
) -> tuple[int, str]:
    """Measure into ``run`` and write its files (those kept, when stopped). Returns the gate's exit code and the line
    naming the cells not measured ("" if none). ``tables``: say the verdict tables; ``goes_on``: what a stop's line says
    goes on (default: `jaxmlp sweep resume`)."""
    stopped: KeyboardInterrupt | JaxmlpError | None = None
    try:
        measure()
    except (KeyboardInterrupt, JaxmlpError) as e:
        if not plans:  # stopped before the first round: nothing measured, nothing left behind
            if not shared:
                shutil.rmtree(run.folder, ignore_errors=True)
            raise
        stopped = e
    measured = run.write_cells(plans[0], complete=stopped is None)
    if stopped is not None:
        _stop(
            stopped,
            f"kept {sum(map(len, measured.processes.values()))} samples in {run.folder} "
            f"({goes_on or f'jaxmlp sweep resume {run.folder}'} goes on)",
        )
    if tables:
        print(f"\n{verdicts_of(run.folder)}\n")  # the verdicts, then the cells that failed (from cells.json)
    print(f"Wrote {len(measured.processes)} cell files into {run.folder} in {minutes(time.monotonic() - start)}")
    missing = unmeasured(measured)
    code = gate(folder_verdicts(run.folder), len(measured.failures) + len(missing), strict)
    return code, unmeasured_line(missing)


def _stop(e: KeyboardInterrupt | JaxmlpError, kept: str) -> NoReturn:
    """The stop raised again with what was ``kept``: a signal's as `Interrupted`, an error's one line."""
    if isinstance(e, KeyboardInterrupt):
        stopped = e if isinstance(e, Interrupted) else Interrupted()
        stopped.kept = kept
        raise stopped from None
    raise type(e)(f"{e}; {kept}") from None  # its kind kept: its exit code (`errors.NotMeasured`: 1)


def ended(code: int, missing: str, folder: Path, changes: Sequence[FiledChange] = ()) -> SweepOutcome:
    """How the command ended (`measure_into`'s exit code); a release not measured is named in its last line."""
    if missing:
        sys.stdout.flush()
        print(f"jaxmlp sweep: {missing}; what was measured is in {folder}", file=sys.stderr)
    return SweepOutcome(folder, code, missing, tuple(changes))


def verdicts_of(folder: Path) -> str:
    """The sweep in ``folder``, as `jaxmlp summary` shows it: its verdict tables, then its failed cells."""
    return render([found.summary for found in summaries(load(ResultsStore(folder)), folder.parent)])
