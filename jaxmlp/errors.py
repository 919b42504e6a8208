"""The one exception type users see, the exit codes, and the one way settings are checked."""

from __future__ import annotations

import contextlib
import math
import os
import re
import signal
from collections.abc import Callable, Iterable, Iterator, Sequence, Sized

EXIT_ERROR = 2
"""Bad input: a setting, a file, a folder or the machine; one line says which and what to do."""
EXIT_DIVERGED = 3
"""`jaxmlp train`: the loss became NaN or infinite."""


EXIT_FAILED = 1
"""Measuring went on, but part of it failed (a cell's worker timed out or crashed); the summary lists which."""
EXIT_SLOWER = 3
"""The gate (`gate`): a release (or commit) is slower beyond the threshold."""
EXIT_INCONCLUSIVE = 4
"""The gate with ``--strict``: a comparison is still inconclusive when its budget ends."""


def gate(verdicts: Iterable[str], unmeasured: int = 0, strict: bool = False) -> int:
    """The exit code of a command that compares: `EXIT_SLOWER`, else `EXIT_FAILED` (``results differ`` counts as
    unmeasured), else `EXIT_INCONCLUSIVE` where ``strict``, else 0 (docs/reference/exit-codes.md)."""
    said = set(verdicts)
    if "slower" in said:
        return EXIT_SLOWER
    if unmeasured or "results differ" in said:
        return EXIT_FAILED
    return EXIT_INCONCLUSIVE if strict and "inconclusive" in said else 0


class JaxmlpError(Exception):
    """A problem with the user's input or environment, one line without a traceback; exits with ``exit_code``."""

    exit_code = EXIT_ERROR


class NotMeasured(JaxmlpError):
    """Nothing could be measured: one line naming each cell and why, exit `EXIT_FAILED`."""

    exit_code = EXIT_FAILED


class Interrupted(KeyboardInterrupt):
    """Ctrl-C, SIGTERM or SIGHUP: exit 128 + the signal's number; ``kept`` the line saying what was kept and where."""

    def __init__(self, signum: int = signal.SIGINT):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.kept = ""

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


@contextlib.contextmanager
def keeping(done: Sized, of: str, lost: Callable[[int], str], save: Callable[[str], object]) -> Iterator[None]:
    """A stop inside raised as `Interrupted`, what had ended (``done``, of ``of``) saved by ``save`` (given the
    partial line) and named in its line; where that fails, its line says why (``lost``: what ended, in words)."""
    try:
        yield
    except KeyboardInterrupt as e:
        stopped = e if isinstance(e, Interrupted) else Interrupted()
        if done:
            said = f"kept {len(done)} of {of}"
            try:
                stopped.kept = f"{said} in {save(f'stopped by {stopped}; {said}')}"
            except (JaxmlpError, OSError) as error:  # the stop's line still, saying why nothing was kept
                stopped.kept = f"the {lost(len(done))} could not be written: {error}"
        raise stopped from None


def at_least(option: str, value: float | None, minimum: float, why: str = "") -> None:
    """``option`` (``value``; None: not given) is at least ``minimum``, else a `JaxmlpError` (``why``: the reason)."""
    if value is not None and not value >= minimum:
        raise JaxmlpError(f"{option} must be at least {minimum:g}{f' ({why})' if why else ''}, got {value:g}")


def one_of(option: str, value: str | None, choices: Sequence[str]) -> None:
    """``option`` (given as ``value``; None: not given) is one of ``choices``, or a `JaxmlpError` naming them."""
    if value is not None and value not in choices:
        raise JaxmlpError(f"unknown {option} {value!r}: choose one of {', '.join(choices)}")


def positive_finite(option: str, value: float) -> None:
    if not (math.isfinite(value) and value > 0):
        raise JaxmlpError(f"{option} must be a positive finite number, got {value}")


def detector(threshold: float, alpha: float) -> None:
    """The detector's two settings: a minimum effect of 0 or more (finite), a significance level between 0 and 1."""
    if not (0 <= threshold < math.inf and 0 < alpha < 1):
        raise JaxmlpError(
            f"--threshold must be a finite number of 0 or more and --alpha between 0 and 1, got "
            f"--threshold {threshold} --alpha {alpha}"
        )


def finite_at_least_zero(option: str, value: float) -> None:
    """``option`` is a finite number of 0 or more (a ratio, such as a threshold), or a `JaxmlpError` saying so."""
    if not (0 <= value < math.inf):
        raise JaxmlpError(f"{option} must be a finite number of 0 or more (0.1: 10%), got {value}")


def last_error_line(stderr: str) -> str | None:
    """What a failed child process said last: its last ``error:`` line (the text after ``error: ``), else its last
    line; None when it said nothing (the worker processes of the sweep, the scaling and a distributed run)."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    said = [line for line in lines if "error:" in line] or lines[-1:]
    return said[-1].split("error: ", 1)[-1] if said else None


def file_not_folder(what: str, path: object, fix: str) -> None:
    """One line where a folder is asked for and ``path`` is a file: ``{what} {path} is a file, not a folder: {fix}``."""
    if os.path.exists(str(path)) and not os.path.isdir(str(path)):
        raise JaxmlpError(f"{what} {path} is a file, not a folder: {fix}")


def unusable_folder(path: object, source: str, error: OSError) -> JaxmlpError:
    """One line for a folder that cannot be made or written: which setting gave it, why, and what to do."""
    why = error.strerror or type(error).__name__
    if isinstance(error, (FileExistsError, NotADirectoryError)):
        why = "it, or a folder above it, is a file"
    return JaxmlpError(f"{source} {path}: cannot be used as a folder ({why}); set it to a folder you can write to")


def device_out_of_memory(error: BaseException) -> str | None:
    """The device's out-of-memory ``error`` in a few words, the memory asked for first; else None."""
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
