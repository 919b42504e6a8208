"""The one exception type users see (its message names the problem and the fix), the exit codes, and the one way
settings are checked: each check raises it with the option's name, the rule and the value given."""

from __future__ import annotations

import _thread
import contextlib
import math
import re
import signal
import sys
import time
import weakref
from collections.abc import Collection, Iterator
from types import FrameType
from typing import Any

EXIT_ERROR = 2
"""Bad input: a setting, a file, a folder or the machine; one line says which and what to do."""
EXIT_DIVERGED = 3
"""`jaxmlp train`: the loss became NaN or infinite."""


EXIT_FAILED = 1
"""Measuring went on, but part of it failed (a cell's worker timed out or crashed); the summary lists which."""


class JaxmlpError(Exception):
    """A problem with the user's input or environment, reported as one line without a traceback."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C, SIGTERM or SIGHUP: every command stops its children, keeps what was measured, and exits with
    128 + the signal's number. ``kept`` is the one line a command sets to say what it kept and where."""

    def __init__(self, signum: int = signal.SIGINT):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.kept = ""

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


STOPPING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""The signals that stop a command: Ctrl-C, and those handled like it."""


_STARTING: list[int] = []
"""Signals that arrived while a child process was starting (`deaf_to_ctrl_c`), raised once it has started."""
_STARTS = [0]  # how many starts are under way (nested)


_RAISED: dict[weakref.ref[Interrupted], int] = {}
"""Each stop raised and not yet out of `stop_on_signals`, by a weak reference to it: the signal it came from."""


def _raise(signum: int, frame: FrameType | None) -> None:
    if _STARTS[0]:  # a child half started (its start data half written) would print multiprocessing's EOFError
        _STARTING.append(signum)
        return
    # From here on, a child's end is the command's to handle: a library's SIGCHLD handler (torch's DataLoader
    # raises when a worker dies of a signal) would put its own error, with a traceback, over this one.
    signal.signal(signal.SIGCHLD, _ignore)  # (a Python handler: SIG_DFL would make a pending one print an error)
    raise _watched(Interrupted(signum))  # (no local holds it: its traceback holds this frame)


def _watched(stop: Interrupted) -> Interrupted:
    _RAISED[weakref.ref(stop, _lost)] = stop.signum
    return stop


def _lost(stop: weakref.ref[Interrupted]) -> None:
    """A stop gone before it left `stop_on_signals`: dropped where it was raised (a gc callback, a finalizer, a
    library that clears Python errors, such as JAX's C++ callbacks), so delivered again."""
    signum = _RAISED.pop(stop, None)
    if signum is not None:  # from another thread, a moment later: here it could land in the same place
        _thread.start_new_thread(_deliver, (signum,))


def _deliver(signum: int) -> None:
    time.sleep(0.01)
    if _HANDLING[0]:
        _thread.interrupt_main(signal.Signals(signum))


def _ignore(signum: int, frame: FrameType | None) -> None:
    pass


def _quiet_when_lost(unraisable: Any) -> None:
    """Python's "Exception ignored" print, left out for a stop (`_lost` delivers it again)."""
    if not isinstance(unraisable.exc_value, Interrupted):
        sys.__unraisablehook__(unraisable)


_HANDLING = [False]


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
    """Ctrl-C, SIGTERM and SIGHUP raise `Interrupted` (a KeyboardInterrupt) in the main thread, so that the same
    cleanup runs (children stopped, temporary folders removed, samples kept); one that a library drops is raised
    again."""
    before = {s: signal.signal(s, _raise) for s in STOPPING}
    sys.unraisablehook, hook = _quiet_when_lost, sys.unraisablehook
    _HANDLING[0] = True
    try:
        yield
    finally:
        _HANDLING[0] = False
        _RAISED.clear()  # a stop that reaches here was not lost
        sys.unraisablehook = hook
        for s, handler in before.items():
            signal.signal(s, handler)


_TRACKER_QUIET = "ignore:resource_tracker:UserWarning"
"""The resource tracker's warnings filter (``-W``): its only warnings are those that count what it cleans up."""


def resource_tracker_started() -> None:
    """multiprocessing's resource tracker (the process that unlinks the shared memory of workers that die) started
    now, before `deaf_to_ctrl_c`: multiprocessing starts it with the first worker or queue, and then unblocks SIGINT
    and SIGTERM in the calling thread, so the workers that thread starts next would hear Ctrl-C. Quiet about what
    it cleans up: a worker killed when a command stops leaves the shared memory it was filling (Grain's batches),
    the tracker unlinks it, and its warning would be a second line."""
    from multiprocessing import resource_tracker

    sys.warnoptions.append(_TRACKER_QUIET)  # the tracker is started with this interpreter's -W options
    try:
        resource_tracker.ensure_running()
    finally:
        sys.warnoptions.remove(_TRACKER_QUIET)


@contextlib.contextmanager
def deaf_to_ctrl_c(signals: Collection[int] = (signal.SIGINT,)) -> Iterator[None]:
    """Processes started inside never see Ctrl-C (SIGINT is blocked in this thread while they start, and a child
    keeps its parent's blocked signals): a terminal's Ctrl-C reaches every process of its group, and a worker that
    is still importing its libraries would print a traceback of its own. The command that started them stops them
    (`stop_children`); a stopping signal sent meanwhile (to any of this process's threads) is raised once they have
    started, so that no child is left with its start data half written.

    ``signals``: those blocked (`STOPPING`: a worker whose start data does not fit in a pipe, Grain's, must not die
    of a group's SIGTERM either while its parent writes them, or the write never ends). `multiprocessing` workers
    need the resource tracker started before (`resource_tracker_started`)."""
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, set(signals))
    _STARTS[0] += 1  # and a stopping signal that reaches another thread waits for the start (`_raise`)
    try:
        yield
    finally:
        _STARTS[0] -= 1
        signal.pthread_sigmask(signal.SIG_UNBLOCK, set(signals) - set(blocked))
        if not _STARTS[0] and _STARTING:
            signum = _STARTING[0]
            _STARTING.clear()
            _raise(signum, None)


