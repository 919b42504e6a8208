"""A timeline or corpus shared by the ranks of one ``mpirun`` or ``srun``: rank 0's part (`lead`) and the others'."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import math
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar

from jaxmlp.errors import Interrupted, JaxmlpError
from jaxmlp.measure.distributed import Ranks
from jaxmlp.measure.records import ProcessResult
from jaxmlp.measure.sweep.matrix import Failure, Measured, Progress, Record, Runner, Say, follow
from jaxmlp.measure.sweep.settings import Matrix
from jaxmlp.results.schema.sweep import NODE, RANK
from jaxmlp.results.store import layout
from jaxmlp.results.store.writing import write_new
from jaxmlp.results.sweep.files import Plan, RunLog

MEET_SECONDS = 600.0
"""How long a rank waits for rank 0 to name the folder and its plan (rank 0 may be making environments)."""
POLL_SECONDS = 0.2
T = TypeVar("T")
HEARTBEAT_SECONDS = 30.0
"""How often rank 0 touches its meeting file while the others may wait on it (`beating`)."""
SILENT_SECONDS = 300.0
"""How long a rank waits on a meeting file rank 0 no longer touches before it gives up (rank 0 killed)."""
SKEW_SECONDS = 120.0
"""How much earlier than this process a meeting of this launch may have started; an older one is stale."""
STARTED = time.time()
"""When this process started (imported with the command)."""


def meeting_file(out: Path, ranks: Ranks) -> Path:
    """Where rank 0 names the folder it makes in ``out`` for the others."""
    return out / f".jaxmlp-meeting-{ranks.job}"


def await_case(meeting: Path, later: list[Path], corpus: Path, ranks: Ranks, pulse: Pulse | None = None) -> bool:
    """Ranks 1 on, in a corpus: whether rank 0 starts this case's timeline, waiting while its heartbeat goes on; False
    once it has gone past it. Rank 0's stop or silence is a `JaxmlpError`."""
    while not meeting.is_file():
        if pulse:
            pulse.check()
        if any(p.exists() for p in later):
            return False
        if stopped := others_stopped(corpus, ranks):
            raise JaxmlpError(stopped)
        time.sleep(POLL_SECONDS)
    return True


def announce(meeting: Path, folder: Path) -> None:
    """Rank 0: the others' folder named in the meeting file with this launch's start, replacing a stale one."""
    if _started(meeting) < STARTED - SKEW_SECONDS:
        with contextlib.suppress(OSError):
            meeting.unlink()
    _write(meeting, json.dumps({"folder": folder.name, "started": STARTED}))


def _started(meeting: Path) -> float:
    """When the launch that wrote ``meeting`` started (-inf: none, or a file this jaxmlp cannot read)."""
    try:
        return float(json.loads(meeting.read_text(encoding="utf-8"))["started"])
    except (OSError, ValueError, KeyError, TypeError):
        return -math.inf


def _write(path: Path, text: str) -> None:
    """A coordination file written new and whole (`write_new`); an `OSError` as one line naming it."""
    _said(path, lambda: write_new(path, text))


def _said(path: Path, act: Callable[[], T]) -> T:
    """``act`` on ``path``, an `OSError` as one line naming the file."""
    try:
        return act()
    except OSError as e:
        raise JaxmlpError(f"{path}: {e.strerror or e}: --out must be a folder every rank can write") from None


def meet(meeting: Path, ranks: Ranks) -> Path:
    """Ranks 1 on: the folder rank 0 named for this launch, once it has (within `MEET_SECONDS`)."""
    deadline = time.monotonic() + MEET_SECONDS
    while _started(meeting) < STARTED - SKEW_SECONDS:  # missing, unfinished or stale
        _give_up(deadline, meeting, ranks, "name its folder")
        time.sleep(POLL_SECONDS)
    name = _said(meeting, lambda: json.loads(meeting.read_text(encoding="utf-8"))["folder"])
    return meeting.parent / str(name)


def _give_up(deadline: float, path: Path, ranks: Ranks, what: str) -> None:
    if time.monotonic() > deadline:
        raise JaxmlpError(
            f"{ranks.name}: rank 0 did not {what} within {MEET_SECONDS:.0f} s ({path} missing): "
            "start every rank with the same command and --out on a filesystem they share"
        )


