"""``jaxmlp sweep resume FOLDER``: a stopped sweep measured on, only what it is missing."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from jaxmlp.errors import JaxmlpError
from jaxmlp.flows.measured import SweepOutcome, ended, measure_into
from jaxmlp.flows.progress import progress_bar
from jaxmlp.measure.sweep import envs
from jaxmlp.measure.sweep.matrix import Failure, Measured, rounds
from jaxmlp.results.store import layout
from jaxmlp.results.sweep.files import RunLog

DESCRIPTION = (
    "Measure the processes a stopped sweep did not finish (those that failed "
    "too), with its own settings, into its own folder, then write its files."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("folder", metavar="FOLDER", help="the sweep's folder (it holds samples.jsonl and INCOMPLETE)")


def run(args: argparse.Namespace) -> int:
    return measure(Path(args.folder)).code


def measure(folder: Path) -> SweepOutcome:
    """The stopped sweep in ``folder`` measured on with its own settings: what it is missing, then its files."""
    start = time.monotonic()
    log = RunLog(folder)
    if not log.incomplete:
        raise JaxmlpError(f"{log.folder} is no stopped sweep (no {layout.INCOMPLETE_FILE} in it): nothing to resume")
    plan, samples = log.read()
    missing = [r.python for r in plan.probed.runners.values() if not Path(r.python).exists()]
    if missing:
        raise JaxmlpError(f"the environment {missing[0]} this sweep ran in is gone: make it again (jaxmlp sweep env)")
    print(f"Resuming {log.folder}: {sum(not isinstance(s, Failure) for s in samples.values())} samples kept")

    def rest() -> Measured:
        with envs.jaxmlp_path() as path:
            return rounds(
                plan.probed, plan.differs, plan.matrix, plan.limit, path, print, progress_bar, log.record, samples
            )

    return ended(*measure_into(log, [plan], rest, start), log.folder)
