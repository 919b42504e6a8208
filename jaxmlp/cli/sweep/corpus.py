"""``jaxmlp sweep corpus [MANIFEST]``: every known regression of the corpus run the way a user works (the timeline
over its releases, the bisection where a range is given, the explanation of what was found), then scored."""

from __future__ import annotations

import argparse
import contextlib
import shlex
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jaxmlp import changepoints, registry
from jaxmlp.cli import options
from jaxmlp.cli.sweep.bisect import run as run_bisect
from jaxmlp.cli.sweep.common import SWEEP_BACKEND, source_of
from jaxmlp.cli.sweep.timeline import run as run_timeline
from jaxmlp.errors import EXIT_FAILED, Interrupted, JaxmlpError
from jaxmlp.measure.environment import metadata
from jaxmlp.measure.sweep import envs, published
from jaxmlp.measure.sweep.corpus import Case, read_manifest
from jaxmlp.registry import version_key
from jaxmlp.report.release_summaries import corpus_summary
from jaxmlp.report.text import render
from jaxmlp.results.releases.corpus import findings_of, score
from jaxmlp.results.releases.ranks import Pulse, Ranks, announce, await_case, beating, meet, meeting_file, telling
from jaxmlp.results.schema.corpus import CaseScore, CorpusDocument
from jaxmlp.results.store import layout
from jaxmlp.results.store.writing import ResultsStore, check_folder, new_dir, write_json_new
from jaxmlp.units import minutes, size

MANIFEST = Path("bench") / "corpus" / "corpus.toml"

HELP = "run the corpus of known regressions as a user would, and score what was found"
DESCRIPTION = (
    "For each case of a corpus manifest (bench/corpus/corpus.toml): the release timeline over its releases, "
    "the bisection of its range where it gives one, the explanation of each change found; then a scorecard: found "
    "(the right release, the right direction), the ratio within its band, explained, controls clean, a release that "
    "failed or hung named. Writes RESULTS/corpus-<time>/ (scorecard.json and a folder a case). Stopped (Ctrl-C, "
    "SIGTERM), the scorecard of the cases that ended is written, marked partial."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "manifest", nargs="?", default=str(MANIFEST), metavar="MANIFEST", help="the corpus (default: %(default)s)"
    )
    parser.add_argument("--cases", metavar="NAME", **options.LIST, help="only these cases (default: every one)")
    options.add(parser, *options.DATA, *options.TIMING, options.PIN_CPU, options.PRECISION, SWEEP_BACKEND)
    options.add(
        parser,
        options.PROCESSES,
        options.TOLERANCE,
        options.ENVS,
        options.WHEELS,
        options.TIMEOUT,
        options.OUT,
        options.PYTHON,
    )


def run(args: argparse.Namespace) -> int:
    """Every case as a user would run it, then the scorecard; under mpirun or srun the ranks share each case's
    timeline (`jaxmlp.cli.sweep.timeline`) and rank 0 runs the rest and scores them."""
    ranks = Ranks.found()
    if ranks and ranks.rank:
        with contextlib.redirect_stdout(sys.stderr):  # rank 0 speaks: the others' lines go to stderr
            return _share(args, ranks)
    return _run(args, ranks)


def _share(args: argparse.Namespace, ranks: Ranks) -> int:
    """A rank other than 0: its share of each case's timeline, in rank 0's corpus folder."""
    cases = read_manifest(Path(args.manifest), tuple(args.cases or ()))
    meeting = meeting_file(check_folder(args.out, "--out"), ranks)
    corpus = meet(meeting, ranks)
    pulse = Pulse(meeting, ranks)
    for i, case in enumerate(cases):
        later = [corpus / c.name for c in cases[i + 1 :]] + [corpus / layout.SCORECARD_FILE]
        if not await_case(meeting_file(corpus / case.name, ranks), later, corpus, ranks, pulse):
            continue  # rank 0 did not get as far as this case's timeline
        with contextlib.suppress(JaxmlpError):  # rank 0 says what failed
            run_timeline(_timeline_args(case, args, corpus / case.name))
    return 0


