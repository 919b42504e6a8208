"""`jaxmlp sweep explain A B`: the processes behind an explanation, each release's first recording its program and a
trace. The comparison is `jaxmlp.results.sweep.explain`'s."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from jaxmlp.errors import JaxmlpError
from jaxmlp.measure import workers
from jaxmlp.measure.environments import environments, envs
from jaxmlp.measure.records import ProcessResult
from jaxmlp.measure.sweep.matrix import Runner, Say, UnknownFlag, round_order, run_worker
from jaxmlp.measure.sweep.settings import Matrix, Measuring
from jaxmlp.measure.sweep.worker import PROFILED_CALLS, n_calls


@dataclass(frozen=True)
class Explain:
    """Two releases (``a`` the earlier, as given) and the one workload (a built-in name or a ``file.py:make``)."""

    a: str
    b: str
    workload: str

    def __post_init__(self) -> None:
        if self.a == self.b:
            raise JaxmlpError("A and B are the same release: name two")


@dataclass(frozen=True)
class Explained:
    """What an explanation's processes gave: every process of each release, the first's facts and trace."""

    processes: dict[str, list[ProcessResult]]
    traces: dict[str, Path]
    traced_calls: int


def pythons_for(labels: tuple[str, str], matrix: Matrix, say: Say = print) -> dict[str, str]:
    """Each release's python: a hand-made one, this interpreter, else its environment (made where missing)."""
    import jax

    out = {label: matrix.hand_made[label] for label in labels if label in matrix.hand_made}
    for label in labels:
        here = matrix.source == envs.INDEX and label == jax.__version__  # a wheel folder's build is its own
        if label not in out and here and not envs.is_made(label, matrix.envs):
            out[label] = sys.executable
    if rest := [label for label in labels if label not in out]:
        out.update({k: v for k, v in environments(dataclasses.replace(matrix, hand_made={}), rest, say).items()})
    return out


def run(
    explain: Explain,
    measuring: Measuring,
    matrix: Matrix,
    trace_root: Path,
    say: Say = print,
    tick: Callable[[str], None] | None = None,
) -> Explained:
    """``matrix.processes`` processes of each release (at least 1), in rotating order; the first of each profiled."""
    if len(matrix.xla_flags) > 1:
        raise JaxmlpError("explain takes one --xla-flags value (the setting both releases run with)")
    flags = matrix.xla_flags[0] if matrix.xla_flags else ""
    labels = (explain.a, explain.b)
    pythons = pythons_for(labels, matrix, say)
    measuring = dataclasses.replace(measuring, workloads=(explain.workload,))
    processes: dict[str, list[ProcessResult]] = {label: [] for label in labels}
    traces = {label: trace_root / label for label in labels}
    limit = matrix.timeout or workers.FIRST_SECONDS
    with envs.jaxmlp_path() as path:
        for round_ in range(max(1, matrix.processes)):
            for label in round_order(list(labels), round_):
                asked = (
                    measuring
                    if round_
                    else dataclasses.replace(measuring, program_facts=True, profile_dir=str(traces[label]))
                )
                try:
                    result = run_worker(Runner(label, pythons[label], asked, flags, 1 if flags else 0), path, limit)
                except UnknownFlag as e:
                    raise JaxmlpError(f"flag unknown in {label} ({e}): nothing to explain with it") from None
                except workers.ChildFailed as e:
                    raise JaxmlpError(f"not measured: {e}; nothing to explain without it") from None
                processes[label].append(result)
                if tick:
                    tick(label)
    name = measuring.names[0]
    return Explained(processes, traces, min(n_calls(measuring, name), PROFILED_CALLS))
