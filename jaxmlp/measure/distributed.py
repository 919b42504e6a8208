"""Several local processes training one ``sharded`` run, joined by `jax.distributed` on 127.0.0.1.

`launch` starts one ``jaxmlp`` process a rank with the launcher's own arguments (`jaxmlp.measure.workers`), each
told by environment variables where the coordinator is (a free port on 127.0.0.1, chosen at run time) and which
process it is; each calls `initialize` before JAX starts, owns its own devices, and trains the same epochs over
the global mesh (CPU collectives: the installed jaxlib's, gloo). Rank 0 prints and writes the results; the others
are quiet. When a process fails or dies, the launcher stops the others at once and says which one and how; a
process whose peers vanish without the launcher stops by itself after JAX's heartbeat (`HEARTBEAT_SECONDS`).
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from typing import IO

from jaxmlp.errors import JaxmlpError, last_error_line
from jaxmlp.measure import workers

COORDINATOR = "JAXMLP_COORDINATOR"
PROCESS_ID = "JAXMLP_PROCESS_ID"
NUM_PROCESSES = "JAXMLP_NUM_PROCESSES"
HEARTBEAT_SECONDS = 10
"""How long JAX's coordinator waits for a silent process before it stops the others."""
START_SECONDS = 60
"""How long a process waits for the others to join."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rank() -> tuple[int, int] | None:
    """(this process's id, the number of processes) when `launch` started this process, else None."""
    if COORDINATOR not in os.environ:
        return None
    return int(os.environ[PROCESS_ID]), int(os.environ[NUM_PROCESSES])


def initialize() -> tuple[int, int] | None:
    """Join the run `launch` started (before anything else uses JAX); returns `rank`, or None when alone."""
    joined = rank()
    if joined is not None:
        import jax

        jax.distributed.initialize(
            os.environ[COORDINATOR],
            num_processes=joined[1],
            process_id=joined[0],
            initialization_timeout=START_SECONDS,
            heartbeat_timeout_seconds=HEARTBEAT_SECONDS,
        )
    return joined


def launch(argv: Sequence[str], processes: int, timeout: float, poll_seconds: float = 0.2) -> int:
    """Run ``jaxmlp ARGV`` as each of ``processes`` processes, for at most ``timeout`` seconds (then all are
    stopped: a deadlocked collective ends); returns 0 once all exit 0.

    Rank 0's output is this process's; the others' stderr is kept, and told when they fail. The first process
    to fail stops the others (a `JaxmlpError` naming it and its last error line, or rank 0's own exit code
    once it has said why itself)."""
    coordinator = f"127.0.0.1:{free_port()}"
    running: list[subprocess.Popen[str]] = []
    logs: list[IO[str]] = []
    with contextlib.ExitStack() as stack:
        stack.callback(workers.stop, running)  # on every way out, also Ctrl-C: no process is left behind
        for i in range(processes):
            env = {**os.environ, COORDINATOR: coordinator, PROCESS_ID: str(i), NUM_PROCESSES: str(processes)}
            child = workers.Child(f"process {i} of {processes}", [sys.executable, "-m", "jaxmlp", *argv], env)
            logs.append(stack.enter_context(tempfile.TemporaryFile("w+")))
            if i == 0:
                running.append(workers.start(child, capture=False))
            else:
                running.append(workers.start(child, capture=False, stdout=subprocess.DEVNULL, stderr=logs[i]))
        deadline = time.monotonic() + timeout
        while True:
            if time.monotonic() > deadline:
                workers.stop(running)
                raise JaxmlpError(
                    f"the {processes} processes ran past their time limit of {timeout:g} s and were "
                    "stopped (a deadlocked collective?): give a longer --timeout if the run needs it"
                )
            codes = [p.poll() for p in running]  # every one polled, each time
            if all(code == 0 for code in codes):
                return 0
            failed = [(i, code) for i, code in enumerate(codes) if code is not None and code != 0]
            if failed:
                i, code = min(failed, key=lambda f: (f[1] > 0, f[0]))  # a killed one first: the others follow it
                workers.stop(running)
                if i == 0:
                    print(f"jaxmlp train: process 0 of {processes} {workers.how(code)}; stopped the others",
                          file=sys.stderr)  # fmt: skip
                    return code if code > 0 else 1
                logs[i].seek(0)
                said = last_error_line(logs[i].read())
                last = f" (it said: {said[-300:]})" if said else ""
                raise JaxmlpError(f"process {i} of {processes} {workers.how(code)}{last}; stopped the others")
            time.sleep(poll_seconds)
