"""Several local processes training one ``sharded`` run, joined by `jax.distributed` on 127.0.0.1.

`launch` starts one ``jaxmlp train`` process a rank, each told by environment variables where the coordinator
is (a free port on 127.0.0.1, chosen at run time) and which process it is; each calls `initialize` before JAX
starts, owns its own devices, and trains the same epochs over the global mesh (CPU collectives: the installed
jaxlib's, gloo). Rank 0 prints and writes the results; the others are quiet. When a process fails or dies,
the launcher stops the others at once and says which one and how; a process whose peers vanish without the
launcher stops by itself after JAX's heartbeat (`HEARTBEAT_SECONDS`).
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

from jaxmlp.errors import JaxmlpError, last_error_line

COORDINATOR = "JAXMLP_COORDINATOR"
PROCESS_ID = "JAXMLP_PROCESS_ID"
NUM_PROCESSES = "JAXMLP_NUM_PROCESSES"
HEARTBEAT_SECONDS = 10
"""How long JAX's coordinator waits for a silent process before it stops the others."""
START_SECONDS = 60
"""How long a process waits for the others to join."""
STOP_SECONDS = 3
"""How long a stopped process has to exit before it is killed."""


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


def _stop(processes: Sequence[subprocess.Popen]) -> None:
    for p in processes:
        if p.poll() is None:
            p.terminate()
    deadline = time.monotonic() + STOP_SECONDS
    for p in processes:
        try:
            p.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def _how(code: int) -> str:
    return f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"


def launch(commands: Sequence[Sequence[str]], poll_seconds: float = 0.2) -> int:
    """Run ``commands[i]`` (``jaxmlp`` arguments) as process i of ``len(commands)``; returns 0 once all exit 0.

    Rank 0's output is this process's; the others' stderr is kept, and told when they fail. The first process
    to fail stops the others (a `JaxmlpError` naming it and its last error line, or rank 0's own exit code
    once it has said why itself)."""
    coordinator = f"127.0.0.1:{free_port()}"
    processes: list[subprocess.Popen] = []
    with contextlib.ExitStack() as stack:
        stack.callback(_stop, processes)  # on every way out, also Ctrl-C: no process is left behind
        logs = []
        for i, args in enumerate(commands):
            env = {**os.environ, COORDINATOR: coordinator, PROCESS_ID: str(i), NUM_PROCESSES: str(len(commands))}
            logs.append(stack.enter_context(tempfile.TemporaryFile("w+")))
            quiet = {} if i == 0 else {"stdout": subprocess.DEVNULL, "stderr": logs[i]}
            processes.append(subprocess.Popen([sys.executable, "-m", "jaxmlp", *args], env=env, **quiet))
        while True:
            codes = [p.poll() for p in processes]  # every one polled, each time
            if all(code == 0 for code in codes):
                return 0
            failed = [(i, code) for i, code in enumerate(codes) if code not in (None, 0)]
            if failed:
                i, code = min(failed, key=lambda f: (f[1] > 0, f[0]))  # a killed one first: the others follow it
                _stop(processes)
                if i == 0:
                    print(f"jaxmlp train: process 0 of {len(processes)} {_how(code)}; stopped the others",
                          file=sys.stderr)  # fmt: skip
                    return code if code > 0 else 1
                logs[i].seek(0)
                said = last_error_line(logs[i].read())
                last = f" (it said: {said[-300:]})" if said else ""
                raise JaxmlpError(f"process {i} of {len(processes)} {_how(code)}{last}; stopped the others")
            time.sleep(poll_seconds)
