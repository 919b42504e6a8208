"""Data-parallel scaling (``jaxmlp scaling``): the sharded epoch, step and compile time for each device count N and
process count P, fresh processes each, on this machine or a cluster's processes under mpirun or srun."""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Sequence
from pathlib import Path

from jaxmlp import errors, registry
from jaxmlp.errors import EXIT_FAILED, JaxmlpError, keeping
from jaxmlp.flows import Filed
from jaxmlp.measure import distributed, scaling, workers
from jaxmlp.measure.records import ProcessResult
from jaxmlp.measure.scaling import Scaling
from jaxmlp.measure.train import check_batch_size
from jaxmlp.report.text import text_summary
from jaxmlp.results.schema.scaling import document
from jaxmlp.results.store.frames import benchmark_rows
from jaxmlp.results.store.writing import ResultsStore, check_folder, new_trace_run
from jaxmlp.results.tables import ALL_REDUCE, trace_share

TRACES = "traces"
"""The folder under --out where each N > 1's traced epoch goes (a TensorBoard logdir: `jaxmlp tensorboard`)."""
Counts = tuple[int, ...]
Rank = tuple[int, int] | None  # this process's rank among a cluster's (None: not in one)


def process_counts(asked: Sequence[int] | None, cluster: tuple[int, int] | None) -> tuple[int, ...]:
    """The process counts to measure: as asked, else 1; under a cluster launcher of P processes, 1 and P only."""
    for p in asked or ():
        errors.at_least("--processes", p, 1)
    if cluster is None:
        return tuple(asked or (1,))
    size = cluster[1]
    if asked and not set(asked) <= {1, size}:
        raise JaxmlpError(
            f"--processes {' '.join(map(str, asked))}: under {distributed.launcher()} with {size} "
            f"processes only 1 and {size} can be measured: give --processes 1 {size}, or run jaxmlp "
            "scaling without the launcher (its own processes on this machine)"
        )
    return tuple(asked or (1, size))


def measure(
    *,
    settings: Scaling,
    devices: Sequence[int] | None,
    processes: Sequence[int] | None,
    timeout: float | None,
    out: Path,
) -> Filed:
    """``settings`` measured on each device count of ``devices`` (None: the backend's) with each process count of
    ``processes`` that divides it, the results saved under ``out`` and each N > 1's traced epoch in its `TRACES`."""
    for n in devices or ():
        errors.at_least("--devices", n, 1)
    joined = distributed.rank()
    cluster = joined if distributed.launcher() not in (None, distributed.OWN) else None
    counts = process_counts(processes, cluster)
    if timeout is not None:
        errors.positive_finite("--timeout", timeout)
    if settings.limit is not None:
        check_batch_size(settings.batch_size, settings.limit, fixed=True)
    quiet = cluster is not None and cluster[0] != 0  # one of a cluster's processes: its worker joins process 0's
    if not quiet:
        check_folder(out, "--out")
    with contextlib.redirect_stdout(open(os.devnull, "w")) if quiet else contextlib.nullcontext():  # noqa: SIM115
        return _measure(settings, _devices(settings.backend, devices), counts, timeout, out, cluster)


def _devices(backend: str, asked: Sequence[int] | None) -> tuple[int, ...]:
    """The device counts asked for (else the backend's default), checked against the devices visible."""
    visible = scaling.visible_devices(backend)
    devices = tuple(asked or scaling.default_devices(backend, visible))
    if backend == "gpu" and max(devices) > visible:
        raise JaxmlpError(
            f"--devices {max(devices)} asks for more GPUs than the {visible} visible: choose at most {visible}"
        )
    if backend == "tpu" and devices != (visible,):
        raise JaxmlpError(
            f"--devices {' '.join(map(str, devices))}: on a TPU host jaxmlp scaling measures all "
            f"{visible} chips visible: give --devices {visible}, or leave it out"
        )
    if backend != "cpu" and visible == 1:
        print(f"jaxmlp scaling: one {backend.upper()} visible: N = 1 only (scaling needs more than one)")
    return devices


def _measure(
    settings: Scaling, devices: Counts, processes: Counts, timeout: float | None, out: Path, cluster: Rank
) -> Filed:
    """The pairs of ``devices`` and ``processes`` measured, said first with each process's time limit and the pairs
    left out; in a cluster its processes measure its P together, then process 0 the rest alone and files them."""
    pairs, left = scaling.plan(devices, processes)
    speaker = cluster is None or cluster[0] == 0
    if cluster is not None:  # the cluster's processes all run its P together, first; then process 0 alone the rest
        pairs = [pair for pair in pairs if pair[1] > 1] + ([pair for pair in pairs if pair[1] == 1] if speaker else [])
    if not pairs:
        raise JaxmlpError("no device count splits evenly over the process counts asked for: " + "; ".join(left))
    say = functools.partial(print, flush=True)
    counts = f"processes {', '.join(map(str, processes))}"
    how = counts if processes != (1,) else "one process each"
    how = f"{counts} ({distributed.launcher()}'s for P > 1)" if cluster else how
    say(
        f"jaxmlp scaling: the sharded pipeline on {', '.join(map(str, devices))} {settings.backend} device(s), "
        f"{how}, fresh processes each; {registry.dataset_label(settings.dataset)}"
    )
    first = f"{workers.FIRST_SECONDS:.0f} s for the first, then {workers.DERIVED_LIMIT}"
    say(f"Time limit of each process: {first if timeout is None else f'{timeout:g} s'} (--timeout)")
    for line in left:
        say(line)

    def trace_dir(these: Scaling) -> str | None:  # process 0 traces, the others do not
        return str(new_trace_run(out / TRACES, f"scaling-N{these.devices}-P{these.processes}")) if speaker else None

    def traced(folder: str) -> dict[str, object]:
        return trace_share(folder, ALL_REDUCE)

    def partial(said: str) -> Path:
        return ResultsStore(out).save(document(results, partial=said))

    results: list[ProcessResult] = []
    with keeping(results if speaker else [], f"{len(pairs)} cells", lambda n: f"{n} cells measured", partial):
        _, failures = scaling.run(pairs, settings, say, timeout, cluster is not None, trace_dir, traced, results)
    path = None
    if results and speaker:  # what was measured is kept, whatever failed after
        doc = document(results)
        rows, _ = benchmark_rows(doc)
        print(text_summary(rows))
        path = ResultsStore(out).save(doc)
        print(f"Saved {path}")
    return Filed(path, EXIT_FAILED if failures else 0, tuple(failures))
