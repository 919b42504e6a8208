"""The jax/jaxlib version sweep: worker processes in rotating order, one environment per version, no torch.

Words, each with one meaning: a *process* is one worker process, measuring in a fresh interpreter of its
version's environment; its value is one *sample*. A *round* runs one process per version, and the order
rotates from round to round (A B C, B C A, C A B, ...); ``--processes N`` runs N rounds, so N samples a
version. A *trial* (``trials``) is one whole A/A and injected-slowdown comparison.

``python -m jaxmlp.measure.sweep run --env 0.6.2=/path/to/python ...`` measures, in each process: compile time, the
first epoch and the steady-state epoch (median of the later ones) of the ``batched`` and ``scan`` pipelines,
and the jitted step. Each version's samples become a pytest-benchmark JSON file (`SweepDocument`), so
`jaxmlp compare` and the report read them like any other benchmark.

``python -m jaxmlp.measure.sweep trials`` proves the detector on this machine: one version against itself (A/A) and
against itself slowed down by a known amount with the test hook ``--inject-slowdown`` (recorded in every
result).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import time

from jaxmlp.registry import DATASETS, SWEEP_PIPELINES
from jaxmlp.results import layout
from jaxmlp.results.records import (
    PipelineTimes,
    ProcessResult,
    StepTimes,
    SweepDocument,
    Trial,
    TrialsDocument,
    TrialSettings,
)
from jaxmlp.stats import ALPHA, THRESHOLD

# --- inside a worker process (any supported jax version) --------------------------------


def timed_with_hook(fn, inject_slowdown: float = 0.0, clock=time.perf_counter):
    """``fn()`` (which returns once its result is ready) and its seconds. The test hook ``inject_slowdown`` then
    keeps this core busy inside the timed region until it lasts ``1 + inject_slowdown`` times as long: a known,
    recorded slowdown. It spins on the clock rather than sleeping, as slower work would: a sleeping core idles,
    which slows what runs next and would make the injected change larger than the one recorded."""
    start = clock()
    result = fn()
    seconds = clock() - start
    if inject_slowdown:
        end = start + seconds * (1 + inject_slowdown)
        while clock() < end:
            pass
        seconds = clock() - start
    return result, seconds


def measure_process(
    dataset: str = "mnist",
    data_dir: str | None = None,
    limit: int | None = None,
    pipelines=SWEEP_PIPELINES,
    epochs: int = 4,
    timed_steps: int = 50,
    inject_slowdown: float = 0.0,
) -> ProcessResult:
    """One process's measurements. ``inject_slowdown`` (the test hook) stretches every timed epoch and step
    by that fraction of its own duration (0.10: 10% slower), so a detector can be checked against a known change."""
    import jax
    import numpy as np

    from jaxmlp.measure.environment import metadata
    from jaxmlp.model import LAYER_SIZES, one_hot
    from jaxmlp.pipelines.epochs import CompiledStep, make_epoch
    from jaxmlp.pipelines.mnist import load_arrays

    train, _ = load_arrays(dataset, data_dir, limit)
    device = jax.devices()[0]
    # The tutorial's shapes and scale, drawn by numpy: eager PRNG initialisation compiles dozens of tiny
    # programs (about 2 s a process) and its values do not change how long an epoch takes.
    rng = np.random.default_rng(0)
    scale = np.float32(1e-2)
    params = jax.device_put(
        [(scale * rng.standard_normal((n, m), np.float32), scale * rng.standard_normal(n, np.float32))
         for m, n in zip(LAYER_SIZES[:-1], LAYER_SIZES[1:])],
        device,
    )  # fmt: skip
    meta = {**metadata(device), "injected_slowdown": inject_slowdown, "dataset": dataset, "samples": len(train),
            "epochs": epochs, "batch_size": 128}  # fmt: skip
    times: dict[str, PipelineTimes] = {}
    for pipeline in pipelines:
        epoch = make_epoch(pipeline, train, batch_size=128, device=device)
        compile_seconds = epoch.compile(params)
        epoch_times = [timed_with_hook(lambda epoch=epoch: epoch(params), inject_slowdown)[1] for _ in range(epochs)]
        times[pipeline] = PipelineTimes.of(compile_seconds, epoch_times)
    if not timed_steps:
        return ProcessResult(meta, times)
    step = CompiledStep()
    jax.clear_caches()  # the pipelines compiled this very step: measure a real compile
    compile_seconds = step.compile(params, [128])
    x = jax.device_put(np.asarray(train.data[:128], np.float32).reshape(128, -1), device)
    y = jax.device_put(one_hot(np.asarray(train.targets[:128]), 10), device)
    jax.block_until_ready(step(params, x, y))
    steps = [
        timed_with_hook(lambda: jax.block_until_ready(step(params, x, y)), inject_slowdown)[1]
        for _ in range(timed_steps)
    ]
    return ProcessResult(meta, times, StepTimes(compile_seconds, statistics.median(steps)))


# --- the orchestrator ---------------------------------------------------------------------


def run_worker(python: str, worker_args: list[str]) -> ProcessResult:
    """One worker process's measurements, on the CPU (the version environments hold CPU-only jaxlib)."""
    command = [python, "-m", "jaxmlp.measure.sweep", "worker", *worker_args]
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "JAX_PLATFORMS": "cpu"})
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or ["no output"]
        raise RuntimeError(f"worker {' '.join(command)} failed: {tail[0]}")
    return ProcessResult.from_json(json.loads(done.stdout.strip().splitlines()[-1]))