def at_least(option: str, value: float | None, minimum: float, why: str = "") -> None:
    """``option`` (given as ``value``; None: not given) is at least ``minimum``, or a `JaxmlpError` saying so
    (``why``: what the rule is for, said in brackets)."""
    if value is not None and not value >= minimum:
        raise JaxmlpError(f"{option} must be at least {minimum:g}{f' ({why})' if why else ''}, got {value:g}")


def positive_finite(option: str, value: float) -> None:
    if not (math.isfinite(value) and value > 0):
        raise JaxmlpError(f"{option} must be a positive finite number, got {value}")


def detector(threshold: float, alpha: float) -> None:
    """The detector's two settings: a minimum effect of 0 or more, a significance level between 0 and 1."""
    if not (threshold >= 0 and 0 < alpha < 1):
        raise JaxmlpError("--threshold must be 0 or more and --alpha between 0 and 1")


def last_error_line(stderr: str) -> str | None:
    """What a failed child process said last: its last ``error:`` line (the text after ``error: ``), else its last
    line; None when it said nothing (the worker processes of the sweep, the scaling and a distributed run)."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    said = [line for line in lines if "error:" in line] or lines[-1:]
    return said[-1].split("error: ", 1)[-1] if said else None


def unusable_folder(path: object, source: str, error: OSError) -> JaxmlpError:
    """One line for a folder that cannot be made or written: which setting gave it (``JAXMLP_CACHE_DIR``, a
    default...), why, and what to do."""
    why = error.strerror or type(error).__name__
    if isinstance(error, (FileExistsError, NotADirectoryError)):
        why = "it, or a folder above it, is a file"
    return JaxmlpError(f"{source} {path}: cannot be used as a folder ({why}); set it to a folder you can write to")


def device_out_of_memory(error: BaseException) -> str | None:
    """When ``error`` is the device's out-of-memory (XLA's ``RESOURCE_EXHAUSTED``): what it says in a few words,
    the memory asked for (where XLA names it) first; else None."""
    from jaxmlp.units import size

    text = str(error)
    if "RESOURCE_EXHAUSTED" not in text:
        return None
    asked = re.search(r"allocat\w* (\d+)(?: ?bytes|B)", text)
    said = next((line.strip() for line in text.splitlines() if "RESOURCE_EXHAUSTED" in line), text)[:200]
    return (
        f"the device ran out of memory asking for {size(int(asked[1]))} ({said})"
        if asked
        else f"the device ran out of memory ({said})"
    )
