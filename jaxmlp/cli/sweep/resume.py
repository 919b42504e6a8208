"""``jaxmlp sweep resume FOLDER``: a stopped sweep measured on, only what it is missing."""

from __future__ import annotations

import argparse
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from jaxmlp.cli import options
from jaxmlp.cli.sweep.common import hand_made, progress_bar
from jaxmlp.cli.sweep.measured import SweepOutcome, ended, measure_into
from jaxmlp.errors import JaxmlpError
from jaxmlp.measure.sweep import chosen, envs
from jaxmlp.measure.sweep.matrix import Failure, Measured, rounds
from jaxmlp.results.store import layout
from jaxmlp.results.sweep.files import RunLog

DESCRIPTION = (
    "Measure the processes a stopped sweep did not finish (those that failed "
    "too), with its own settings, into its own folder, then write its files."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("folder", metavar="FOLDER", help="the sweep's folder (it holds samples.jsonl and INCOMPLETE)")
    options.add(parser, options.ENVS, options.WORKLOAD.but(help="each workload of your own the sweep measured, again"))
    parser.add_argument(
        "--env", metavar="LABEL=PYTHON", **options.LIST, help="each environment made by hand the sweep measured, again"
    )


def run(args: argparse.Namespace) -> int:
    folder = Path(args.folder)
    workloads = tuple(args.workload or ())
    if folder.name.startswith(f"{layout.TRACK}-"):  # a stopped `jaxmlp track` call: gone on with as track does
        from jaxmlp.cli import track_resume

        return track_resume.resume(folder, workloads, args.envs)
    return measure(folder, args.envs, hand_made(tuple(args.env or ())), workloads).code


def measure(
    folder: Path,
    envs_folder: Path | None = None,
    pythons: Mapping[str, str] | None = None,
    workloads: Sequence[str] = (),
) -> SweepOutcome:
    """The stopped sweep in ``folder`` measured on with its own settings: what it is missing, then its files. Only
    what this machine chose runs (`chosen`): interpreters in ``envs_folder`` (default: `envs.envs_root`) or given
    again (``pythons``: by label), workloads of one's own given again (``workloads``)."""
    start = time.monotonic()
    log = RunLog(folder)
    if not log.incomplete:
        raise JaxmlpError(f"{log.folder} is no stopped sweep (no {layout.INCOMPLETE_FILE} in it): nothing to resume")
    plan, samples = log.read()
    if not plan.runners or not plan.probed.runners:
        raise JaxmlpError(f"{log.log}: its plan has no cells: nothing to resume")
    root = envs_folder or envs.envs_root()
    mine = dict(
        zip((r.name for r in plan.runners), chosen.runners(plan.runners, root, pythons or {}, workloads, log.log))
    )
    plan = replace(
        plan,
        runners=tuple(mine.values()),
        probed=replace(plan.probed, runners={name: mine.get(name, r) for name, r in plan.probed.runners.items()}),
    )
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
