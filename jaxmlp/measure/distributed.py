"""Several processes training one ``sharded`` run, joined by `jax.distributed`: started by `launch` on this host
(127.0.0.1), or by a cluster's own launcher (`mpirun`, `srun`: `CLUSTERS`), whose environment JAX detects itself.

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
from typing import IO, Any

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


CLUSTERS = (
    ("Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_SIZE"),
    ("SLURM", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_STEP_ID"),  # under srun (a step), not merely inside sbatch
)
"""Cluster launchers `jax.distributed.initialize()` detects by itself: name, rank and size variables, and the one
that says this process was started by it."""
OWN = "jaxmlp"  # `launch` (the JAXMLP_* variables, set by it or by hand on hosts without a scheduler)


def launcher() -> str | None:
    """Who started this process as one of several: `OWN`, a `CLUSTERS` name, or None (alone)."""
    if COORDINATOR in os.environ:
        return OWN
    for name, rank_var, size_var, marker in CLUSTERS:
        if marker in os.environ and int(os.environ.get(size_var, "1") or 1) > 1 and rank_var in os.environ:
            return name
    return None


def rank() -> tuple[int, int] | None:
    """(this process's id, the number of processes) when `launch` or a cluster launcher (`CLUSTERS`) started this
    process among others, else None."""
    if COORDINATOR in os.environ:
        return int(os.environ[PROCESS_ID]), int(os.environ[NUM_PROCESSES])
    found = launcher()
    for name, rank_var, size_var, _ in CLUSTERS:
        if name == found:
            return int(os.environ[rank_var]), int(os.environ[size_var])
    return None


def initialize() -> tuple[int, int] | None:
    """Join the run this process is part of (before anything else uses JAX): `launch`'s, on the coordinator its
    variables name, or a cluster launcher's, found by `jax.distributed`'s own detection; returns `rank`, or None
    when alone. A coordinator that cannot be reached within `START_SECONDS` is one line, not a hang."""
    joined = rank()
    if joined is None:
        return None
    import jax

    where = {} if launcher() != OWN else {"coordinator_address": os.environ[COORDINATOR],
                                          "num_processes": joined[1], "process_id": joined[0]}  # fmt: skip
    try:
        jax.distributed.initialize(**where, initialization_timeout=START_SECONDS,  # type: ignore[arg-type]
                                   heartbeat_timeout_seconds=HEARTBEAT_SECONDS)  # fmt: skip
    except Exception as e:  # jax raises RuntimeError/ValueError with XLA's long status text
        said = last_error_line(str(e)) or type(e).__name__
        raise JaxmlpError(f"process {joined[0]} of {joined[1]} ({launcher()}) could not join the run within "
                          f"{START_SECONDS} s: {said[-300:]}; is the coordinator reachable?") from None  # fmt: skip
    return joined


def processes() -> dict[str, Any]:
    """This run's processes, for the results' metadata: the launcher, the count, this one's id, the ids that joined
    the global mesh and its device count (after `initialize`)."""
    import jax

    return {"launcher": launcher() or "none", "process_count": jax.process_count(),
            "process_index": jax.process_index(), "process_ids": sorted({d.process_index for d in jax.devices()}),
            "global_device_count": jax.device_count()}  # fmt: skip


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
