"""Several processes training one ``sharded`` run joined by `jax.distributed`, started here or by a cluster."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
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
"""Cluster launchers `jax.distributed.initialize()` detects by itself, and the variables of each."""
OWN = "jaxmlp"  # `launch` (the JAXMLP_* variables, set by it or by hand on hosts without a scheduler)


def alone(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` without what says a process is one of several: a child that runs by itself under mpirun/srun."""
    return {k: v for k, v in env.items() if k not in (COORDINATOR, *(marker for *_, marker in CLUSTERS))}


def launcher() -> str | None:
    """Who started this process as one of several: `OWN`, a `CLUSTERS` name, or None (alone)."""
    if COORDINATOR in os.environ:
        return OWN
    for name, rank_var, size_var, marker in CLUSTERS:
        if marker in os.environ and int(os.environ.get(size_var, "1") or 1) > 1 and rank_var in os.environ:
            return name
    return None


def rank() -> tuple[int, int] | None:
    """(this process's id, the number of processes) where started among others, else None."""
    if COORDINATOR in os.environ:
        return int(os.environ[PROCESS_ID]), int(os.environ[NUM_PROCESSES])
    found = launcher()
    for name, rank_var, size_var, _ in CLUSTERS:
        if name == found:
            return int(os.environ[rank_var]), int(os.environ[size_var])
    return None


def initialize() -> tuple[int, int] | None:
    """Join the run this process is part of (`launch`'s or a cluster launcher's) before anything else uses JAX; returns
    `rank`, or None when alone. An unreachable coordinator is one line after `START_SECONDS`."""
    joined = rank()
    if joined is None:
        return None
    import jax

    where = (
        {}
        if launcher() != OWN
        else {"coordinator_address": os.environ[COORDINATOR], "num_processes": joined[1], "process_id": joined[0]}
    )
    try:
        jax.distributed.initialize(
            **where,  # type: ignore[arg-type]
            initialization_timeout=START_SECONDS,
            heartbeat_timeout_seconds=HEARTBEAT_SECONDS,
        )
    except Exception as e:  # jax raises RuntimeError/ValueError with XLA's long status text
        said = last_error_line(str(e)) or type(e).__name__
        raise JaxmlpError(
            f"process {joined[0]} of {joined[1]} ({launcher()}) could not join the run within "
            f"{START_SECONDS} s: {said[-300:]}; is the coordinator reachable?"
        ) from None
    return joined


def processes() -> dict[str, Any]:
    """This run's processes for the results' metadata: launcher, count, id, the mesh's processes and devices."""
    import jax

    return {
        "launcher": launcher() or "none",
        "process_count": jax.process_count(),
        "process_index": jax.process_index(),
        "process_ids": sorted({d.process_index for d in jax.devices()}),
        "global_device_count": jax.device_count(),
    }