def _run(args: argparse.Namespace, ranks: Ranks | None) -> int:
    start = time.monotonic()
    manifest = Path(args.manifest)
    cases = read_manifest(manifest, tuple(args.cases or ()))
    store = ResultsStore(check_folder(args.out, "--out"))
    releases = sorted({v for c in cases for v in c.releases}, key=version_key)
    for version in releases:
        envs.check_release(version)
    source = source_of(args)
    published.check_held(releases, source)  # a release the wheel folder lacks: named before any environment is made
    print(
        f"Corpus {manifest}: {len(cases)} case(s) ({', '.join(c.name for c in cases)}) over {len(releases)} "
        f"releases; {args.processes} processes a release; the detector's parameters are the defaults"
    )
    folder = new_dir(store.folder, layout.name(layout.CORPUS))
    meeting = meeting_file(store.folder, ranks) if ranks else None
    if ranks and meeting:
        announce(meeting, folder)
        print(f"{ranks.size} ranks share each case's timeline; rank 0 runs its bisection and scores it")
    print(f"Each case's runs go into {folder}/<case>/")
    corpus = _Corpus(cases, args, folder, start, releases, source)
    scores: list[CaseScore] = []
    written: list[Path] = []
    try:
        with (
            telling(folder, ranks) if ranks else contextlib.nullcontext(),
            beating(meeting) if meeting else contextlib.nullcontext(),
        ):
            for i, case in enumerate(cases, 1):
                scores.append(_case(case, i, len(cases), args, folder))
        doc = _document(corpus, scores, _disk(releases, args.envs, folder, source))
        written.append(write_json_new(folder / layout.SCORECARD_FILE, doc.to_json()))
        print(f"\n{render([corpus_summary(doc, folder.name)])}\n")
        disk = doc.disk
        print(
            f"Wrote {written[0]} in {minutes(doc.seconds)}; environments: {size(disk['envs_bytes'])} for these "
            f"{disk['envs']} releases ({size(disk['envs_root_bytes'])} under {disk['envs_root']}); results "
            f"{size(disk['results_bytes'])}"
        )
    except KeyboardInterrupt as e:  # the cases that ended are scored and kept
        raise _stopped(e, corpus, scores, written) from None
    finally:
        if meeting:
            meeting.unlink(missing_ok=True)
    failed = [s for s in scores if s.failed]
    if failed:
        sys.stdout.flush()
        named = "; ".join(
            f"{s.case.name} ({'; '.join([*s.failures, *([s.error] if s.error else [])])})" for s in failed
        )
        print(f"jaxmlp sweep corpus: cases that could not be measured: {named}", file=sys.stderr)
        return EXIT_FAILED
    return 0


@dataclass(frozen=True)
class _Corpus:
    """A corpus run: the cases asked for, the command's options, its folder, when it started, the releases and
    where their environments come from."""

    cases: list[Case]
    args: argparse.Namespace
    folder: Path
    start: float
    releases: list[str]
    source: envs.Source


def _document(corpus: _Corpus, scores: list[CaseScore], disk: dict[str, object], partial: str = "") -> CorpusDocument:
    """The scorecard of the cases scored (``partial``: why not every case asked for; ``disk``: `_disk`'s, or {}
    where a stop leaves no time to walk the environments)."""
    args, source = corpus.args, corpus.source
    seconds = time.monotonic() - corpus.start
    settings = {
        "manifest": str(Path(args.manifest)),
        "source": source.words(),
        "cases": [c.name for c in corpus.cases],
        "processes": args.processes,
        "detector": changepoints.parameters(),
        "dataset": args.dataset,
        "limit": args.limit,
        "epochs": args.epochs,
        "calls": args.calls,
        "timeout": args.timeout,
    }
    meta = {**metadata(), "partial": partial} if partial else metadata()
    return CorpusDocument(meta, settings, tuple(scores), seconds, disk)


def _stopped(e: KeyboardInterrupt, corpus: _Corpus, scores: list[CaseScore], written: list[Path]) -> Interrupted:
    """The stop, its line saying where the scorecard of the cases that ended is (marked partial where some did not
    end), the command for the rest and what the stopped case kept."""
    stopped = e if isinstance(e, Interrupted) else Interrupted()
    cases, folder = corpus.cases, corpus.folder
    if written:  # stopped after the scorecard was written: it is whole
        stopped.kept = f"wrote {written[0]}"
        return stopped
    rest = cases[len(scores) :]  # the stopped case first (none: stopped as the last one ended)
    said = f"kept {len(scores)} of {len(cases)} cases"
    again = shlex.join(["jaxmlp", "sweep", "corpus", corpus.args.manifest, "--cases", *(c.name for c in rest)])
    parts = [f"the rest: `{again}` (with the same options)"] if rest else []
    if rest and stopped.kept:  # what the stopped case's command kept, and how to go on with it
        parts.append(f"{rest[0].name}'s {stopped.kept}")
    if rest:
        _remove_empty(folder / rest[0].name)
    if scores:
        partial = f"stopped by {stopped}; {said}" if rest else ""  # every case ended: the scorecard is whole
        doc = _document(corpus, scores, {}, partial)
        try:
            parts.insert(0, f"{said} in {write_json_new(folder / layout.SCORECARD_FILE, doc.to_json())}")
        except (JaxmlpError, OSError) as error:  # the stop's line still, saying why no scorecard was kept
            parts.insert(0, f"the scorecard of the {len(scores)} case(s) that ended could not be written: {error}")
    else:
        parts.insert(0, "no case ended, so there is no scorecard")
        _remove_empty(folder)
    stopped.kept = "; ".join(parts)
    return stopped


