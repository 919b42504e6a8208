"""A timeline or corpus shared by the ranks of one ``mpirun`` or ``srun`` (one a node): rank 0 makes the folder and
names it in a meeting file beside it; every rank measures its rounds (round r is rank r mod N's) into its own
samples file in that folder; rank 0 waits for the others, takes their samples into its log and files the verdicts.
A rank that stops or fails leaves a mark that the others read between processes. A timeline calls one function a
rank: `lead` (rank 0) or `follow_rank_0` (the others), each the rank's whole part."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from jaxmlp.errors import Interrupted, JaxmlpError
from jaxmlp.flows import meeting as meetings
from jaxmlp.flows.meeting import Ranks, announce, beating, meet, meeting_file
from jaxmlp.measure.records import ProcessResult
from jaxmlp.measure.sweep.matrix import Failure, Measured, Progress, Record, Runner, Say, follow
from jaxmlp.measure.sweep.settings import Matrix
from jaxmlp.results.schema.sweep import NODE, RANK
from jaxmlp.results.store import layout
from jaxmlp.results.sweep.files import Plan, RunLog


def rank_0_plan(folder: Path, ranks: Ranks) -> Plan:
    """Ranks 1 on: the plan rank 0 filed once it probed the cells (its cells, what its probe found, the processes a
    release ``--budget`` fitted to it, each process's time limit): the ranks measure one plan, not one each."""
    path, deadline = folder / layout.SAMPLES_FILE, time.monotonic() + meetings.MEET_SECONDS
    while True:
        meetings.wait_for(path, ranks, "write its plan")
        with contextlib.suppress(JaxmlpError):
            return RunLog(folder).read()[0]
        if time.monotonic() > deadline:
            raise JaxmlpError(f"{ranks.name}: rank 0's plan in {path} cannot be read")
        time.sleep(meetings.POLL_SECONDS)


def samples_file(folder: Path, rank: int) -> Path:
    return folder / f"rank-{rank}.jsonl"


def rank_log(folder: Path, ranks: Ranks) -> RunLog:
    """Ranks 1 on: this rank's own log in rank 0's folder (samples only: rank 0's log holds the plan)."""
    path = samples_file(folder, ranks.rank)
    meetings.said(path, path.touch)
    return RunLog(folder, path.name)


def recorder(log: RunLog, ranks: Ranks) -> Record:
    """``log.record`` with this rank and node in each sample's metadata; first, a stop another rank marked."""

    def record(cell: str, round_: int, sample: ProcessResult | Failure) -> None:
        if isinstance(sample, ProcessResult):
            sample = dataclasses.replace(sample, metadata={**sample.metadata, RANK: ranks.rank, NODE: ranks.node})
        log.record(cell, round_, sample)
        stopped = meetings.others_stopped(log.folder, ranks)
        if stopped:
            raise JaxmlpError(stopped)

    return record


def mark_stopped(folder: Path, ranks: Ranks, why: str) -> None:
    """This rank stopped (a signal, an error): said to the others in its mark."""
    with contextlib.suppress(JaxmlpError):  # the folder gone, say: the stop itself goes on
        meetings.write_mark(
            meetings.mark_path(folder, ranks.rank, "stopped"),
            json.dumps({"rank": ranks.rank, "node": ranks.node, "why": why}),
        )


def mark_done(folder: Path, ranks: Ranks) -> None:
    meetings.write_mark(meetings.mark_path(folder, ranks.rank, "done"), ranks.node)


def gather(log: RunLog, ranks: Ranks, silence: float) -> None:
    """Rank 0: wait for every other rank to end its rounds, then take their samples into ``log``. A rank that
    stopped, or whose samples file stays unchanged for ``silence`` seconds, is a `JaxmlpError` naming it (the
    samples the others sent are taken first)."""
    try:
        for rank in range(1, ranks.size):
            _wait_done(log.folder, rank, ranks, silence)
    finally:
        take_rank_files(log, ranks)
    for rank in range(1, ranks.size):
        meetings.mark_path(log.folder, rank, "done").unlink(missing_ok=True)


def _wait_done(folder: Path, rank: int, ranks: Ranks, silence: float) -> None:
    samples, heard = samples_file(folder, rank), time.monotonic()
    last = -1.0
    while not meetings.mark_path(folder, rank, "done").is_file():
        stopped = meetings.others_stopped(folder, ranks)
        if stopped:
            raise JaxmlpError(f"{stopped}: the rounds it had left were not measured")
        changed = samples.stat().st_mtime if samples.is_file() else -1.0
        if changed != last:
            last, heard = changed, time.monotonic()
        if time.monotonic() - heard > silence:
            raise JaxmlpError(
                f"rank {rank}{_on_node(samples)} sent no sample for {silence:.0f} s (twice a process's time limit "
                "and a minute): its rounds were not measured; see its own output"
            )
        time.sleep(meetings.POLL_SECONDS)


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
            meetings.said(path, functools.partial(log.take, path))


@contextlib.contextmanager
def telling(folder: Path, ranks: Ranks, done: bool = False) -> Iterator[None]:
    """This rank's stop or failure marked in ``folder`` for the others (`mark_stopped`); ``done``: its end without
    one too (`mark_done`)."""
    try:
        yield
        if done:
            mark_done(folder, ranks)
    except BaseException as e:
        mark_stopped(folder, ranks, f"stopped by {e}" if isinstance(e, KeyboardInterrupt) else str(e) or repr(e))
        raise


def lead(log: RunLog, out: Path, ranks: Ranks, measure: Callable[[Record], Measured]) -> Measured:
    """Rank 0's part of a shared timeline: its folder (``log``'s, in ``out``) named to the others (`announce`), then
    ``measure`` given a recorder that reads the others' stop marks (`recorder`) while rank 0's heartbeat goes on, then
    the others' samples gathered into ``log`` (`gather`). Stopped, the others' samples are taken first, and a stop
    that another rank's came before is said (mpirun stops the others when one rank ends). The meeting file is removed
    at the end."""
    meeting = meeting_file(out, ranks)
    announce(meeting, log.folder)
    try:
        with telling(log.folder, ranks), beating(meeting):
            measured = measure(recorder(log, ranks))
            gather(log, ranks, 2 * (measured.limit or 0.0) + 60)
            return measured
    except (KeyboardInterrupt, JaxmlpError) as e:
        first = meetings.others_stopped(log.folder, ranks)
        if first and isinstance(e, KeyboardInterrupt):
            print(f"jaxmlp sweep timeline: {first} first", file=sys.stderr, flush=True)
        take_rank_files(log, ranks)  # what the others measured is kept with rank 0's
        raise
    finally:
        meeting.unlink(missing_ok=True)


def follow_rank_0(
    runners: Sequence[Runner], matrix: Matrix, out: Path, ranks: Ranks, say: Say, progress: Progress
) -> Path:
    """The part of a shared timeline of a rank other than 0: the folder rank 0 names in ``out`` (`meet`), its plan
    read there (`rank_0_plan`), this rank's rounds of it measured into its own samples file in that folder (rank 0
    takes them), then a mark that it is done (or why it stopped). Returns the folder."""
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