def rank_environment(
    process: int, processes: int, coordinator: str, base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment of `launch`'s process ``process`` of ``processes``: ``base`` with its coordinator and id."""
    return {
        **(os.environ if base is None else base),
        COORDINATOR: coordinator,
        PROCESS_ID: str(process),
        NUM_PROCESSES: str(processes),
    }


def launch(argv: Sequence[str], processes: int, timeout: float, poll_seconds: float = 0.2) -> int:
    """Run ``jaxmlp ARGV`` as ``processes`` processes joined on 127.0.0.1, all stopped after ``timeout`` seconds; 0
    once all exit 0. The first to fail stops the others: a `JaxmlpError` naming it, or rank 0's own exit code."""
    coordinator = f"127.0.0.1:{free_port()}"
    command = [sys.executable, "-m", "jaxmlp", *argv]
    children = [
        workers.Child(f"process {i} of {processes}", command, rank_environment(i, processes, coordinator))
        for i in range(processes)
    ]
    with contextlib.ExitStack() as stack:
        logs = [stack.enter_context(tempfile.TemporaryFile("w+")) for _ in children]
        running: list[subprocess.Popen[str]] = []
        stack.callback(workers.stop, running)  # on every way out, also Ctrl-C: no process is left behind
        for i, child in enumerate(children):
            if i == 0:
                running.append(workers.start(child, capture=False))
            else:
                running.append(workers.start(child, capture=False, stdout=subprocess.DEVNULL, stderr=logs[i]))
        failed = _watch(running, logs, timeout, poll_seconds)
        if failed is None:
            return 0
        i, code = failed
        if i != 0:
            raise _failure(i, processes, code, logs[i])
        print(f"jaxmlp train: process 0 of {processes} {workers.how(code)}; stopped the others", file=sys.stderr)
        return code if code > 0 else 1


def run_joined(
    argv: Sequence[str], environments: Sequence[Mapping[str, str]], timeout: float, name: str, poll_seconds: float = 0.2
) -> str:
    """Run ``argv`` as one process per environment, joined on 127.0.0.1 and stopped after ``timeout`` seconds; returns
    what process 0 printed. A failure stops the others: a `JaxmlpError` beginning with ``name``."""
    processes = len(environments)
    coordinator = f"127.0.0.1:{free_port()}"
    with contextlib.ExitStack() as stack:
        outs = [stack.enter_context(tempfile.TemporaryFile("w+")) for _ in environments]
        logs = [stack.enter_context(tempfile.TemporaryFile("w+")) for _ in environments]
        running: list[subprocess.Popen[str]] = []
        stack.callback(workers.stop, running)
        for i, env in enumerate(environments):
            child = workers.Child(f"process {i} of {processes}", argv, rank_environment(i, processes, coordinator, env))
            running.append(workers.start(child, capture=False, stdout=outs[i], stderr=logs[i]))
        if (failed := _watch(running, logs, timeout, poll_seconds)) is not None:
            i, code = failed
            raise JaxmlpError(f"{name}: {_failure(i, processes, code, logs[i])}")
        outs[0].seek(0)
        return outs[0].read()


def _watch(
    running: Sequence[subprocess.Popen[str]], logs: Sequence[IO[str]], timeout: float, poll_seconds: float
) -> tuple[int, int] | None:
    """Wait for every process: None once all exit 0, else the first to fail (index, exit code; a killed one first:
    the others follow it) with all stopped; a `JaxmlpError` past ``timeout`` seconds, all stopped."""
    deadline = time.monotonic() + timeout
    while True:
        if time.monotonic() > deadline:
            workers.stop(running)
            raise JaxmlpError(
                f"the {len(running)} processes ran past their time limit of {timeout:g} s and were "
                "stopped (a deadlocked collective?): give a longer --timeout if the run needs it"
            )
        codes = [p.poll() for p in running]  # every one polled, each time
        if all(code == 0 for code in codes):
            return None
        if failed := [(i, code) for i, code in enumerate(codes) if code is not None and code != 0]:
            workers.stop(running)
            return min(failed, key=lambda f: (f[1] > 0, f[0]))
        time.sleep(poll_seconds)


def _failure(i: int, processes: int, code: int, log: IO[str]) -> JaxmlpError:
    log.seek(0)
    said = last_error_line(log.read())
    last = f" (it said: {said[-300:]})" if said else ""
    return JaxmlpError(f"process {i} of {processes} {workers.how(code)}{last}; stopped the others")


JOBS = {
    "Open MPI": (("OMPI_MCA_ess_base_jobid",), ("PMIX_NAMESPACE",)),
    "SLURM": (("SLURM_JOB_ID", "SLURM_STEP_ID"),),
}
"""Each cluster launcher's variables that one launch's ranks share, the first set in full wins."""


@dataclass(frozen=True)
class Ranks:
    """This process's place among a cluster launcher's ranks: its rank, their count, its node and ``job``."""

    rank: int
    size: int
    node: str
    job: str

    @classmethod
    def found(cls) -> Ranks | None:
        """This process's ranks under mpirun or srun (None: alone)."""
        joined = rank()
        if joined is None or launcher() == OWN:
            return None
        return cls(joined[0], joined[1], socket.gethostname(), job_key(launcher(), os.environ))

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