def _remove_empty(folder: Path) -> None:
    """``folder`` removed where it holds nothing (a case stopped before its first command wrote anything)."""
    with contextlib.suppress(OSError):
        folder.rmdir()


def _case(case: Case, number: int, total: int, args: argparse.Namespace, corpus: Path) -> CaseScore:
    """One case run through the commands a user would run, into ``corpus/<case>/``, then scored."""
    start = time.monotonic()
    out = corpus / case.name
    out.mkdir()
    print(f"\n=== Case {number} of {total}: {case.name} ({case.kind}): {case.summary or case.source}")
    errors = []
    steps: list[tuple[str, Callable[[argparse.Namespace], int], dict[str, Any], argparse.Namespace]] = [
        ("timeline", run_timeline, _timeline_given(case), _timeline_args(case, args, out))
    ]
    if case.bisect is not None:
        good, bad = case.bisect
        lo, hi = sorted(case.bisect, key=version_key)
        between = [v for v in case.releases if version_key(lo) <= version_key(v) <= version_key(hi)]
        given = {"good": good, "bad": bad, "versions": between}
        rest = {"on": None, "threshold": registry.THRESHOLD, "alpha": registry.ALPHA, "xla_flags": None}
        steps.append(("bisect", run_bisect, given, argparse.Namespace(**{**_common(case, args, out), **given, **rest})))
    for name, command, given, namespace in steps:
        print(f"$ {_command(name, given, case)}")
        try:
            command(namespace)
        except JaxmlpError as e:
            print(f"jaxmlp sweep {name}: {e}", file=sys.stderr)
            errors.append(f"{name}: {e}")
    folders = sorted(str(p.relative_to(corpus)) for p in out.iterdir() if p.is_dir())
    expected = case.expect.direction == "fails"
    found = findings_of(out, "" if expected else "; ".join(errors))
    return score(case, found, folders, time.monotonic() - start)


def _common(case: Case, args: argparse.Namespace, out: Path) -> dict[str, Any]:
    """The arguments every command of a case shares: the corpus's, with the case's workload, folder and flag."""
    flags = [case.expect.flag] if case.expect.flag else None
    return {**vars(args), "workload": [case.workload], "out": str(out), "env": None, "xla_flags": flags}


def _timeline_given(case: Case) -> dict[str, Any]:
    return {"first": case.releases[0], "last": case.releases[-1], "versions": list(case.releases)}


def _timeline_args(case: Case, args: argparse.Namespace, out: Path) -> argparse.Namespace:
    """A case's ``sweep timeline`` as every rank runs it."""
    return argparse.Namespace(
        **{**_common(case, args, out), **_timeline_given(case), "every": "patch", "budget": None, "strict": False}
    )


def _command(name: str, given: dict[str, Any], case: Case) -> str:
    """The command a user would type for this step of the case."""
    ends = [given["first"], given["last"]] if name == "timeline" else [given["good"], given["bad"]]
    words = ["jaxmlp", "sweep", name, *map(str, ends), "--versions", *map(str, given["versions"])]
    words += ["--workload", case.workload]
    if name == "timeline" and case.expect.flag:
        words += ["--xla-flags", case.expect.flag]
    return shlex.join(words)


def _disk(releases: list[str], root: Path | None, folder: Path, source: envs.Source) -> dict[str, object]:
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
        "envs_bytes": sum(envs.env_bytes(e) for e in made),
        "envs_root": str(where),
        "envs_root_bytes": sum(envs.env_bytes(e) for e in everything),
        "results_bytes": envs.env_bytes(folder),
    }