def _wait_for(path: Path, ranks: Ranks, what: str) -> Path:
    """Ranks 1 on: ``path`` once rank 0 writes it (within `MEET_SECONDS`); rank 0's stop mark is a `JaxmlpError`."""
    deadline = time.monotonic() + MEET_SECONDS
    while not path.is_file() or not path.stat().st_size:
        if stopped := others_stopped(path.parent, ranks):
            raise JaxmlpError(stopped)
        _give_up(deadline, path, ranks, what)
        time.sleep(POLL_SECONDS)
    return path


@contextlib.contextmanager
def beating(meeting: Path) -> Iterator[None]:
    """Rank 0: ``meeting`` touched every `HEARTBEAT_SECONDS` while inside, so the others know it is alive."""
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(HEARTBEAT_SECONDS):
            with contextlib.suppress(OSError):
                os.utime(meeting)

    thread = threading.Thread(target=beat, name="jaxmlp-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


class Pulse:
    """Ranks 1 on: rank 0's heartbeat on ``meeting`` (`beating`) as this rank sees it change."""

    def __init__(self, meeting: Path, ranks: Ranks):
        self.meeting, self.ranks = meeting, ranks
        self.seen, self.heard = self._time(), time.monotonic()

    def _time(self) -> float:
        try:
            return self.meeting.stat().st_mtime
        except OSError:
            return -1.0

    def check(self) -> None:
        """A `JaxmlpError` once ``meeting`` has not changed for `SILENT_SECONDS` (rank 0 killed or hung)."""
        now = self._time()
        if now != self.seen:
            self.seen, self.heard = now, time.monotonic()
        elif time.monotonic() - self.heard > SILENT_SECONDS:
            raise JaxmlpError(
                f"{self.ranks.name}: rank 0 gave no sign for {SILENT_SECONDS:.0f} s ({self.meeting} untouched): it "
                "was killed or hangs; see its own output"
            )


def rank_0_plan(folder: Path, ranks: Ranks) -> Plan:
    """Ranks 1 on: the plan rank 0 filed once it probed the cells, so that all ranks measure one plan."""
    path, deadline = folder / layout.SAMPLES_FILE, time.monotonic() + MEET_SECONDS
    while True:
        _wait_for(path, ranks, "write its plan")
        with contextlib.suppress(JaxmlpError):
            return RunLog(folder).read()[0]
        if time.monotonic() > deadline:
            raise JaxmlpError(f"{ranks.name}: rank 0's plan in {path} cannot be read")
        time.sleep(POLL_SECONDS)


def samples_file(folder: Path, rank: int) -> Path:
    return folder / f"rank-{rank}.jsonl"


def _mark(folder: Path, rank: int, what: str) -> Path:
    return folder / f"rank-{rank}.{what}"


def rank_log(folder: Path, ranks: Ranks) -> RunLog:
    """Ranks 1 on: this rank's own log in rank 0's folder (samples only: rank 0's log holds the plan)."""
    path = samples_file(folder, ranks.rank)
    _said(path, path.touch)
    return RunLog(folder, path.name)


def recorder(log: RunLog, ranks: Ranks) -> Record:
    """``log.record`` with this rank and node in each sample's metadata; first, a stop another rank marked."""

    def record(cell: str, round_: int, sample: ProcessResult | Failure) -> None:
        if isinstance(sample, ProcessResult):
            sample = dataclasses.replace(sample, metadata={**sample.metadata, RANK: ranks.rank, NODE: ranks.node})
        log.record(cell, round_, sample)
        if stopped := others_stopped(log.folder, ranks):
            raise JaxmlpError(stopped)

    return record


def others_stopped(folder: Path, ranks: Ranks) -> str:
    """The ranks other than this one that marked a stop, each with its node and why ("" if none)."""
    said = []
    for rank in range(ranks.size):
        mark = _mark(folder, rank, "stopped")
        if rank != ranks.rank and mark.is_file():
            with contextlib.suppress(OSError, ValueError):
                found = json.loads(mark.read_text(encoding="utf-8"))
                said.append(f"rank {found['rank']} on {found['node']} stopped ({found['why']})")
    return "; ".join(said)


def mark_stopped(folder: Path, ranks: Ranks, why: str) -> None:
    """This rank stopped (a signal, an error): said to the others in its mark."""
    with contextlib.suppress(JaxmlpError):  # the folder gone, say: the stop itself goes on
        _write(_mark(folder, ranks.rank, "stopped"), json.dumps({"rank": ranks.rank, "node": ranks.node, "why": why}))


def mark_done(folder: Path, ranks: Ranks) -> None:
    _write(_mark(folder, ranks.rank, "done"), ranks.node)


def gather(log: RunLog, ranks: Ranks, silence: float) -> None:
    """Rank 0: wait for every other rank to end its rounds, then take their samples into ``log``; a rank stopped or
    silent for ``silence`` seconds is a `JaxmlpError` (its samples taken first)."""
    try:
        for rank in range(1, ranks.size):
            _wait_done(log.folder, rank, ranks, silence)
    finally:
        take_rank_files(log, ranks)
    for rank in range(1, ranks.size):
        _mark(log.folder, rank, "done").unlink(missing_ok=True)


def _wait_done(folder: Path, rank: int, ranks: Ranks, silence: float) -> None:
    samples, heard = samples_file(folder, rank), time.monotonic()
    last = -1.0
    while not _mark(folder, rank, "done").is_file():
        if stopped := others_stopped(folder, ranks):
            raise JaxmlpError(f"{stopped}: the rounds it had left were not measured")
        changed = samples.stat().st_mtime if samples.is_file() else -1.0
        if changed != last:
            last, heard = changed, time.monotonic()
        if time.monotonic() - heard > silence:
            raise JaxmlpError(
                f"rank {rank}{_on_node(samples)} sent no sample for {silence:.0f} s (twice a process's time limit "
                "and a minute): its rounds were not measured; see its own output"
            )
        time.sleep(POLL_SECONDS)


def _on_node(samples: Path) -> str:
    """`` on NODE`` as a rank's first sample names it ("" before its first sample)."""
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError, IndexError):
        first = json.loads(samples.read_text(encoding="utf-8").splitlines()[0])
        return f" on {first['result']['metadata'][NODE]}"
    return ""