def round_order(labels: list[str], round_: int) -> list[str]:
    """The labels' order in one round: each round runs every label once, the order rotating by one a round
    (A B C, B C A, C A B, ...), so that drift over time and the position in a round fall on all labels alike."""
    shift = round_ % len(labels)
    return labels[shift:] + labels[:shift]


def run_rounds(
    runners: dict[str, tuple[str, list[str]]], processes: int, progress=None
) -> dict[str, list[ProcessResult]]:
    """``processes`` rounds; in each, one worker per label, in `round_order`: ``processes`` samples a label."""
    results: dict[str, list[ProcessResult]] = {label: [] for label in runners}
    for round_ in range(processes):
        for label in round_order(list(runners), round_):
            python, args = runners[label]
            results[label].append(run_worker(python, args))
            if progress:
                progress(round_, label)
    return results


def to_document(label: str, processes: list[ProcessResult]) -> SweepDocument:
    """One version's processes as its sweep document (a pytest-benchmark file; a raw sample per process)."""
    return SweepDocument(label, tuple(processes), datetime.datetime.now(datetime.UTC).isoformat())


def _worker_args(args) -> list[str]:
    out = ["--dataset", args.dataset, "--epochs", str(args.epochs), "--pipelines", args.pipelines]
    if args.data_dir:
        out += ["--data-dir", args.data_dir]
    if args.limit:
        out += ["--limit", str(args.limit)]
    if args.pin_cpu is not None:
        out += ["--pin-cpu", str(args.pin_cpu)]
    return out


def _progress(total: int):
    from tqdm import tqdm

    bar = tqdm(total=total, unit="process", disable=None, file=sys.stderr)
    start = time.monotonic()
    done = [0]

    def tick(round_, label):
        done[0] += 1
        bar.set_postfix_str(f"round {round_ + 1}, {label}")
        bar.update()
        if bar.disable:  # not a terminal: a plain line per process, for logs
            print(f"  {done[0]}/{total} processes ({label}, round {round_ + 1}), {time.monotonic() - start:.0f} s",
                  file=sys.stderr, flush=True)  # fmt: skip

    return tick, bar


def run_command(args) -> int:
    from jaxmlp.results.store import ResultsStore, write_json_new

    runners = {}
    for spec in args.env:
        label, _, python = spec.partition("=")
        runners[label] = (python or sys.executable, _worker_args(args))
    tick, bar = _progress(args.processes * len(runners))
    print(f"Sweep: {', '.join(runners)}; {args.processes} processes each, in rotating order", flush=True)
    results = run_rounds(runners, args.processes, tick)
    bar.close()
    with ResultsStore(args.out).new_folder(layout.SWEEP) as folder:
        for label, processes in results.items():
            write_json_new(folder.path / layout.sweep_file(label), to_document(label, processes).to_json())
    print(f"Wrote {len(results)} files into {folder.path}")
    return 0


