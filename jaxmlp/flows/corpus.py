"""``jaxmlp sweep corpus [MANIFEST]``: every known regression of the corpus run the way a user works, then scored."""

from __future__ import annotations

import contextlib
import shlex
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from jaxmlp import changepoints
from jaxmlp.errors import EXIT_FAILED, Interrupted, JaxmlpError
from jaxmlp.flows.bisect import BisectOutcome, search
from jaxmlp.flows.corpus_plan import plan, plan_lines
from jaxmlp.flows.corpus_steps import (
    command_line,
    disk_taken,
    explain_metric,
    explained_pairs,
    remove_empty,
    setting_said,
    shared_step,
    slowdown_trials,
    timeline_samples,
    trial_release,
)
from jaxmlp.flows.measured import SweepOutcome
from jaxmlp.flows.ranks import Pulse, announce, await_case, beating, meet, meeting_file, telling
from jaxmlp.flows.timeline import measure as measure_timeline
from jaxmlp.measure.distributed import Ranks
from jaxmlp.measure.environment import metadata
from jaxmlp.measure.environments import envs, published
from jaxmlp.measure.sweep.bisect import candidates
from jaxmlp.measure.sweep.corpus import Case, Runs, read_manifest, shared_steps
from jaxmlp.measure.sweep.settings import Bisect, Corpus, Detector, Matrix, Measuring, Timeline
from jaxmlp.measure.sweep.slowdown import SlowdownTrials
from jaxmlp.registry import version_key
from jaxmlp.report.sweep_summaries import corpus_summary
from jaxmlp.report.text import render
from jaxmlp.results.schema.corpus import CaseScore, CorpusDocument
from jaxmlp.results.store import layout
from jaxmlp.results.store.writing import ResultsStore, check_folder, new_dir, write_json_new
from jaxmlp.results.sweep.corpus import case_found, score
from jaxmlp.units import minutes, size


@dataclass(frozen=True)
class CorpusOutcome:
    """How a corpus run ended: its folder (a rank other than 0: rank 0's), each case's score (none on the other
    ranks: rank 0 scores) and the exit code they imply (`EXIT_FAILED`: a case that could not be measured)."""

    folder: Path
    scores: tuple[CaseScore, ...]
    code: int


def measure(
    *,
    settings: Corpus,
    measuring: Measuring,
    matrix: Matrix,
    out: Path,
    ranks: Ranks | None = None,
    given: Runs | None = None,
) -> CorpusOutcome:
    """Each case of ``settings``' manifest run as a user would (timeline, bisection, injected-slowdown trials) into a
    new corpus folder under ``out``, then scored and its scorecard filed. A case runs with ``given``'s settings, else
    its manifest's, else ``measuring``'s and ``matrix``'s; ``ranks`` share each case's timeline."""
    run = _Corpus(settings, measuring, matrix, out, time.monotonic(), metadata(), ranks, given or Runs())
    if ranks and ranks.rank:
        with contextlib.redirect_stdout(sys.stderr):  # rank 0 speaks: the others' lines go to stderr
            return _share(run, ranks)
    return _run(run)


def _share(run: _Corpus, ranks: Ranks) -> CorpusOutcome:
    """A rank other than 0: its share of each case's timeline, in rank 0's corpus folder."""
    cases = _cases(run)
    meeting = meeting_file(check_folder(run.out, "--out"), ranks)
    corpus = meet(meeting, ranks)
    pulse = Pulse(meeting, ranks)
    shared = shared_steps(cases)
    for i, case in enumerate(cases):
        if "timeline" in shared.get(case.name, {}):
            continue  # rank 0 reads the earlier case's timeline
        later = [corpus / c.name for c in cases[i + 1 :]] + [corpus / layout.SCORECARD_FILE]
        if not await_case(meeting_file(corpus / case.name, ranks), later, corpus, ranks, pulse):
            continue  # rank 0 did not get as far as this case's timeline
        with contextlib.suppress(JaxmlpError):  # rank 0 says what failed
            _timeline(case, run, corpus / case.name)
    return CorpusOutcome(corpus, (), 0)


