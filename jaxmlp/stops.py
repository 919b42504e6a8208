"""Stopping signals: how a stop reaches the main thread, and never a library's workers (docs/faults.md)."""

from __future__ import annotations

import _thread
import contextlib
import signal
import sys
import threading
import time
import weakref
from collections.abc import Collection, Iterator
from types import FrameType
from typing import Any

from jaxmlp.errors import Interrupted

STOPPING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""The signals that stop a command: Ctrl-C, and those handled like it."""

_STARTING: list[int] = []
"""Signals that arrived while a child was starting or stops were `held`, raised once that ends."""
_STARTS = [0]  # how many starts and holds are under way (nested)

_RAISED: dict[weakref.ref[Interrupted], int] = {}
"""Each stop raised and not yet out of `stop_on_signals`, by a weak reference to it: the signal it came from."""
_LOST: list[int] = []
"""Stops dropped where they were raised and not raised again yet."""
_ACTIVE: list[object | None] = [None]
"""The `stop_on_signals` under way (a token), None outside one; read and set under `_LOCK`."""
_LOCK = threading.Lock()


def _raise(signum: int, frame: FrameType | None) -> None:
    if _STARTS[0] and not _STARTING:  # a child half started would print multiprocessing's EOFError; a second
        _STARTING.append(signum)  # stop while children start (one hangs at its start?) stops at once
        return
    _LOST.clear()
    # From here on, a child's end is the command's to handle: a library's SIGCHLD handler (torch's DataLoader
    # raises when a worker dies of a signal) would put its own error, with a traceback, over this one.
    signal.signal(signal.SIGCHLD, _ignore)  # (a Python handler: SIG_DFL would make a pending one print an error)
    raise _watched(Interrupted(signum))  # (no local holds it: its traceback holds this frame)


def _watched(stop: Interrupted) -> Interrupted:
    _RAISED[weakref.ref(stop, _lost)] = stop.signum
    return stop


def _lost(stop: weakref.ref[Interrupted]) -> None:
    """A stop gone before it left `stop_on_signals`: dropped where it was raised (a gc callback, a finalizer, a
    library that clears Python errors, such as JAX's C++ callbacks), so sent again."""
    if (signum := _RAISED.pop(stop, None)) is not None:
        _LOST.append(signum)
        _thread.start_new_thread(_send_again, (signum, _ACTIVE[0]))  # (no lock of threading's: this runs anywhere)


def _send_again(signum: int, token: object | None) -> None:
    """The signal sent to the main thread again, a moment later (now it could land where it was dropped), as a
    real signal, so that a blocking call there is interrupted too."""
    time.sleep(0.01)
    with _LOCK:
        if _ACTIVE[0] is token and _LOST:
            signal.pthread_kill(threading.main_thread().ident or 0, signum)


def _ignore(signum: int, frame: FrameType | None) -> None:
    pass


def _quiet_when_lost(unraisable: Any) -> None:
    """Python's "Exception ignored" print, left out for a stop (`_lost` sends it again)."""
    if not isinstance(unraisable.exc_value, Interrupted):
        sys.__unraisablehook__(unraisable)


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
    """Ctrl-C, SIGTERM and SIGHUP raise `Interrupted` in the main thread; one a library drops is raised again."""
    before = {s: signal.signal(s, _raise) for s in STOPPING}
    sys.unraisablehook, hook = _quiet_when_lost, sys.unraisablehook
    with _LOCK:
        _ACTIVE[0] = object()
    try:
        yield
    finally:
        with _LOCK:
            _ACTIVE[0] = None
        _RAISED.clear()  # a stop that reaches here was not lost
        lost = _LOST[:1]
        _LOST.clear()
        _STARTING.clear()
        sys.unraisablehook = hook
        for s, handler in before.items():
            signal.signal(s, handler)
        if lost and not isinstance(sys.exc_info()[1], Interrupted):
            raise Interrupted(lost[0])  # the stop, not what came after it was dropped


def resource_tracker_started() -> None:
    """multiprocessing's resource tracker started now, before `deaf_to_ctrl_c` (starting it unblocks the stopping
    signals in the calling thread), quiet about killed workers."""
    from multiprocessing import resource_tracker

    quiet = "ignore:resource_tracker:UserWarning"  # the tracker is started with this interpreter's -W options
    sys.warnoptions.append(quiet)
    try:
        resource_tracker.ensure_running()
    finally:
        sys.warnoptions.remove(quiet)


@contextlib.contextmanager
def deaf_to_ctrl_c(signals: Collection[int] = (signal.SIGINT,)) -> Iterator[None]:
    """Processes started inside never hear ``signals``; one sent meanwhile is raised once they have started.
    `multiprocessing` workers need `resource_tracker_started` first."""
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, set(signals))
    _STARTS[0] += 1  # and a stopping signal that reaches another thread waits for the start (`_raise`)
    try:
        yield
    finally:
        queued = _release()
        signal.pthread_sigmask(signal.SIG_UNBLOCK, set(signals) - set(blocked))
        if queued:
            _raise(queued, None)


@contextlib.contextmanager
def held() -> Iterator[None]:
    """A stopping signal sent inside is raised once it ends (a second one at once): around imports of extension
    modules (jaxlib's), which end the whole process when a stop is raised in the Python code they call."""
    _STARTS[0] += 1
    try:
        yield
    finally:
        if queued := _release():
            _raise(queued, None)


def _release() -> int | None:
    """One hold (`deaf_to_ctrl_c`, `held`) ended: the stop sent meanwhile, to raise once the last has ended."""
    _STARTS[0] -= 1
    if _STARTS[0] or not _STARTING:
        return None
    queued = _STARTING[0]
    _STARTING.clear()
    return queued
