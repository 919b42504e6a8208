"""One step of the accelerator check under its time: the command in a process group of its own, its output passed
on line by line; at its time the group is sent SIGTERM (SIGKILL 10 s later if it is still there) and what it prints
from then on is left out, so that a stopped step ends in one line, ``== NAME: exit 124 after N s: stopped at its N
s; ...``, never the native stack trace a runtime prints as it dies (XLA's after a TPU program was stopped).

    python3 bench/accelerator/bounded.py NAME SECONDS COMMAND...

Exit status: the command's (128 + the signal where a signal ended it), 124 where it was stopped at its time.
Plain Python (the standard library): it runs before anything is installed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from typing import IO

GRACE = 10
"""Seconds between SIGTERM and SIGKILL for a command stopped at its time."""


class Passed:
    """The command's output passed on until `stop`, then only counted."""

    def __init__(self) -> None:
        self.stopped = False
        self.dropped = 0
        self.lock = threading.Lock()

    def pump(self, source: IO[bytes], sink: IO[bytes]) -> None:
        for line in iter(source.readline, b""):
            with self.lock:
                if self.stopped:
                    self.dropped += 1
                    continue
                sink.write(line)
                sink.flush()

    def stop(self) -> None:
        with self.lock:
            self.stopped = True


def _signal_group(process: subprocess.Popen[bytes], signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):  # gone already
        os.killpg(process.pid, signum)


def run(name: str, seconds: float, command: list[str], sink: IO[bytes]) -> int:
    """Run ``command`` for at most ``seconds``, its output into ``sink``; its end said in one line; its status."""
    start = time.monotonic()
    try:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    except OSError as e:
        sink.write(f"== {name}: exit 127 after 0 s: {command[0]} did not start ({e.strerror})\n".encode())
        return 127
    passed = Passed()
    assert process.stdout is not None
    reader = threading.Thread(target=passed.pump, args=(process.stdout, sink), daemon=True)
    reader.start()

    def forward(signum: int, frame: object) -> None:  # this script stopped: its command with it
        _signal_group(process, signum)

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, forward)
    killed = False
    try:
        code = process.wait(timeout=seconds)
        stopped = False
    except subprocess.TimeoutExpired:
        passed.stop()
        stopped = True
        _signal_group(process, signal.SIGTERM)
        try:
            process.wait(timeout=GRACE)
        except subprocess.TimeoutExpired:
            killed = True
            _signal_group(process, signal.SIGKILL)
            process.wait()
        code = 124
    _signal_group(process, signal.SIGKILL)  # whatever of its group is left (a worker it started)
    reader.join(timeout=5)
    took = round(time.monotonic() - start)
    if not stopped and code < 0:
        code = 128 - code
    said = f"== {name}: exit {code} after {took} s"
    if stopped:
        how = f", SIGKILL {GRACE} s later" if killed else ""
        dropped = f"{passed.dropped} line{'' if passed.dropped == 1 else 's'}"
        said += f": stopped at its {seconds:g} s (SIGTERM{how}); {dropped} it printed after the stop left out"
    sink.write((said + "\n").encode())
    sink.flush()
    return code


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        seconds = float(argv[1])
    except ValueError:
        print(f"bounded.py: {argv[1]} is not a number of seconds", file=sys.stderr)
        return 2
    return run(argv[0], seconds, argv[2:], sys.stdout.buffer)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
