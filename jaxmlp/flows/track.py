"""One call of ``jaxmlp track``: the new releases measured against the last one tracked and the pinned one until settled
or the budget ends; its folder, the site, the message and the gate's exit code. A stopped call gone on with (``jaxmlp
sweep resume FOLDER``): its ``call.json`` read, what runs or writes elsewhere taken from this command line
(docs/reference/trust.md), the call run again where it ran."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from jaxmlp import errors, registry, units
from jaxmlp.errors import JaxmlpError, gate
from jaxmlp.measure import environment, environments
from jaxmlp.measure.environments import envs, published
from jaxmlp.measure.sweep import track as flow
from jaxmlp.measure.sweep.settings import Matrix, Measuring, is_builtin
from jaxmlp.measure.sweep.track import Step, Track
from jaxmlp.measure.workload_names import workload_name
from jaxmlp.report.track_message import write_message
from jaxmlp.report.track_site import site_link_base, write_site
from jaxmlp.results.schema import machines
from jaxmlp.results.schema.track import TrackDocument, Tracked
from jaxmlp.results.store import confined, layout
from jaxmlp.results.store.writing import check_folder, new_dir, write_json_new
from jaxmlp.results.sweep import track_plan, tracked
from jaxmlp.results.sweep.settling import Settle

Say = Callable[[str], None]


@dataclass(frozen=True)
class TrackOutcome:
    """What one call did: its step (what it started, what was new), the folder it wrote (None: nothing new), every
    comparison, the cells it could not measure (and why), its closing lines and its exit code."""

    step: Step
    folder: Path | None
    comparisons: tuple[Tracked, ...]
    unmeasured: Mapping[str, str]
    lines: tuple[str, ...]
    code: int


def track(
    *,
    settings: Track,
    measuring: Measuring,
    matrix: Matrix,
    out: Path,
    site: Path | None = None,
    message: Path | None = None,
    site_url: str = "",
    say: Say = print,
    call: Mapping[str, object] | None = None,
) -> TrackOutcome:
    """One call of `jaxmlp track`: its folder under ``out`` (``track-<time>-<machine>-<pid>``, with ``call`` in
    ``call.json``), then the site and the message. A dry run writes nothing."""
    began = time.monotonic()
    _check_outputs(site, message, site_url, out)
    if not settings.dry_run:  # a dry run writes nothing, not even ``out``
        check_folder(out, "--out")  # made where missing, before anything else
    series = _series(out, measuring, say)
    step = flow.step(published.available(matrix.source.wheels), series.last, settings.pinned, series.start)
    source = matrix.source.words()
    say(flow.said(step, source, series.label))
    if settings.dry_run:
        asked = replace(matrix, versions=step.cells, series=step.cells)
        planned, seconds = environments.planned(asked, step.cells, say)  # none made: looked up as the call would
        earlier = track_plan.seconds_a_call(series.documents, series.machine, series.workloads)
        plan = track_plan.plan_lines(planned, series.workloads, matrix.processes, settings.budget, seconds, earlier)
        for line in plan:
            say(line)
        return TrackOutcome(step, None, (), {}, (), 0)
    if not step.new and not step.start:
        _publish(series.folder, None, site, message, say, site_url)
        return TrackOutcome(step, None, (), {}, (), 0)
    folder = _call_folder(series, step.cells, measuring, matrix, call)
    settle = Settle(step.pairs, tuple(measuring.names), settings.budget, settings.threshold)
    pythons, comparisons, unmeasured = _measured(folder, step, measuring, matrix, settle, began, say)
    document = TrackDocument(
        series.fields,
        tracked.series_of(series.machine, series.workloads),
        _settings(settings, measuring, matrix, pythons, site),
        step.start,
        step.last,
        step.pinned,
        step.cells,
        _tracked(step, unmeasured),
        tuple(comparisons),
        dict(unmeasured),
        time.monotonic() - began,
    )
    write_json_new(folder / layout.TRACK_FILE, document.to_json())
    _publish(series.folder, folder, site, message, say, site_url, flow.started(step, source, series.label))
    lines = tuple(tracked.closing_lines(comparisons, step.pinned, settings.threshold))
    code = gate([c.verdict for c in comparisons], len(unmeasured), settings.strict)
    return TrackOutcome(step, folder, tuple(comparisons), unmeasured, lines, code)


@dataclass(frozen=True)
class _Series:
    """The series a call belongs to: folder, history, machine, workloads, last release and start (None: no history)."""

    folder: Path
    documents: tuple[TrackDocument, ...]
    fields: Mapping[str, object]
    machine: str
    workloads: tuple[str, ...]
    last: str | None
    start: str | None

    @property
    def label(self) -> str:
        return f"{self.machine} ({', '.join(self.workloads)})"


def _series(folder: Path, measuring: Measuring, say: Say) -> _Series:
    """This machine's series of ``measuring``'s workloads from the calls under ``folder`` (unreadable ones said)."""
    fields = {**environment.metadata(), "machine_backend": measuring.backend or "cpu", "machine_device": None}
    machine, workloads = machines.machine(fields), tuple(measuring.names)
    documents, skipped = tracked.history(folder)
    for s in skipped:
        say(s.line("jaxmlp track"))
    docs = tuple(d for _, d in documents)
    last, start = tracked.last_tracked(docs, machine, workloads), tracked.series_start(docs, machine, workloads)
    return _Series(folder, docs, fields, machine, workloads, last, start)


def _call_folder(
    series: _Series, cells: tuple[str, ...], measuring: Measuring, matrix: Matrix, call: Mapping[str, object] | None
) -> Path:
    """The call's folder: a stopped call's of the same ``cells`` (its samples kept: none measured twice), else a
    new one, with ``call`` (what `sweep resume` runs again) where it measures something."""
    name = tracked.folder_name(series.fields, os.getpid())
    envs_root = matrix.envs or envs.envs_root()  # the interpreters a stopped call may run: this machine's only
    stopped = track_plan.stopped_call(series.folder, name, cells, measuring.workloads, envs_root) if cells else None
    folder = stopped or new_dir(series.folder, name)
    if call is not None and stopped is None and cells:
        write_json_new(folder / layout.TRACK_CALL, dict(call))
    return folder


def _check_outputs(site: Path | None, message: Path | None, site_url: str, out: Path) -> None:
    """``--site``, ``--message`` and ``--out`` checked writable, and of the right kind, before anything is measured."""
    errors.file_not_folder("--out", out, "choose a folder")
    if site_url and not site_url.startswith(("https://", "http://")):
        raise JaxmlpError(f"--site-url {site_url}: give the address the site is published at (https://...)")
    for option, path, folder in (("--site", site, True), ("--message", message, False)):
        if path is None:
            continue
        if not path.resolve().parent.is_dir():
            raise JaxmlpError(f"{option} {path}: its folder {path.resolve().parent} does not exist: create it first")
        if path.exists() and path.is_dir() != folder:
            raise JaxmlpError(
                f"{option} {path} is a {'file' if folder else 'folder'}: give the "
                f"{'folder the site goes into' if folder else 'file the message goes into'}"
            )


def _tracked(step: Step, unmeasured: Mapping[str, str]) -> tuple[str, ...]:
    """The releases a call now tracks: the series' start and each new one it measured."""
    return tuple(v for v in ((step.last,) if step.start else ()) + step.new if v not in unmeasured)


