"""The one way jaxmlp runs a child Python process, in its own group, dying with this one (`ChildFailed`)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any

from jaxmlp.errors import EXIT_ERROR, JaxmlpError, last_error_line

STOP_SECONDS = 3.0
"""How long a stopped child has to exit after SIGTERM before it is killed."""
FIRST_SECONDS = 900.0
"""The time limit of a first process (a sweep's probe, the first device count) where none is given."""
LIMIT_FACTOR = 10
MIN_LIMIT_SECONDS = 120.0
DERIVED_LIMIT = f"{LIMIT_FACTOR}x the slowest before it, at least {MIN_LIMIT_SECONDS:.0f} s"
"""`time_limit` without ``timeout``, in words."""


def time_limit(timeout: float | None, measured: Iterable[float]) -> float:
    """A worker process's time limit: ``timeout`` if given, else `LIMIT_FACTOR` times the slowest of the first
    processes ``measured`` (in seconds, their compile included), and at least `MIN_LIMIT_SECONDS`."""
    return timeout if timeout is not None else max(MIN_LIMIT_SECONDS, LIMIT_FACTOR * max(measured, default=0.0))


@dataclass(frozen=True)
class Child:
    """A child process: ``argv``, run with ``env`` (None: this process's) for at most ``timeout`` seconds (None:
    no limit). ``name`` is what the lines say of it (``0.6.2 [--xla_foo]``, ``N = 2``, ``process 1 of 2``)."""

    name: str
    argv: Sequence[str]
    env: Mapping[str, str] | None = None
    timeout: float | None = None


class ChildFailed(JaxmlpError):
    """A child that exited with an error, was killed, or ran past its time limit (``timed_out``)."""

    def __init__(self, message: str, child: Child, returncode: int | None, stderr: str, timed_out: bool = False):
        super().__init__(message)
        self.child, self.returncode, self.stderr, self.timed_out = child, returncode, stderr, timed_out


GUARD = (
    "import ctypes, os, signal, sys\n"
    "ctypes.CDLL(None).prctl(1, signal.SIGKILL)\n"  # PR_SET_PDEATHSIG: killed when the parent dies
    "if os.getppid() != int(sys.argv[1]): os._exit(1)\n"  # the parent died before that: go
    "os.execvp(sys.argv[2], sys.argv[2:])\n"
)
"""Run first in a Linux child, then replaced by its command: it asks to die with its parent (docs/faults.md)."""


def guarded(argv: Sequence[str]) -> list[str]:
    """``argv`` run so that the child dies with this process (`GUARD`; as it is off Linux)."""
    if not sys.platform.startswith("linux"):
        return list(argv)
    return [sys.executable, "-c", GUARD, str(os.getpid()), *argv]


def start(
    child: Child, capture: bool = True, stdout: int | IO[Any] | None = None, stderr: int | IO[Any] | None = None
) -> subprocess.Popen[str]:
    """Start ``child`` in its own process group; ``capture``: its outputs as pipes."""
    pipes: dict[str, Any] = (
        {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE} if capture else {"stdout": stdout, "stderr": stderr}
    )
    return subprocess.Popen(
        guarded(child.argv),
        env=None if child.env is None else dict(child.env),
        text=True,
        start_new_session=True,
        **pipes,
    )


def stop(processes: Sequence[subprocess.Popen[str]], grace: float = STOP_SECONDS) -> None:
    """Stop each running child and everything in its process group: SIGTERM, then SIGKILL after ``grace``."""
    for p in processes:
        if p.poll() is None:
            _signal_group(p, signal.SIGTERM)
    deadline = time.monotonic() + grace
    for p in processes:
        with contextlib.suppress(subprocess.TimeoutExpired):
            p.wait(max(0.0, deadline - time.monotonic()))
        _signal_group(p, signal.SIGKILL)  # the group's stragglers too, even once the child itself is gone
        with contextlib.suppress(subprocess.TimeoutExpired):
            p.wait(grace)


def _signal_group(p: subprocess.Popen[str], signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(p.pid, signum)


def _read(stream: IO[str], into: list[str], on_line: Callable[[str], None] | None) -> None:
    for line in stream:
        into.append(line)
        if on_line is not None:
            on_line(line.rstrip("\n"))


def run(child: Child, on_line: Callable[[str], None] | None = None) -> str:
    """Run ``child`` to its end and return its stdout; a failure, limit or interrupt raises `ChildFailed`."""
    process = start(child)
    out: list[str] = []
    err: list[str] = []
    assert process.stdout is not None and process.stderr is not None
    readers = [
        threading.Thread(target=_read, args=(process.stdout, out, None), daemon=True),
        threading.Thread(target=_read, args=(process.stderr, err, on_line), daemon=True),
    ]
    for reader in readers:
        reader.start()
    timed_out = False
    try:
        process.wait(child.timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        if process.poll() is None or timed_out:
            stop([process])
    for reader in readers:
        reader.join(STOP_SECONDS)
    stderr = "".join(err)
    if timed_out:
        raise ChildFailed(
            f"{child.name}: stopped after its time limit of {child.timeout:g} s", child, None, stderr, timed_out=True
        )
    if process.returncode != 0:
        said = ended(process.returncode, stderr)
        raise ChildFailed(f"{child.name}: the worker failed: {said}", child, process.returncode, stderr)
    return "".join(out)


def run_json(child: Child, on_line: Callable[[str], None] | None = None) -> Any:
    """`run`, and the JSON document the child printed as its last line of output."""
    printed = run(child, on_line).strip().splitlines()
    try:
        return json.loads(printed[-1])
    except (IndexError, json.JSONDecodeError):
        raise JaxmlpError(
            f"{child.name}: the worker printed no JSON result (last line: {(printed or [''])[-1][:200]!r})"
        ) from None


def ended(returncode: int, stderr: str) -> str:
    """Why a failed child ended: a signal first (a log line it printed before is not why; the kernel's
    out-of-memory killer sends signal 9), then what it said last; else what it said last, or its exit code."""
    last = last_error_line(stderr)
    if returncode < 0:
        oom = " (out of memory? the kernel's out-of-memory killer sends it; `dmesg` says)" if returncode == -9 else ""
        return how(returncode) + oom + (f"; it said last: {last}" if last else "")
    return last or how(returncode)


def how(returncode: int) -> str:
    """How a child ended, in words: ``was killed by signal 9``, ``exited with code 2``."""
    return f"was killed by signal {-returncode}" if returncode < 0 else f"exited with code {returncode}"


# --- the child's side ----------------------------------------------------------------------------------------


def serve(argv: Sequence[str], measure: Callable[[Any], Any], settings: Callable[[Any], Any], prog: str) -> int:
    """A worker process's life: JSON settings in, one JSON result line out, an error as one line (exit 2)."""
    try:
        if len(argv) != 1:
            raise JaxmlpError(f"usage: python -m {prog} SETTINGS (the settings as JSON; started by jaxmlp itself)")
        result = measure(settings(json.loads(argv[0])))
    except JaxmlpError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return EXIT_ERROR
    print(json.dumps(result.to_json()))
    return 0
