"""How the ranks of one ``mpirun`` or ``srun`` meet: where this process stands among them (`Ranks`), the meeting file
beside the folder that rank 0 names there (`announce`, `meet`), rank 0's heartbeat on it (`beating`, `Pulse`) and
how long a rank waits for it."""

from __future__ import annotations

import contextlib
import json
import math
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from jaxmlp.errors import JaxmlpError
from jaxmlp.measure import distributed
from jaxmlp.results.store.writing import write_new

JOBS = {
    "Open MPI": (("OMPI_MCA_ess_base_jobid",), ("PMIX_NAMESPACE",)),
    "SLURM": (("SLURM_JOB_ID", "SLURM_STEP_ID"),),
}
"""Each cluster launcher's variables whose values the ranks of one launch share, the first set in full wins (Open
MPI's job, else its PMIx namespace; Slurm's job and step): only the launcher's own, so that mpirun inside sbatch
gives every rank one name."""


MEET_SECONDS = 600.0
"""How long a rank waits for rank 0 to name the folder and its plan (rank 0 may be making environments)."""


POLL_SECONDS = 0.2


T = TypeVar("T")


HEARTBEAT_SECONDS = 30.0
"""How often rank 0 touches its meeting file while the others may wait on it (`beating`)."""


SILENT_SECONDS = 300.0
"""How long a rank waits on a meeting file rank 0 no longer touches before it gives up (rank 0 killed)."""


SKEW_SECONDS = 120.0
"""How much earlier than this process a meeting may have started and still be this launch's (the ranks start
together; clocks of nodes differ a little): an older one is a stale file of an earlier launch."""


STARTED = time.time()
"""When this process started (imported with the command)."""


@dataclass(frozen=True)
class Ranks:
    """This process's place among the ranks of a cluster launcher (`distributed.CLUSTERS`): its rank, how many
    there are, its node (host) and what the ranks of this launch share (``job``)."""

    rank: int
    size: int
    node: str
    job: str

    @classmethod
    def found(cls) -> Ranks | None:
        """This process's ranks under mpirun or srun (None: alone)."""
        joined = distributed.rank()
        if joined is None or distributed.launcher() == distributed.OWN:
            return None
        return cls(joined[0], joined[1], socket.gethostname(), job_key(distributed.launcher(), os.environ))

    @property
    def name(self) -> str:
        return f"rank {self.rank} of {self.size} on {self.node}"

    @property
    def share(self) -> tuple[int, int]:
        """This rank and how many there are, as a matrix shares its rounds (`Matrix.share`)."""
        return self.rank, self.size


def job_key(launcher: str | None, env: Mapping[str, str]) -> str:
    """What the ranks of this launch share, from the variables of the ``launcher`` that started them (`JOBS`)."""
    for names in JOBS.get(launcher or "", ()):
        if all(env.get(v) for v in names):
            return ".".join(env[v] for v in names).replace(os.sep, "_")
    return "job"


def meeting_file(out: Path, ranks: Ranks) -> Path:
    """Where rank 0 names the folder it makes in ``out`` for the others (one a command's ``--out``; a corpus's
    cases have a folder each)."""
    return out / f".jaxmlp-meeting-{ranks.job}"


def await_case(meeting: Path, later: list[Path], corpus: Path, ranks: Ranks, pulse: Pulse | None = None) -> bool:
    """Ranks 1 on, in a corpus: whether rank 0 starts this case's timeline (``meeting`` appears), however long its
    bisection of the case before takes, while its heartbeat (``pulse``: on the corpus's meeting file) goes on;
    False once it has gone past it (a ``later`` path exists). Rank 0's stop or silence is a `JaxmlpError`."""
    while not meeting.is_file():
        if pulse:
            pulse.check()
        if any(p.exists() for p in later):
            return False
        stopped = others_stopped(corpus, ranks)
        if stopped:
            raise JaxmlpError(stopped)
        time.sleep(POLL_SECONDS)
    return True


def announce(meeting: Path, folder: Path) -> None:
    """Rank 0: the folder the others measure into, by its name beside the meeting file (the ranks may mount the
    shared filesystem at different paths), and when this launch started; a stale meeting file of an earlier launch
    is replaced."""
    if _started(meeting) < STARTED - SKEW_SECONDS:
        with contextlib.suppress(OSError):
            meeting.unlink()
    write_mark(meeting, json.dumps({"folder": folder.name, "started": STARTED}))


def _started(meeting: Path) -> float:
    """When the launch that wrote ``meeting`` started (-inf: none, or a file this jaxmlp cannot read)."""
    try:
        return float(json.loads(meeting.read_text(encoding="utf-8"))["started"])
    except (OSError, ValueError, KeyError, TypeError):
        return -math.inf


def write_mark(path: Path, text: str) -> None:
    """The coordination's files (the meeting, the marks) written, each new and whole (`write_new`); an `OSError` as
    one line naming the file."""
    said(path, lambda: write_new(path, text))


def said(path: Path, act: Callable[[], T]) -> T:
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
    name = said(meeting, lambda: json.loads(meeting.read_text(encoding="utf-8"))["folder"])
    return meeting.parent / str(name)


def _give_up(deadline: float, path: Path, ranks: Ranks, what: str) -> None:
    if time.monotonic() > deadline:
        raise JaxmlpError(
            f"{ranks.name}: rank 0 did not {what} within {MEET_SECONDS:.0f} s ({path} missing): "
            "start every rank with the same command and --out on a filesystem they share"
        )


def wait_for(path: Path, ranks: Ranks, what: str) -> Path:
    """Ranks 1 on: ``path`` once rank 0 writes it (within `MEET_SECONDS`); rank 0's stop mark is a `JaxmlpError`."""
    deadline = time.monotonic() + MEET_SECONDS
    while not path.is_file() or not path.stat().st_size:
        stopped = others_stopped(path.parent, ranks)
        if stopped:
            raise JaxmlpError(stopped)
        _give_up(deadline, path, ranks, what)
        time.sleep(POLL_SECONDS)
    return path


@contextlib.contextmanager
def beating(meeting: Path) -> Iterator[None]:
    """Rank 0: ``meeting``'s modification time touched every `HEARTBEAT_SECONDS` while inside, so that a rank
    waiting on it knows rank 0 is alive."""
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


def mark_path(folder: Path, rank: int, what: str) -> Path:
    return folder / f"rank-{rank}.{what}"


def others_stopped(folder: Path, ranks: Ranks) -> str:
    """The ranks other than this one that marked a stop, each with its node and why ("" if none)."""
    said = []
    for rank in range(ranks.size):
        mark = mark_path(folder, rank, "stopped")
        if rank != ranks.rank and mark.is_file():
            with contextlib.suppress(OSError, ValueError):
                said.append(_words(json.loads(mark.read_text(encoding="utf-8"))))
    return "; ".join(said)


def _words(mark: Mapping[str, object]) -> str:
    return f"rank {mark['rank']} on {mark['node']} stopped ({mark['why']})"