def _measured(
    folder: Path, step: Step, measuring: Measuring, matrix: Matrix, settle: Settle, began: float, say: Say
) -> tuple[dict[str, str], list[Tracked], dict[str, str]]:
    """The step's releases measured side by side into ``folder`` and settled (importing `track_measure`, which imports
    JAX); a folder left with nothing measured is removed."""
    if not step.new:
        return {}, [], {}
    from jaxmlp.flows import track_measure

    cells = replace(matrix, versions=step.cells, series=step.cells)
    try:
        measured, comparisons, lost = track_measure.measure(folder, cells, measuring, settle, began, say)
    except BaseException:
        if folder.is_dir() and {p.name for p in folder.iterdir()} <= {layout.TRACK_CALL}:  # nothing measured
            shutil.rmtree(folder)  # no trace (a sweep that measured no cell has removed its own folder already)
        raise
    return track_measure.pythons_of(measured), comparisons, lost


def _settings(
    settings: Track, measuring: Measuring, matrix: Matrix, pythons: Mapping[str, str], site: Path | None
) -> dict[str, object]:
    return {
        "pinned": settings.pinned,
        "source": matrix.source.words(),
        "budget_minutes": settings.budget,
        "strict": settings.strict,
        "processes": matrix.processes,
        "measuring": measuring.to_json() | {"workloads": list(measuring.workload_source.split(","))},
        "threshold": settings.threshold,
        "alpha": registry.ALPHA,
        "pythons": dict(pythons),
        "site": str(site) if site is not None else "",
    }


