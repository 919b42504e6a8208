"""A neighbour put on purpose beside the worker processes (``--noise hog``) that never outlives the command."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator

from jaxmlp import errors
from jaxmlp.errors import JaxmlpError
from jaxmlp.measure import workers

NOISES = ("none", "hog")
"""``none``: the machine as it is; ``hog``: a busy loop on the workers' CPU for the whole run."""
LOOP = "import os, sys\nos.sched_setaffinity(0, {int(sys.argv[1])})\nwhile True:\n    pass\n"


def check(noise: str, cpu: int | None) -> None:
    """A noise jaxmlp knows, and a hog only with the workers pinned to a CPU this process may run on."""
    errors.one_of("--noise", noise, NOISES)
    if noise == "hog" and cpu is None:
        raise JaxmlpError("--noise hog needs --pin-cpu N: the busy loop runs on the workers' CPU, N")
    allowed = os.sched_getaffinity(0) if noise == "hog" and hasattr(os, "sched_getaffinity") else set()
    if allowed and cpu not in allowed:
        raise JaxmlpError(
            f"--pin-cpu {cpu} is not a CPU this process may run on: give one of {', '.join(map(str, sorted(allowed)))}"
        )


@contextlib.contextmanager
def neighbour(noise: str, cpu: int | None) -> Iterator[None]:
    """While inside: the ``noise`` asked for (`NOISES`), ended on leaving, however it is left."""
    check(noise, cpu)
    if noise == "none":
        yield
        return
    child = subprocess.Popen(workers.guarded([sys.executable, "-c", LOOP, str(cpu)]))
    try:
        yield
    finally:
        child.kill()
        child.wait()
