"""The one exception type users see: its message names the problem and the fix."""


class JaxmlpError(Exception):
    """A problem with the user's input or environment, reported as one line without a traceback."""


def last_error_line(stderr: str) -> str | None:
    """What a failed child process said last: its last ``error:`` line (the text after ``error: ``), else its last
    line; None when it said nothing (the worker processes of the sweep, the scaling and a distributed run)."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    said = [line for line in lines if "error:" in line] or lines[-1:]
    return said[-1].split("error: ", 1)[-1] if said else None