def _run(run: _Corpus) -> CorpusOutcome:
    ranks, manifest = run.ranks, run.settings.manifest
    cases = _cases(run)
    store = ResultsStore(check_folder(run.out, "--out"))
    releases = sorted({v for c in cases for v in c.releases}, key=version_key)
    for version in releases:
        envs.check_release(version)
    source = run.matrix.source
    published.check_held(releases, source)  # a release the wheel folder lacks: named before any environment is made
    trials = setting_said(cases, "slowdown_trials")
    print(
        f"Corpus {manifest}: {len(cases)} case(s) ({', '.join(c.name for c in cases)}) over {len(releases)} "
        f"releases; {setting_said(cases, 'processes')} processes a release, "
        f"{setting_said(cases, 'calls')} calls a process, {trials} injected-slowdown "
        f"{'trial' if trials == '1' else 'trials'} a case; the detector's parameters are the defaults"
    )
    shared = shared_steps(cases)
    print("\n".join(plan_lines(plan(cases, shared, lambda c: _between(c, run), store.folder))))
    folder = new_dir(store.folder, layout.name(layout.CORPUS))
    meeting = meeting_file(store.folder, ranks) if ranks else None
    if ranks and meeting:
        announce(meeting, folder)
        print(f"{ranks.size} ranks share each case's timeline; rank 0 runs its bisection and scores it")
    print(f"Each case's runs go into {folder}/<case>/")
    scores: list[CaseScore] = []
    written: list[Path] = []
    try:
        with (
            telling(folder, ranks) if ranks else contextlib.nullcontext(),
            beating(meeting) if meeting else contextlib.nullcontext(),
        ):
            for i, case in enumerate(cases, 1):
                scores.append(_case(case, i, len(cases), run, folder, shared.get(case.name, {})))
        doc = _document(run, cases, scores, disk_taken(releases, run.matrix.envs, folder, source))
        written.append(write_json_new(folder / layout.SCORECARD_FILE, doc.to_json()))
        print(f"\n{render([corpus_summary(doc, folder.name)])}\n")
        disk = doc.disk
        print(
            f"Wrote {written[0]} in {minutes(doc.seconds)}; environments: {size(disk['envs_bytes'])} for these "
            f"{disk['envs']} releases ({size(disk['envs_root_bytes'])} under {disk['envs_root']}); results "
            f"{size(disk['results_bytes'])}"
        )
    except KeyboardInterrupt as e:  # the cases that ended are scored and kept
        raise _stopped(e, run, cases, folder, scores, written) from None
    finally:
        if meeting:
            meeting.unlink(missing_ok=True)
    if failed := [s for s in scores if s.failed]:
        sys.stdout.flush()
        named = "; ".join(
            f"{s.case.name} ({'; '.join([*s.failures, *([s.error] if s.error else [])])})" for s in failed
        )
        print(f"jaxmlp sweep corpus: cases that could not be measured: {named}", file=sys.stderr)
        return CorpusOutcome(folder, tuple(scores), EXIT_FAILED)
    return CorpusOutcome(folder, tuple(scores), 0)


@dataclass(frozen=True)
class _Corpus:
    """A corpus run as asked for: settings, measuring, matrix, output, start, machine, commit and ranks."""

    settings: Corpus
    measuring: Measuring
    matrix: Matrix
    out: Path
    start: float
    metadata: dict[str, Any]
    ranks: Ranks | None
    given: Runs = Runs()


def _cases(run: _Corpus) -> list[Case]:
    """The manifest's cases asked for, each with what it runs with: as given, else its own, else the command's."""
    last = Runs(run.matrix.processes, run.measuring.calls, 0)
    return [
        replace(c, runs=run.given.over(c.runs).over(last))
        for c in read_manifest(run.settings.manifest, run.settings.cases)
    ]


def _document(
    run: _Corpus, cases: list[Case], scores: list[CaseScore], disk: dict[str, object], partial: str = ""
) -> CorpusDocument:
    """The scorecard of the cases scored (``partial``: why not every case asked for; ``disk``: `disk_taken`'s, or {}
    where a stop leaves no time to walk the environments)."""
    measuring, matrix = run.measuring, run.matrix
    seconds = time.monotonic() - run.start
    settings = {
        "manifest": str(run.settings.manifest),
        "source": matrix.source.words(),
        "cases": [c.name for c in cases],
        "processes": run.given.processes,  # given to the command for every case; each case's own: its `runs`
        "detector": changepoints.parameters(),
        "dataset": measuring.dataset,
        "limit": measuring.limit,
        "epochs": measuring.epochs,
        "calls": run.given.calls,
        "slowdown_trials": run.given.slowdown_trials,
        "timeout": matrix.timeout,
    }
    meta = {**run.metadata, "partial": partial} if partial else run.metadata
    return CorpusDocument(meta, settings, tuple(scores), seconds, disk)


def _stopped(
    e: KeyboardInterrupt, run: _Corpus, cases: list[Case], folder: Path, scores: list[CaseScore], written: list[Path]
) -> Interrupted:
    """The stop, its line saying where the scorecard of the cases that ended is (marked partial where some did not
    end), the command for the rest and what the stopped case kept."""
    stopped = e if isinstance(e, Interrupted) else Interrupted()
    if written:  # stopped after the scorecard was written: it is whole
        stopped.kept = f"wrote {written[0]}"
        return stopped
    rest = cases[len(scores) :]  # the stopped case first (none: stopped as the last one ended)
    said = f"kept {len(scores)} of {len(cases)} cases"
    again = shlex.join(["jaxmlp", "sweep", "corpus", str(run.settings.manifest), "--cases", *(c.name for c in rest)])
    parts = [f"the rest: `{again}` (with the same options)"] if rest else []
    if rest and stopped.kept:  # what the stopped case's command kept, and how to go on with it
        parts.append(f"{rest[0].name}'s {stopped.kept}")
    if rest:
        remove_empty(folder / rest[0].name)
    if scores:
        partial = f"stopped by {stopped}; {said}" if rest else ""  # every case ended: the scorecard is whole
        doc = _document(run, cases, scores, {}, partial)
        try:
            parts.insert(0, f"{said} in {write_json_new(folder / layout.SCORECARD_FILE, doc.to_json())}")
        except (JaxmlpError, OSError) as error:  # the stop's line still, saying why no scorecard was kept
            parts.insert(0, f"the scorecard of the {len(scores)} case(s) that ended could not be written: {error}")
    else:
        parts.insert(0, "no case ended, so there is no scorecard")
        remove_empty(folder)
    stopped.kept = "; ".join(parts)
    return stopped