def take_rank_files(log: RunLog, ranks: Ranks) -> None:
    """The other ranks' samples appended to ``log`` (whole lines only) and their files removed."""
    for rank in range(1, ranks.size):
        path = samples_file(log.folder, rank)
        if path.is_file():
            _said(path, functools.partial(log.take, path))


@contextlib.contextmanager
def telling(folder: Path, ranks: Ranks, done: bool = False) -> Iterator[None]:
    """This rank's stop or failure marked in ``folder`` for the others; ``done``: its clean end too."""
    try:
        yield
        if done:
            mark_done(folder, ranks)
    except BaseException as e:
        mark_stopped(folder, ranks, f"stopped by {e}" if isinstance(e, KeyboardInterrupt) else str(e) or repr(e))
        raise


def lead(log: RunLog, out: Path, ranks: Ranks, measure: Callable[[Record], Measured]) -> Measured:
    """Rank 0's part of a shared timeline: its folder announced, ``measure`` run reading the others' stop marks while
    its heartbeat goes on, then the others' samples gathered into ``log``; the meeting file removed at the end."""
    meeting = meeting_file(out, ranks)
    announce(meeting, log.folder)
    try:
        with telling(log.folder, ranks), beating(meeting):
            measured = measure(recorder(log, ranks))
            gather(log, ranks, 2 * (measured.limit or 0.0) + 60)
            return measured
    except (KeyboardInterrupt, JaxmlpError) as e:
        first = others_stopped(log.folder, ranks)
        if first and isinstance(e, KeyboardInterrupt):
            print(f"jaxmlp sweep timeline: {first} first", file=sys.stderr, flush=True)
        take_rank_files(log, ranks)  # what the others measured is kept with rank 0's
        raise
    finally:
        meeting.unlink(missing_ok=True)


def follow_rank_0(
    runners: Sequence[Runner], matrix: Matrix, out: Path, ranks: Ranks, say: Say, progress: Progress
) -> Path:
    """The part of a shared timeline of a rank other than 0: rank 0's folder and plan read, this rank's rounds measured
    into its own samples file there, then a mark that it is done or why it stopped. Returns the folder."""
    folder = meet(meeting_file(out, ranks), ranks)
    log = rank_log(folder, ranks)
    say(f"{ranks.name}: its rounds go into {log.log}")
    try:
        with telling(folder, ranks, done=True):
            record = recorder(log, ranks)  # reads the others' stop marks
            plan = rank_0_plan(folder, ranks)
            mine = dataclasses.replace(matrix, processes=plan.matrix.processes)
            follow(runners, plan.probed, plan.differs, mine, plan.limit, say, progress, record)
    except Interrupted as e:
        e.kept = f"{ranks.name}: its samples are in {log.log}, which rank 0 keeps"
        raise
    return folder
