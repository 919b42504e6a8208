"""The first release between GOOD and BAD that changed a workload (``jaxmlp sweep bisect``), then its explanation."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from jaxmlp.errors import EXIT_FAILED, Interrupted
from jaxmlp.flows.explain import explain_answer
from jaxmlp.flows.progress import progress_bar
from jaxmlp.measure import bisection
from jaxmlp.measure.environment import metadata
from jaxmlp.measure.sweep import bisect as flow
from jaxmlp.measure.sweep.matrix import Measured, Runner
from jaxmlp.measure.sweep.settings import Bisect, Detector, Matrix, Measuring
from jaxmlp.report.sweep_summaries import bisect_summary
from jaxmlp.report.text import render
from jaxmlp.results.schema.bisect import BisectDocument, recorded
from jaxmlp.results.store import layout
from jaxmlp.results.store.writing import ResultsStore, new_dir, write_json_new
from jaxmlp.results.sweep import files
from jaxmlp.stats import RESULTS_DIFFER
from jaxmlp.units import duration, ratio


@dataclass(frozen=True)
class BisectOutcome:
    """How a bisection ended: its folder (the probes' folders and `layout.BISECT_FILE`), its answer and the exit
    code it implies (`EXIT_FAILED`: the first release that fails, found instead, or a probe whose results differ)."""

    folder: Path
    result: bisection.Bisection
    code: int


def search(
    *,
    settings: Bisect,
    detector: Detector,
    measuring: Measuring,
    matrix: Matrix,
    out: Path,
    explained: Mapping[tuple[str, str], str] | None = None,
    known: tuple[Mapping[str, Sequence[float]], str] | None = None,
) -> BisectOutcome:
    """The first release between ``settings``' ends that ``detector`` flags, each probe filed into a new bisect folder
    under ``out``, then the answer explained unless ``explained`` names an explanation already made. ``known``: samples
    by release already measured with these settings, read rather than measured again."""
    start = time.monotonic()
    candidates = flow.candidates(settings)
    matrix = replace(matrix, series=tuple(candidates))  # each probe's releases on the Python chosen for them all
    target, spec = flow.bisected(measuring.workloads, settings.on)
    measuring = replace(measuring, workloads=(spec,))  # only the bisected workload is measured
    folder = _opened(settings, candidates, target, matrix.processes, out)

    probes: list[str] = []  # the probes filed, in order
    checked: dict[str, str] = {}  # the releases the search for the first that fails checked so far

    def record_probe(number: int, runners: Sequence[Runner], measured: Measured) -> None:
        files.write(ResultsStore(folder), runners, measured, final=folder / layout.probe_folder(number))
        probes.append(layout.probe_folder(number))

    read: dict[str, str] = {}  # the probes that read ``known``'s samples: where from

    def told(number: int, names: list[str]) -> None:
        read[str(number)] = f"{known[1] if known else ''}: its samples of {', '.join(names)}"
        print(f"Probe {number}: {', '.join(names)} read from {read[str(number)]}, measured together there; not again")

    try:
        result = flow.run(
            candidates,
            target,
            measuring,
            matrix,
            detector,
            record_probe,
            print,
            _said,
            progress_bar,
            checked.__setitem__,  # each release checked for the first that fails, as it is
            flow.Known(known[0], told) if known else None,
        )
    except BaseException as e:
        _left(e, folder, checked)
        raise
    line = bisection.answer_line(result)
    seconds = time.monotonic() - start
    given = recorded(settings, target, measuring, matrix, detector)
    doc = BisectDocument(metadata(), {**given, "probes_read": read} if read else given, result, line, seconds)
    return _filed(doc, folder, probes, explained, lambda: explain_answer(result, measuring, spec, matrix, folder))


def _opened(settings: Bisect, candidates: Sequence[str], target: str, processes: int, out: Path) -> Path:
    """What the bisection will measure, said; its new folder under ``out``."""
    between = candidates[1:-1]
    print(
        f"Bisecting {len(between)} release(s) between {settings.good} and {settings.bad} "
        f"({', '.join(between) or 'none'}) on the steady state of {target}: about "
        f"{bisection.expected_releases(len(between))} releases measured, {processes} processes each a probe"
    )
    folder = new_dir(ResultsStore(out).folder, layout.name(layout.BISECT))
    print(f"Probes go into {folder}")
    return folder


def _left(e: BaseException, folder: Path, checked: dict[str, str]) -> None:
    """A bisection stopped or failed: an empty folder removed; else what it keeps said (a stop's one line says it)."""
    if not any(folder.iterdir()):  # no probe finished: leave nothing behind
        folder.rmdir()
    elif isinstance(e, KeyboardInterrupt):  # its one line says what is kept
        stopped = e if isinstance(e, Interrupted) else Interrupted()
        said = ", ".join(f"{r} {'runs' if why == bisection.RUNS else 'fails'}" for r, why in checked.items())
        stopped.kept = f"the finished probes stay in {folder}" + (
            f" (checked for the failure so far: {said})" if said else ""
        )
        raise stopped from None
    else:
        print(f"The finished probes stay in {folder}", file=sys.stderr)


def _filed(
    doc: BisectDocument,
    folder: Path,
    probes: Sequence[str],
    explained: Mapping[tuple[str, str], str] | None,
    explain: Callable[[], object],
) -> BisectOutcome:
    """The bisection's file written beside its probes and said, then its answer explained unless ``explained`` names
    one; a failure, or results that differ, exits `EXIT_FAILED`, unexplained."""
    result, line = doc.bisection, doc.line
    path = write_json_new(folder / layout.BISECT_FILE, doc.to_json())
    print(f"\n{render([bisect_summary(doc, folder.name)])}\n")  # the probes' verdicts, then the answer line
    print(f"Wrote {path}, beside the probes' folders ({', '.join(probes)})")  # a probe that met a failure too
    if result.status in ("fails", RESULTS_DIFFER):  # no timing to explain: a failure, or values that differ
        sys.stdout.flush()
        print(f"jaxmlp sweep bisect: {line}; its probes are in {folder}", file=sys.stderr)
        return BisectOutcome(folder, result, EXIT_FAILED)
    already = (explained or {}).get((str(result.after), str(result.first)))
    if already:
        print(f"\nThe answer {result.after} -> {result.first} is explained already, in {already}: not again")
    else:
        explain()
    return BisectOutcome(folder, result, 0)


def _said(p: bisection.BisectProbe) -> None:
    """A probe's line: each release's median, each step's ratio and verdict, the half kept."""
    medians = ", ".join(f"{r} {duration(p.medians[r])}" for r in p.releases)
    steps = "; ".join(f"{s.from_}→{s.to} {ratio(s.comparison.ratio)} ({s.comparison.in_words()})" for s in p.steps)
    print(f"probe {p.number}: {medians}; {steps} => {p.decision}", flush=True)
