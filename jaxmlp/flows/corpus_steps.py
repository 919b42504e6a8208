"""Steps of `jaxmlp sweep corpus`: injected-slowdown trials, a step shared with an earlier case, a rescore."""

from __future__ import annotations

import contextlib
import shlex
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from jaxmlp.errors import EXIT_FAILED
from jaxmlp.flows.explain import explained
from jaxmlp.measure.environment import metadata
from jaxmlp.measure.environments import disk as env_disk
from jaxmlp.measure.environments import environments, envs
from jaxmlp.measure.sweep import slowdown as flow
from jaxmlp.measure.sweep.corpus import Case, read_manifest
from jaxmlp.measure.sweep.settings import Matrix, Measuring
from jaxmlp.measure.sweep.slowdown import FACTORS, SlowdownTrials
from jaxmlp.measure.workload_names import workload_name
from jaxmlp.report.sweep_summaries import corpus_summary
from jaxmlp.report.text import render
from jaxmlp.results.schema.corpus import CaseScore
from jaxmlp.results.schema.explain import ExplainDocument
from jaxmlp.results.store import layout
from jaxmlp.results.store.reading import read_document
from jaxmlp.results.store.writing import write_json_new
from jaxmlp.results.sweep.corpus import METRIC_WORDS, case_found, metric_changes, trials_said
from jaxmlp.results.sweep.corpus_rescore import recorded, rescored
from jaxmlp.units import ratio


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


def slowdown_trials(case: Case, measuring: Measuring, matrix: Matrix, folder: Path | None = None) -> SlowdownTrials:
    """A case's injected-slowdown trials at `trial_release`, unslowed and slowed in rotating order, each printed."""
    release = trial_release(case)
    python = environments(replace(matrix, series=case.releases), [release])[release]
    trials = case.runs.slowdown_trials or 0
    done = flow.run(release, python, measuring, matrix.processes, trials, matrix.timeout)
    print(f"Injected slowdowns at {release}: {trials_said(done)}")
    return done


def timeline_samples(case: Case, folder: Path) -> tuple[dict[str, tuple[float, ...]], str] | None:
    """The steady states ``case``'s timeline (in its ``folder``) measured of its workload without XLA flags, by
    release (those with two or more), and its folder's name; None where it filed none."""
    name = workload_name(case.workload)
    column = next((c for c in case_found(folder).columns if c.workload == name and not c.xla_flags), None)
    timelines = sorted(p.name for p in folder.glob(f"{layout.TIMELINE}-*") if p.is_dir())
    if column is None or not timelines:
        return None
    samples = {r: tuple(s) for r, s in zip(column.releases, column.samples) if len(s) >= 2}
    return samples, timelines[-1]


def shared_step(step: str, measured_by: str, out: Path) -> str:
    """A ``step`` shared with the earlier case ``measured_by``, linked into ``out``; the line saying so or why not."""
    earlier = sorted(p for p in (out.parent / measured_by).glob(f"{step}-*") if p.is_dir())
    if not earlier:
        return f"# the {step} of {measured_by} (the same workload, releases and settings) filed no folder to read"
    link = out / earlier[-1].name
    link.symlink_to(Path("..") / measured_by / earlier[-1].name, target_is_directory=True)
    return (
        f"# the {step} of {measured_by}, the same workload, releases and settings: read from "
        f"{measured_by}/{earlier[-1].name} (linked as {out.name}/{link.name}), not measured again"
    )


def explain_metric(case: Case, measuring: Measuring, matrix: Matrix, folder: Path) -> None:
    """Each change a compile-time or memory case's timeline left unexplained, explained into ``folder``, printed."""
    done = explained_pairs(folder)
    timelines = sorted(folder.glob(f"{layout.TIMELINE}-*"))
    for before, at in metric_changes(case, case_found(folder)):
        if (before, at) in done or not timelines:
            continue
        heading = f"Explaining {workload_name(case.workload)}'s {METRIC_WORDS[case.metric]}: {before} -> {at}"
        explained(heading, measuring, before, at, case.workload, timelines[-1], matrix)


def explained_pairs(folder: Path) -> dict[tuple[str, str], str]:
    """The release pairs a case's timeline explained without XLA flags, each with its explanation's folder."""
    found: dict[tuple[str, str], str] = {}
    for path in sorted(folder.glob(f"{layout.TIMELINE}-*/{layout.EXPLAIN}-*/{layout.EXPLAIN_FILE}")):
        doc = read_document(path)
        if isinstance(doc, ExplainDocument) and not doc.settings.get("xla_flags"):
            found[(doc.a, doc.b)] = str(path.parent.relative_to(folder))
    return found


def rescore(*, folder: Path, manifest: Path) -> Rescored:
    """The corpus run in ``folder`` scored again from its files into ``scorecard-rescored-<time>.json``, printed."""
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


def disk_taken(releases: list[str], root: Path | None, folder: Path, source: envs.Source) -> dict[str, object]:
    """The disk the corpus's environments take, all environments under their root take, and its results take."""
    where = root or envs.envs_root()
    made = [
        m.parent
        for v in releases
        for m in where.glob(f"jax-{v}-py*/{envs.COMPLETE}")
        if envs.release_of(m.parent.name, source) == v
    ]
    everything = [m.parent for m in where.glob(f"jax-*/{envs.COMPLETE}")] if where.is_dir() else []
    return {
        "envs": len(made),
        "envs_bytes": sum(env_disk.env_bytes(e) for e in made),
        "envs_root": str(where),
        "envs_root_bytes": sum(env_disk.env_bytes(e) for e in everything),
        "results_bytes": env_disk.env_bytes(folder),
    }


def command_line(name: str, given: dict[str, Any], case: Case) -> str:
    """The command a user would type for this step of the case (its trials: what they run, in words)."""
    runs = ["--processes", str(case.runs.processes), "--calls", str(case.runs.calls)]
    if name == "trials":
        return (
            f"# injected-slowdown trials: {case.runs.slowdown_trials} x ({case.runs.processes} processes "
            f"{', '.join(ratio(f) for f in FACTORS)}) of {case.workload} at {given['release']}, beside as many "
            "unslowed, one of each a round in rotating order"
        )
    if name == "explain":
        return (
            f"# each change the timeline found in {METRIC_WORDS[case.metric]} that its explanations (of the steady "
            "state's changes) leave unexplained: `jaxmlp sweep explain BEFORE AT`"
        )
    if name == "timeline":
        words = ["jaxmlp", "sweep", name, given["first"], given["last"], "--versions", *map(str, given["versions"])]
    else:
        words = ["jaxmlp", "sweep", name, given["good"], given["bad"]]
    words += ["--workload", case.workload, *runs]
    if name == "timeline" and case.expect.flag:
        words += ["--xla-flags", case.expect.flag]
    return shlex.join(words)


def setting_said(cases: list[Case], key: str) -> str:
    """What the cases run with, one setting: a number, or its range where cases set their own."""
    values = sorted({int(getattr(c.runs, key) or 0) for c in cases})
    return str(values[0]) if len(values) == 1 else f"{values[0]}-{values[-1]}"


def remove_empty(folder: Path) -> None:
    """``folder`` removed where it holds nothing (a case stopped before its first command wrote anything)."""
    with contextlib.suppress(OSError):
        folder.rmdir()