def _case(case: Case, number: int, total: int, run: _Corpus, corpus: Path, shared: dict[str, str]) -> CaseScore:
    """One case run as a user would into ``corpus/<case>/``, then scored; steps in ``shared`` read from their case."""
    start = time.monotonic()
    out = corpus / case.name
    out.mkdir()
    print(f"\n=== Case {number} of {total}: {case.name} ({case.kind}): {case.summary or case.source}")
    errors = []
    steps: list[tuple[str, dict[str, Any], Callable[[], object]]] = [
        ("timeline", _timeline_given(case), lambda: _timeline(case, run, out))
    ]
    if case.metric != "run":  # the timeline explains its steady state's changes, not this metric's
        steps.append(("explain", {}, lambda: explain_metric(case, *_case_runs(case, run), out)))
    if case.bisect is not None:  # over every release the source holds between the ends, not the case's list
        given = {"good": case.bisect[0], "bad": case.bisect[1]}
        steps.append(("bisect", given, lambda: _bisect(case, run, out, given)))
    trials: list[SlowdownTrials] = []
    if case.runs.slowdown_trials and case.metric == "run":  # the hook stretches calls, not compiles
        measuring, matrix = _case_runs(case, run)
        given = {"release": trial_release(case)}
        steps.append(("trials", given, lambda: trials.append(slowdown_trials(case, measuring, matrix, out))))
    for name, given, command in steps:
        if name in shared:
            print(shared_step(name, shared[name], out))
            continue
        print(f"$ {command_line(name, given, case)}")
        try:
            command()
        except JaxmlpError as e:
            print(f"jaxmlp sweep {name}: {e}", file=sys.stderr)
            errors.append(f"{name}: {e}")
    folders = sorted(str(p.relative_to(corpus)) for p in out.iterdir() if p.is_dir())
    expected = case.expect.direction == "fails"
    found = case_found(out, "" if expected else "; ".join(errors), trials[0] if trials else None)
    return score(case, found, folders, time.monotonic() - start)


def _timeline(case: Case, run: _Corpus, out: Path) -> SweepOutcome:
    """A case's ``sweep timeline`` over its releases, as every rank runs it: the case's workload and XLA flag."""
    given = _timeline_given(case)
    settings = Timeline(given["first"], given["last"], tuple(given["versions"]), wheels=run.matrix.source.wheels)
    flags = (case.expect.flag,) if case.expect.flag else ()
    measuring, matrix = _case_runs(case, run)
    matrix = replace(matrix, xla_flags=flags)
    return measure_timeline(timeline=settings, measuring=measuring, matrix=matrix, out=out, ranks=run.ranks)


def _bisect(case: Case, run: _Corpus, out: Path, given: dict[str, Any]) -> BisectOutcome:
    """A case's ``sweep bisect`` over its range, searching every release the source holds between its ends (None:
    `published.listing`'s): the case's workload, calls and processes, the detector's defaults, no XLA flag."""
    settings = Bisect(given["good"], given["bad"], None, wheels=run.matrix.source.wheels)
    measuring, matrix = _case_runs(case, run)
    explained = explained_pairs(out)  # the timeline's: its answer's pair not explained twice
    known = timeline_samples(case, out)  # a probe of the timeline's releases reads them
    return search(
        settings=settings,
        detector=Detector(),
        measuring=measuring,
        matrix=matrix,
        out=out,
        explained=explained,
        known=known,
    )


def _between(case: Case, run: _Corpus) -> list[str] | None:
    """The releases a case's bisection searches between its ends (None: none, or not listable now)."""
    if case.bisect is None:
        return None
    try:
        return candidates(Bisect(case.bisect[0], case.bisect[1], None, wheels=run.matrix.source.wheels))[1:-1]
    except JaxmlpError:  # the source's listing cannot be had now: its bisection says why when it runs
        return None


def _case_runs(case: Case, run: _Corpus) -> tuple[Measuring, Matrix]:
    """What each process of a case measures (workload, calls) and how its releases are measured."""
    calls, processes = case.runs.calls or run.measuring.calls, case.runs.processes or run.matrix.processes
    compiles = max(case.compiles, run.measuring.compiles)
    measuring = replace(run.measuring, workloads=(case.workload,), calls=calls, compiles=compiles)
    return measuring, replace(run.matrix, processes=processes)


def _timeline_given(case: Case) -> dict[str, Any]:
    return {"first": case.releases[0], "last": case.releases[-1], "versions": list(case.releases)}
