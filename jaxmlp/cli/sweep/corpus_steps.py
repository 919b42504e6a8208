"""Two steps of `jaxmlp sweep corpus`: a case's injected-slowdown trials, and a corpus run scored again from its
files (``--rescore``)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from pathlib import Path

from jaxmlp.errors import EXIT_FAILED
from jaxmlp.measure.environment import metadata
from jaxmlp.measure.sweep import slowdown as flow
from jaxmlp.measure.sweep.corpus import Case, read_manifest
from jaxmlp.measure.sweep.matrix import environments
from jaxmlp.measure.sweep.settings import Matrix, Measuring
from jaxmlp.measure.sweep.slowdown import SlowdownTrials
from jaxmlp.report.sweep_summaries import corpus_summary
from jaxmlp.report.text import render
from jaxmlp.results.schema.corpus import CaseScore
from jaxmlp.results.store import layout
from jaxmlp.results.store.writing import write_json_new
from jaxmlp.results.sweep.corpus import trials_said
from jaxmlp.results.sweep.corpus_rescore import recorded, rescored


@dataclass(frozen=True)
class Rescored:
    """A corpus folder scored again: the file written, each case's score, and the exit code they imply."""

    path: Path
    scores: tuple[CaseScore, ...]
    code: int


def trial_release(case: Case) -> str:
    """The release a case's slowdown trials run at: the one before the expected change (the first, for a control)."""
    expected = case.expect.release
    at = case.releases.index(expected) if expected in case.releases else 0
    return case.releases[max(at - 1, 0)]


def slowdown_trials(case: Case, measuring: Measuring, matrix: Matrix) -> SlowdownTrials:
    """A case's injected-slowdown trials: its workload at `trial_release`, unslowed and slowed, as many processes
    a group as its timeline's, each trial's line printed."""
    release = trial_release(case)
    python = environments(replace(matrix, series=case.releases), [release])[release]
    done = flow.run(release, python, measuring, matrix.processes, case.runs.slowdown_trials or 0, matrix.timeout)
    print(f"Injected slowdowns at {release}: {trials_said(done)}")
    return done


def rescore(*, folder: Path, manifest: Path) -> Rescored:
    """The corpus run in ``folder`` scored again from its files (nothing measured), with ``manifest``'s ``from``
    of each case, into ``folder/scorecard-rescored-<time>.json``; its summary printed."""
    doc = recorded(folder)
    cases = read_manifest(manifest) if manifest.is_file() else []
    now = metadata()
    again, differs = rescored(folder, doc, cases, {"commit": now.get("commit"), "timestamp": now.get("timestamp")})
    for line in differs:
        print(line, file=sys.stderr)
    path = write_json_new(folder / layout.name("scorecard-rescored", suffix=".json"), again.to_json())
    print(f"\n{render([corpus_summary(again, folder.name)])}\n")
    print(f"Wrote {path}: {folder / layout.SCORECARD_FILE} scored again from its cases' files, nothing measured")
    return Rescored(path, again.scores, EXIT_FAILED if any(s.failed for s in again.scores) else 0)