def _publish(
    folder: Path,
    mine: Path | None,
    site: Path | None,
    message: Path | None,
    say: Say,
    site_url: str = "",
    started: str = "",
) -> None:
    """Write the site of every series under ``folder`` and the message of what this call changed (``mine``; ``started``:
    the series' start); a call with nothing new leaves the last message as it was, and says so."""
    if site is None and message is None:
        return
    frame = tracked.tracked_frame(folder)
    if site is not None:
        write_site(frame, site, results=folder)
        say(f"Wrote the site of {units.count(len(frame), 'comparison')} into {site}")
    if message is None:
        return
    if mine is None:
        say(f"Nothing new: {message} is left as the last call wrote it")
        return
    base = site_link_base(message.resolve().parent, folder)
    ours = [layout.shown(mine, folder)]
    write_message(frame, message, folders=ours, link_base=base, site_url=site_url, started=started)
    say(f"Wrote what changed into {message}")


@dataclass(frozen=True)
class RecordedCall:
    """A stopped call as its folder's ``call.json`` recorded it: its arguments as given and where it ran."""

    folder: Path
    argv: tuple[str, ...]
    cwd: str

    @property
    def file(self) -> Path:
        return self.folder / layout.TRACK_CALL


def recorded_call(folder: Path) -> RecordedCall:
    """The stopped call in ``folder``; a `JaxmlpError` where it is none or its ``call.json`` cannot be read (a regular
    file only: never a FIFO)."""
    if not (folder / layout.INCOMPLETE_FILE).is_file() or (folder / layout.TRACK_FILE).exists():
        raise JaxmlpError(
            f"{folder} is no stopped `jaxmlp track` call (no {layout.INCOMPLETE_FILE}): nothing to resume"
        )
    try:
        call = json.loads(confined.read_text(folder / layout.TRACK_CALL))
        return RecordedCall(folder, tuple(str(a) for a in call["argv"]), str(call["cwd"]))
    except (OSError, ValueError, KeyError, TypeError, confined.Refused) as e:
        raise JaxmlpError(
            f"{folder}: its {layout.TRACK_CALL} cannot be read ({type(e).__name__}): run the call's `jaxmlp track` "
            "again, with its options, which goes on from this folder"
        ) from None


def chosen_workloads(
    call: RecordedCall, recorded: Sequence[str], given: Sequence[str], pythons: Sequence[str]
) -> list[str]:
    """The ``recorded`` workloads, each of one's own as ``given`` again on this command line; a `JaxmlpError` where
    one is not, or where the call names interpreters (``pythons``): a resumed call runs no code a file names."""
    by_name = {workload_name(spec): spec for spec in given}
    for spec in recorded:
        if not is_builtin(spec) and workload_name(spec) not in by_name:
            raise JaxmlpError(
                f"{call.file} names the workload {spec!r}: a resumed call runs only code given on its command line; "
                "give it again (--workload PATH.py:make)"
            )
    if pythons:
        raise JaxmlpError(
            f"{call.file} names interpreters to make environments with (--python): a resumed call runs none a file "
            "names; run `jaxmlp track` again with its options, which goes on from this folder"
        )
    return [by_name.get(workload_name(spec), spec) for spec in recorded]


def go_on(call: RecordedCall, *, out: str, wheels: str | None, run: Callable[[], int]) -> int:
    """``run`` (the call, its settings chosen) in the folder the call ran in, where its ``out`` still holds its
    folder and its ``wheels`` lie outside it; its exit code (the gate's)."""
    if not Path(call.cwd).is_dir():
        raise JaxmlpError(
            f"{call.folder}: the folder its call ran in, {call.cwd}, is gone: run `jaxmlp track` again there"
        )
    with contextlib.chdir(call.cwd):
        if Path(out).resolve() != call.folder.resolve().parent:
            raise JaxmlpError(f"{call.folder} is no longer under the call's --out {out}: run `jaxmlp track` there")
        if wheels is not None and Path(wheels).resolve().is_relative_to(call.folder.resolve().parent):
            raise JaxmlpError(
                f"{call.file} names wheels inside the results folder (--wheels {wheels}): a resumed call installs none "
                "the folder holds; run `jaxmlp track` again with its options"
            )
        print(f"Going on with the stopped call: jaxmlp {' '.join(call.argv)} (in {call.cwd})")
        return run()