def trials_command(args) -> int:
    """A/A and injected-slowdown trials of one version against itself."""
    from jaxmlp.results.store import ResultsStore, write_json_new
    from jaxmlp.stats import compare

    base = [*_worker_args(args), "--timed-steps", "0"]
    runners = {"A": (sys.executable, base), "A2": (sys.executable, base),
               "H": (sys.executable, [*base, "--inject-slowdown", str(args.inject_slowdown)])}  # fmt: skip
    pipeline = args.pipelines.split(",")[0]
    tick, bar = _progress(args.trials * args.processes * len(runners))
    trials = []
    for trial in range(args.trials):
        results = run_rounds(runners, args.processes, tick)
        values = {k: tuple(p.pipelines[pipeline].steady_seconds for p in v) for k, v in results.items()}
        injected = compare(values["A"], values["H"], args.threshold, args.alpha)
        aa = compare(values["A"], values["A2"], args.threshold, args.alpha)
        trials.append(Trial(trial, values, injected, aa))
        bar.write(
            f"trial {trial + 1}: injected ratio {injected.ratio:.3f} p {injected.p_slower:.2g} -> {injected.verdict}; "
            f"A/A ratio {aa.ratio:.3f} p {aa.p_slower:.2g} -> {aa.verdict}"
        )
    bar.close()
    meta = results["A"][0].metadata
    settings = TrialSettings(pipeline=pipeline, processes_per_side=args.processes, trials=args.trials,
                             inject_slowdown=args.inject_slowdown, threshold=args.threshold, alpha=args.alpha,
                             limit=args.limit, epochs=args.epochs, dataset=args.dataset)  # fmt: skip
    doc = TrialsDocument(meta, settings, tuple(trials))
    with ResultsStore(args.out).new_folder(layout.DETECTOR) as folder:
        write_json_new(folder.path / layout.TRIALS_FILE, doc.to_json())
    injected_ratio, aa_ratio = (
        statistics.median(getattr(t, side).ratio for t in trials) for side in ("injected", "aa")
    )
    print(
        f"Injected {args.inject_slowdown:.0%} slowdown flagged in {doc.injected_flagged}/{args.trials} trials "
        f"(median ratio {injected_ratio:.3f}); A/A flagged in {doc.aa_flagged}/{args.trials} "
        f"(median ratio {aa_ratio:.3f}); {args.processes} processes a side; jax {meta['jax']}. "
        f"Wrote {folder.path / layout.TRIALS_FILE}"
    )
    return 0


def worker_command(args) -> int:
    if args.pin_cpu is not None:  # before JAX starts: XLA sizes its thread pool from this process's affinity
        os.sched_setaffinity(0, {args.pin_cpu})
    out = measure_process(args.dataset, args.data_dir, args.limit, tuple(args.pipelines.split(",")), args.epochs,
                          args.timed_steps, args.inject_slowdown)  # fmt: skip
    print(json.dumps(out.to_json()))
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jaxmlp.measure.sweep", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)

    def common(p):
        p.add_argument("--dataset", choices=DATASETS, default="mnist")
        p.add_argument("--data-dir", default=None)
        p.add_argument("--limit", type=int, default=None, help="use the first N training images")
        p.add_argument("--epochs", type=int, default=4, help="epochs per process: the first, then the steady state")
        p.add_argument("--pipelines", default=",".join(SWEEP_PIPELINES))
        p.add_argument(
            "--pin-cpu", type=int, default=None, help="pin every worker to this one CPU (steadier, single-threaded)"
        )

    worker = commands.add_parser("worker", help="measure in this process and print one JSON line")
    common(worker)
    worker.add_argument(
        "--inject-slowdown", type=float, default=0.0, help="test hook: stretch timings by this fraction"
    )
    worker.add_argument("--timed-steps", type=int, default=50, help="jitted steps to time (0: skip the step)")
    worker.set_defaults(run=worker_command)

    run = commands.add_parser("run", help="worker processes in rounds over versions' environments, rotating order")
    common(run)
    run.add_argument("--env", action="append", required=True, help="LABEL=PYTHON of one version's environment")
    run.add_argument("--processes", type=int, default=6, help="processes (samples) per version (default: 6)")
    run.add_argument("--out", default=layout.RESULTS_DIR, help="results folder (default: %(default)s)")
    run.set_defaults(run=run_command)

    trials = commands.add_parser("trials", help="A/A and injected-slowdown trials of this environment's version")
    common(trials)
    trials.add_argument("--trials", type=int, default=20, help="A/A and injected comparisons (default: 20)")
    trials.add_argument("--processes", type=int, default=14, help="processes a side per trial (default: 14)")
    trials.add_argument("--inject-slowdown", type=float, default=0.10)
    trials.add_argument("--threshold", type=float, default=THRESHOLD)
    trials.add_argument("--alpha", type=float, default=ALPHA)
    trials.add_argument("--out", default=layout.RESULTS_DIR, help="results folder (default: %(default)s)")
    # Short runs of many short epochs: the setting that met the detector's goals on a 2-core machine (README).
    trials.set_defaults(run=trials_command, dataset="synthetic", limit=2000, epochs=16, pipelines="batched")

    args = parser.parse_args(argv)
    from jaxmlp.errors import JaxmlpError

    try:
        if args.command != "worker" and args.epochs < 2:
            raise JaxmlpError("--epochs must be at least 2: the first epoch is recorded apart from the steady state")
        for option in ("processes", "trials"):
            if getattr(args, option, 1) < 1:
                raise JaxmlpError(f"--{option} must be at least 1, got {getattr(args, option)}")
        if not getattr(args, "inject_slowdown", 0) >= 0:
            raise JaxmlpError(f"--inject-slowdown must be 0 or more (0.10: 10% slower), got {args.inject_slowdown}")
        return args.run(args)
    except (JaxmlpError, RuntimeError) as e:
        print(f"jaxmlp sweep: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
