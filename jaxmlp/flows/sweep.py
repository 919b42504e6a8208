"""A version matrix measured into a new sweep folder (``sweep run``), or a stopped one measured on (``resume``)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from jaxmlp.errors import JaxmlpError
from jaxmlp.flows.explain import explain_change
from jaxmlp.flows.measured import SweepOutcome, ended, measure_into
from jaxmlp.flows.progress import progress_bar
from jaxmlp.measure.environments import environments, envs
from jaxmlp.measure.sweep import chosen
from jaxmlp.measure.sweep.matrix import Failure, Measured, Probed, measure_cells, rounds, runners_for
from jaxmlp.measure.sweep.settings import Matrix, Measuring
from jaxmlp.results.store import layout
from jaxmlp.results.store.writing import ResultsStore, check_folder
from jaxmlp.results.sweep.files import Plan, RunLog
from jaxmlp.results.sweep.folders import flagged_changes


def measure(*, measuring: Measuring, matrix: Matrix, out: Path, strict: bool = False) -> SweepOutcome:
    """The matrix's releases measured into a new sweep folder under ``out``, its verdicts printed, then each change it
    flags explained there. ``strict``: an inconclusive comparison exits 4."""
    start = time.monotonic()
    store = ResultsStore(check_folder(out, "--out"))
    pythons = environments(matrix, matrix.versions)
    runners = runners_for(pythons, matrix, measuring)
    log = RunLog.create(store)
    print(f"Samples go into {log.folder} as they are measured")
    plans: list[Plan] = []

    def planned(probed: Probed, differs: dict[str, dict[str, str]], limit: float) -> None:
        plans.append(Plan(tuple(runners), probed, differs, matrix, limit))
        log.start(plans[0])

    def cells() -> Measured:
        return measure_cells(runners, matrix, print, progress_bar, log.record, planned)

    code, missing = measure_into(log, plans, cells, start, strict=strict)
    changes = flagged_changes(log.folder)
    for change in changes:
        explain_change(log.folder, change, matrix)
    return ended(code, missing, log.folder, changes)


def resume(
    *,
    folder: Path,
    envs_folder: Path | None = None,
    pythons: Mapping[str, str] | None = None,
    workloads: Sequence[str] = (),
) -> SweepOutcome:
    """The stopped sweep in ``folder`` measured on with its own settings, then its files; only what this machine chose
    runs (`chosen`: ``envs_folder``, ``pythons``, ``workloads``)."""
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
    if missing := [r.python for r in plan.probed.runners.values() if not Path(r.python).exists()]:
        raise JaxmlpError(f"the environment {missing[0]} this sweep ran in is gone: make it again (jaxmlp sweep env)")
    print(f"Resuming {log.folder}: {sum(not isinstance(s, Failure) for s in samples.values())} samples kept")

    def rest() -> Measured:
        with envs.jaxmlp_path() as path:
            return rounds(
                plan.probed, plan.differs, plan.matrix, plan.limit, path, print, progress_bar, log.record, samples
            )

    return ended(*measure_into(log, [plan], rest, start), log.folder)
