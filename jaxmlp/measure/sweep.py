"""The jax/jaxlib version sweep (``jaxmlp sweep``): worker processes in rotating order, one environment per release.

Words, each with one meaning: a *workload* is what a worker compiles once and then times (`jaxmlp.measure.workload`:
the MLP's built-in epochs and step, or the user's own function). A *cell* is one release run with one setting of
``XLA_FLAGS`` (none, or one ``--xla-flags`` value). A *process* is one worker process, measuring in a fresh
interpreter of its release's environment; its value is one *sample*. A *round* runs one process per cell, the
order rotating from round to round (A B C, B C A, C A B, ...); ``--processes N`` runs N rounds, so N samples a
cell. Before the rounds, one *probe process* per cell checks that it runs (a flag the release does not know is
reported for that cell), gives the cost estimate and the values every cell's results are checked against.

- ``jaxmlp sweep [run] 0.6.2 0.8.3 ...``: the matrix; a pytest-benchmark file per cell (`SweepDocument`), so
  `jaxmlp compare` and the report read them like any other benchmark.
- ``jaxmlp sweep bisect GOOD BAD``: the first release between two whose workload is flagged slower (or faster).
- ``jaxmlp sweep trials``: the detector's check on this machine: a release against itself (A/A) and against
  itself slowed down by a known amount with the test hook ``--inject-slowdown`` (recorded in every result).
- ``python -m jaxmlp.measure.sweep worker``: one worker process (what the others start; no torch, no pandas).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import itertools
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from jaxmlp.errors import JaxmlpError, last_error_line
from jaxmlp.measure.workload import parse_spec, spec_name, workload_name
from jaxmlp.pipelines.mnist import default_cache_dir
from jaxmlp.registry import DATASETS, SWEEP_PIPELINES, SWEEP_VERSIONS, SWEEP_WORKLOADS
from jaxmlp.results import layout
from jaxmlp.results.records import (
    Cell,
    CellsDocument,
    ProcessResult,
    SweepDocument,
    Trial,
    TrialsDocument,
    TrialSettings,
)
from jaxmlp.stats import ALPHA, THRESHOLD

TOLERANCE = 1e-3
"""How far (relative) a workload's values may differ between cells before its row says "results differ"."""

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


def is_builtin(workload: str) -> bool:
    return workload in SWEEP_WORKLOADS


def measure_process(
    workloads: Sequence[str] = SWEEP_WORKLOADS,
    dataset: str = "mnist",
    data_dir: str | None = None,
    limit: int | None = None,
    epochs: int = 4,
    calls: int = 50,
    inject_slowdown: float = 0.0,
) -> ProcessResult:
    """One process's measurements of each workload (a built-in name or a user spec), in the order given: the
    built-in epochs are called ``epochs`` times, the step and user workloads ``calls`` times. ``inject_slowdown``
    (the test hook) stretches every timed call by that fraction of its own duration (0.10: 10% slower)."""
    import jax

    from jaxmlp.measure import workload as w
    from jaxmlp.measure.environment import metadata

    builtin = [name for name in workloads if is_builtin(name)]
    samples = None
    made: dict[str, w.Workload] = {}
    if builtin:
        from jaxmlp.pipelines.mnist import load_arrays

        train, _ = load_arrays(dataset, data_dir, limit)
        samples = len(train)
        made = {x.name: x for x in w.builtin(builtin, train)}
    for spec in (s for s in workloads if not is_builtin(s)):
        user = w.from_spec(spec)
        if user.name in made:
            raise JaxmlpError(f"workload {spec!r} is named {user.name!r} like another workload: rename its file")
        made[user.name] = user
    device = jax.devices()[0]
    meta = {**metadata(device), "injected_slowdown": inject_slowdown, "dataset": dataset if builtin else None,
            "samples": samples, "epochs": epochs, "calls": calls, "batch_size": w.BATCH_SIZE,
            "workload_source": ",".join(workloads)}  # fmt: skip
    times = {}
    for name in map(w.workload_name, workloads):  # in the order given
        n = epochs if name in SWEEP_PIPELINES else calls
        times[name] = w.measure(made[name], n, lambda fn: timed_with_hook(fn, inject_slowdown))
    return ProcessResult(meta, times)


def worker_command(args) -> int:
    if args.pin_cpu is not None:  # before JAX starts: XLA sizes its thread pool from this process's affinity
        os.sched_setaffinity(0, {args.pin_cpu})
    out = measure_process(args.workload or SWEEP_WORKLOADS, args.dataset, args.data_dir, args.limit, args.epochs,
                          args.calls, args.inject_slowdown)  # fmt: skip
    print(json.dumps(out.to_json()))
    return 0


# --- cells and their worker processes -----------------------------------------------------------------------


@dataclass(frozen=True)
class Runner:
    """How to start one cell's worker processes: its environment's python, its XLA flags, the worker's options."""

    label: str  # the release, or the name given with --env LABEL=PYTHON
    python: str
    args: tuple[str, ...]
    xla_flags: str = ""
    flags_index: int = 0  # which --xla-flags value (from 1); 0: none

    @property
    def name(self) -> str:
        return f"{self.label} [{self.xla_flags}]" if self.xla_flags else self.label


class UnknownFlag(Exception):
    """XLA refused a flag in XLA_FLAGS: this release does not know it."""


def run_worker(runner: Runner, pythonpath: str | None = None) -> ProcessResult:
    """One worker process's measurements, on the CPU (the version environments hold CPU-only jaxlib), with the
    cell's XLA flags and nothing else of the caller's XLA_FLAGS."""
    command = [runner.python, "-m", "jaxmlp.measure.sweep", "worker", *runner.args]
    env = {key: value for key, value in os.environ.items() if key != "XLA_FLAGS"}
    env["JAX_PLATFORMS"] = "cpu"
    env.setdefault("JAXMLP_CACHE_DIR", str(default_cache_dir()))  # the prepared MNIST files, shared with this one
    if runner.xla_flags:
        env["XLA_FLAGS"] = runner.xla_flags
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (pythonpath, env.get("PYTHONPATH")) if p)
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    lines = done.stderr.strip().splitlines()
    unknown = [line for line in lines if "Unknown flag" in line]
    if done.returncode != 0 and unknown:
        raise UnknownFlag(unknown[-1].split("] ", 1)[-1].strip())
    if done.returncode != 0:
        said = last_error_line(done.stderr) or f"exit code {done.returncode}"
        raise JaxmlpError(f"{runner.name}: the worker failed: {said}")
    result = ProcessResult.from_json(json.loads(done.stdout.strip().splitlines()[-1]))
    warned = [line.split("] ", 1)[-1].strip() for line in lines if "no longer supported" in line]
    if warned:
        result = dataclasses.replace(result, metadata={**result.metadata, "xla_warning": warned[-1]})
    return result


def round_order(labels: list[str], round_: int) -> list[str]:
    """The labels' order in one round: each round runs every label once, the order rotating by one a round
    (A B C, B C A, C A B, ...), so that drift over time and the position in a round fall on all labels alike."""
    shift = round_ % len(labels)
    return labels[shift:] + labels[:shift]


def run_rounds(
    runners: dict[str, Runner], processes: int, progress=None, pythonpath: str | None = None
) -> dict[str, list[ProcessResult]]:
    """``processes`` rounds; in each, one worker per runner, in `round_order`: ``processes`` samples a runner."""
    results: dict[str, list[ProcessResult]] = {name: [] for name in runners}
    for round_ in range(processes):
        for name in round_order(list(runners), round_):
            results[name].append(run_worker(runners[name], pythonpath))
            if progress:
                progress(round_, name)
    return results


@dataclass(frozen=True)
class Probed:
    """The probe processes' findings: the cells that run, what became of each, and the cost of one process."""

    runners: dict[str, Runner]
    cells: dict[str, Cell]
    seconds: dict[str, float]
    reference: dict[str, ProcessResult]


def probe(runners: Sequence[Runner], pythonpath: str | None = None, say=print) -> Probed:
    """One process per cell before the rounds: does it run, what XLA says of its flags, how long it takes."""
    ok: dict[str, Runner] = {}
    cells: dict[str, Cell] = {}
    seconds: dict[str, float] = {}
    reference: dict[str, ProcessResult] = {}
    for runner in runners:
        start = time.monotonic()
        try:
            result = run_worker(runner, pythonpath)
        except UnknownFlag as e:
            why = f"flag unknown to this release ({e})"
            say(f"  {runner.name}: not measured: {why}")
            cells[runner.name] = Cell(runner.label, runner.xla_flags, why, None)
            continue
        seconds[runner.name] = time.monotonic() - start
        note = str(result.metadata.get("xla_warning") or "")
        if note:
            say(f"  {runner.name}: XLA says: {note}")
        ok[runner.name] = runner
        reference[runner.name] = result
        cells[runner.name] = Cell(runner.label, runner.xla_flags, "ok",
                                  layout.sweep_file(runner.label, runner.flags_index), note)  # fmt: skip
    return Probed(ok, cells, seconds, reference)


def differences(reference: dict[str, ProcessResult], tolerance: float) -> dict[str, dict[str, str]]:
    """For each cell, the workloads whose values are not the first cell's (within ``tolerance``), and why."""
    names = list(reference)
    if not names:
        return {}
    base = reference[names[0]]
    out: dict[str, dict[str, str]] = {}
    for name in names[1:]:
        for workload, times in reference[name].workloads.items():
            other = base.workloads.get(workload)
            if other is None or other.output is None or times.output is None:
                continue
            why = other.output.differs(times.output, tolerance)
            if why:
                out.setdefault(name, {})[workload] = f"results differ from {names[0]}: {why}"
    return out


def to_document(label: str, processes: list[ProcessResult], differs: dict[str, str] | None = None) -> SweepDocument:
    """One cell's processes as its sweep document (a pytest-benchmark file; a raw sample per process)."""
    return SweepDocument(label, tuple(processes), datetime.datetime.now(datetime.UTC).isoformat(), differs or {})


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


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min"


def worker_args(args) -> list[str]:
    out = ["--dataset", args.dataset, "--epochs", str(args.epochs), "--calls", str(args.calls)]
    for spec in args.workload or ():
        out += ["--workload", spec if is_builtin(spec) else _absolute_spec(spec)]
    if args.data_dir:
        out += ["--data-dir", args.data_dir]
    if args.limit:
        out += ["--limit", str(args.limit)]
    if args.pin_cpu is not None:
        out += ["--pin-cpu", str(args.pin_cpu)]
    return out


def _absolute_spec(spec: str) -> str:
    """A file spec with an absolute path, so that a worker finds it wherever it starts."""
    where, attribute = parse_spec(spec)
    return f"{Path(where).resolve()}:{attribute}" if where.endswith(".py") else spec


def environments(args, versions: Sequence[str], say=print) -> dict[str, str]:
    """Each release's python (made first where missing, with the time that takes said before), plus --env ones."""
    from jaxmlp.measure import envs

    for version in versions:
        envs.check_release(version)
    missing = [v for v in versions if not envs.is_made(v, args.envs)]
    if missing:
        each, size = envs.install_seconds(args.envs), envs.env_megabytes(args.envs)
        cost = (f"about {size:.0f} MB each and {_minutes(each * len(missing))} in all, as the ones made here took"
                if each and size else "size and time unknown: none made here yet")  # fmt: skip
        say(f"Environments: {len(versions) - len(missing)} made, {len(missing)} to make ({', '.join(missing)}; "
            f"{cost})")  # fmt: skip
    pythons = {v: str(envs.make_env(v, args.envs, say)) for v in versions}
    for spec in args.env or ():
        label, _, python = spec.partition("=")
        if not label or not python:
            raise JaxmlpError(f"--env {spec!r}: give it as LABEL=PYTHON (a release's environment made by hand)")
        pythons[label] = python
    if not pythons:
        raise JaxmlpError("no releases to measure: name them (jaxmlp sweep 0.6.2 0.8.3) or give --env LABEL=PYTHON")
    return pythons


def runners_for(pythons: dict[str, str], args) -> list[Runner]:
    """The matrix: every release without XLA flags, then with each --xla-flags value (its own column)."""
    base = tuple(worker_args(args))
    flags = [""] + list(args.xla_flags or ())
    return [Runner(label, python, base, value, i) for i, value in enumerate(flags) for label, python in pythons.items()]


def measure_cells(runners: Sequence[Runner], args, say=print):
    """Probe every cell, say the cost, then run the rounds: (the cells' documents by name, the cells)."""
    from jaxmlp.measure.envs import jaxmlp_path

    with jaxmlp_path() as path:
        say(f"Probing {len(runners)} cell(s), one process each")
        probed = probe(runners, path, say)
        if not probed.runners:
            raise JaxmlpError("no cell could run: see the lines above")
        differs = differences(probed.reference, args.tolerance)
        for name, why in differs.items():
            for workload, text in why.items():
                say(f"  {name}: {workload}: {text} (marked 'results differ')")
        per_round = sum(probed.seconds.values())
        say(f"Measuring {len(probed.runners)} cell(s) x {args.processes} processes = "
            f"{len(probed.runners) * args.processes} processes, about {_minutes(per_round * args.processes)} "
            f"(from the probe processes), in rotating order")  # fmt: skip
        tick, bar = _progress(args.processes * len(probed.runners))
        results = run_rounds(probed.runners, args.processes, tick, path)
        bar.close()
    documents = {name: to_document(probed.runners[name].label, processes, differs.get(name))
                 for name, processes in results.items()}  # fmt: skip
    return documents, probed


def write_sweep(store_folder, kind: str, runners: dict[str, Runner], documents: dict[str, SweepDocument],
                cells: dict[str, Cell], final: Path | None = None) -> Path:  # fmt: skip
    """One sweep folder, atomically: a file per measured cell and cells.json (what became of every cell)."""
    from jaxmlp.results.store import ResultsStore, write_json_new

    with ResultsStore(store_folder).new_folder(kind, final) as folder:
        for name, doc in documents.items():
            runner = runners[name]
            write_json_new(folder.path / layout.sweep_file(runner.label, runner.flags_index), doc.to_json())
        write_json_new(folder.path / layout.CELLS_FILE, CellsDocument(tuple(cells.values())).to_json())
    return folder.path


def run_command(args) -> int:
    start = time.monotonic()
    versions = args.versions if args.versions or args.env else list(SWEEP_VERSIONS)
    pythons = environments(args, versions)
    runners = runners_for(pythons, args)
    documents, probed = measure_cells(runners, args)
    path = write_sweep(args.out, layout.SWEEP, probed.runners, documents, probed.cells)
    print(f"Wrote {len(documents)} files into {path} in {_minutes(time.monotonic() - start)}")
    return 0


# --- bisection ---------------------------------------------------------------------------------------------------


def bisect_command(args) -> int:
    from jaxmlp.measure import envs
    from jaxmlp.measure.bisection import answer_line, bisect, expected_releases
    from jaxmlp.measure.environment import metadata
    from jaxmlp.results.records import BisectDocument, BisectProbe
    from jaxmlp.results.store import ResultsStore, new_dir, write_json_new

    start = time.monotonic()
    for version in (args.good, args.bad):
        envs.check_release(version)
    if args.good == args.bad:
        raise JaxmlpError("GOOD and BAD are the same release: name two")
    if args.versions:
        known = sorted({envs.check_release(v.strip()) for v in args.versions.split(",") if v.strip()} |
                       {args.good, args.bad}, key=envs.version_key)  # fmt: skip
    else:
        known = envs.releases(envs.index_versions("jax"), envs.index_versions("jaxlib"))
    candidates = envs.between(known, args.good, args.bad)
    if envs.version_key(args.good) > envs.version_key(args.bad):
        candidates.reverse()
    if len(args.xla_flags or ()) > 1:
        raise JaxmlpError("bisect takes one --xla-flags value (the setting every probe runs with)")
    target, spec = _bisected(args.workload or [], args.on)
    args.workload = [spec]  # only the bisected workload is measured
    between = candidates[1:-1]
    print(f"Bisecting {len(between)} release(s) between {args.good} and {args.bad} ({', '.join(between) or 'none'}) "
          f"on the steady state of {target}: about {expected_releases(len(between))} releases measured, "
          f"{args.processes} processes each a probe")  # fmt: skip
    store = ResultsStore(args.out)
    store.folder.mkdir(parents=True, exist_ok=True)
    folder = new_dir(store.folder, layout.name(layout.BISECT))
    print(f"Probes go into {folder}")
    flags = args.xla_flags[0] if args.xla_flags else ""
    probes = itertools.count(1)

    def measure(names: list[str]) -> dict[str, list[float]]:
        pythons = environments(args, names)
        runners = [Runner(v, pythons[v], tuple(worker_args(args)), flags, 1 if flags else 0) for v in names]
        documents, probed = measure_cells(runners, args)
        missing = [r.name for r in runners if r.name not in documents]
        if missing:
            raise JaxmlpError(f"{', '.join(missing)} could not run ({probed.cells[missing[0]].status}): no bisection")
        write_sweep(folder, layout.SWEEP, probed.runners, documents, probed.cells,
                    final=folder / layout.probe_folder(next(probes)))  # fmt: skip
        for name, doc in documents.items():
            if target in doc.differs:
                print(f"  RESULTS DIFFER: {name}: {doc.differs[target]}")
        return {runner.label: [p.workloads[target].steady_seconds for p in documents[runner.name].processes]
                for runner in runners}  # fmt: skip

    def said(p: BisectProbe) -> None:
        medians = ", ".join(f"{r} {p.medians[r]:.4g} s" for r in p.releases)
        steps = "; ".join(f"{s.from_}→{s.to} {s.comparison.ratio:.3f} ({s.comparison.verdict})" for s in p.steps)
        print(f"probe {p.number}: {medians}; {steps} => {p.decision}", flush=True)

    try:
        result = bisect(candidates, measure, args.threshold, args.alpha, said)
    except BaseException:
        if not any(folder.iterdir()):  # no probe finished: leave nothing behind
            folder.rmdir()
        else:
            print(f"The finished probes stay in {folder}", file=sys.stderr)
        raise
    line = answer_line(result)
    settings = {"good": args.good, "bad": args.bad, "workload": target, "quantity": "steady state",
                "processes": args.processes, "threshold": args.threshold, "alpha": args.alpha, "xla_flags": flags,
                "dataset": args.dataset, "limit": args.limit, "epochs": args.epochs, "calls": args.calls,
                "pin_cpu": args.pin_cpu}  # fmt: skip
    seconds = time.monotonic() - start
    doc = BisectDocument(metadata(), settings, result, line, seconds)
    path = write_json_new(folder / layout.BISECT_FILE, doc.to_json())
    print(f"{line}\n({len(result.measured)} releases measured in {len(result.probes)} probe(s), "
          f"{_minutes(seconds)}; {path})")  # fmt: skip
    return 0


def _bisected(specs: Sequence[str], on: str | None) -> tuple[str, str]:
    """The workload a bisection measures, (its name, its spec): ``--on`` among the ``--workload`` values (or a
    built-in), else the first of them, else ``batched``."""
    named = {workload_name(s): s for s in specs}
    if on is None:
        return next(iter(named.items()), (SWEEP_WORKLOADS[0], SWEEP_WORKLOADS[0]))
    if on in named:
        return on, named[on]
    if is_builtin(on):
        return on, on
    if ":" in on or on.endswith(".py"):
        return spec_name(on), on
    known = ", ".join([*named, *SWEEP_WORKLOADS])
    raise JaxmlpError(f"--on {on!r} names no workload of this run ({known}): give its file with --workload")


# --- the detector's own check -----------------------------------------------------------------------------------


def trials_command(args) -> int:
    """A/A and injected-slowdown trials of one version against itself."""
    from jaxmlp.measure.envs import jaxmlp_path
    from jaxmlp.results.store import ResultsStore, write_json_new
    from jaxmlp.stats import compare

    target = (args.workload or ["batched"])[0]
    base = tuple(worker_args(argparse.Namespace(**{**vars(args), "workload": [target]})))
    hooked = (*base, "--inject-slowdown", str(args.inject_slowdown))
    runners = {"A": Runner("A", sys.executable, base), "A2": Runner("A2", sys.executable, base),
               "H": Runner("H", sys.executable, hooked)}  # fmt: skip
    name = workload_name(target)
    tick, bar = _progress(args.trials * args.processes * len(runners))
    trials = []
    with jaxmlp_path() as path:
        for trial in range(args.trials):
            results = run_rounds(runners, args.processes, tick, path)
            values = {k: tuple(p.workloads[name].steady_seconds for p in v) for k, v in results.items()}
            injected = compare(values["A"], values["H"], args.threshold, args.alpha)
            aa = compare(values["A"], values["A2"], args.threshold, args.alpha)
            trials.append(Trial(trial, values, injected, aa))
            bar.write(
                f"trial {trial + 1}: injected ratio {injected.ratio:.3f} p {injected.p_slower:.2g} -> "
                f"{injected.verdict}; A/A ratio {aa.ratio:.3f} p {aa.p_slower:.2g} -> {aa.verdict}"
            )
    bar.close()
    meta = results["A"][0].metadata
    settings = TrialSettings(workload=name, processes_per_side=args.processes, trials=args.trials,
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


def env_command(args) -> int:
    """Make (or find) each release's environment and check that a worker runs in it."""
    from jaxmlp.measure.envs import jaxmlp_path

    pythons = environments(args, args.versions)
    with jaxmlp_path() as path:
        for label, python in pythons.items():
            runner = Runner(
                label, python, ("--dataset", "synthetic", "--limit", "512", "--epochs", "2", "--calls", "2")
            )
            result = run_worker(runner, path)
            print(
                f"jax {label}: {python} runs (jax {result.metadata.get('jax')}, jaxlib {result.metadata.get('jaxlib')})"
            )
    return 0


# --- the command line ---------------------------------------------------------------------------------------------

COMMANDS = ("run", "bisect", "trials", "env", "worker")


def attach_flag_values(argv: Sequence[str]) -> list[str]:
    """``--xla-flags --xla_foo=1`` as ``--xla-flags=--xla_foo=1``: the value of --xla-flags starts with a dash,
    which argparse would take for an option of its own."""
    out: list[str] = []
    values = iter(argv)
    for arg in values:
        if arg == "--xla-flags":
            value = next(values, None)
            out.append(arg if value is None else f"{arg}={value}")
        else:
            out.append(arg)
    return out


def add_arguments(commands, integer: Callable = int, number: Callable = float) -> None:
    """The sweep's subcommands, under ``commands`` (the ``jaxmlp sweep`` parser's subparsers)."""

    def measuring(p, workload_help: str = "") -> None:
        p.add_argument("--workload", action="append", metavar="SPEC",
                       help="what to time, repeatable: a built-in (" + ", ".join(SWEEP_WORKLOADS) + "; default: all) "
                       "or your own, path/to/file.py:make or module:make (README: the workload contract)"
                       + workload_help)  # fmt: skip
        p.add_argument(
            "--dataset", choices=DATASETS, default="mnist", help="the built-ins' data (default: %(default)s)"
        )
        p.add_argument("--data-dir", default=None, help="MNIST's folder (default: $JAXMLP_DATA_DIR)")
        p.add_argument("--limit", type=integer, default=None, help="the built-ins use the first N training images")
        p.add_argument(
            "--epochs",
            type=integer,
            default=4,
            help="calls of each built-in epoch a process: the first, then the steady state (default: 4)",
        )
        p.add_argument("--calls", type=integer, default=50,
                       help="calls of the step and of your workloads a process (default: 50)")  # fmt: skip
        p.add_argument("--pin-cpu", type=integer, default=None,
                       help="pin every worker to this one CPU (steadier, single-threaded)")  # fmt: skip

    def matrix(p, hand_made: bool = True) -> None:
        p.add_argument("--processes", type=integer, default=6, help="processes (samples) a cell (default: 6)")
        p.add_argument("--xla-flags", action="append", metavar="FLAGS",
                       help="repeatable: each value is its own column of the matrix, every release run with "
                       "XLA_FLAGS=FLAGS besides without (e.g. --xla_cpu_use_thunk_runtime=false)")  # fmt: skip
        p.add_argument("--tolerance", type=number, default=TOLERANCE,
                       help="relative difference of values between cells beyond which a row says 'results differ' "
                       "(default: %(default)s)")  # fmt: skip
        p.add_argument(
            "--envs",
            type=Path,
            default=None,
            help="where the release environments live (default: $JAXMLP_ENVS, else ~/.cache/jaxmlp/envs)",
        )
        if hand_made:
            p.add_argument("--env", action="append", metavar="LABEL=PYTHON",
                           help="also measure an environment made by hand (repeatable)")  # fmt: skip
        p.add_argument("--out", default=layout.RESULTS_DIR, help="results folder (default: %(default)s)")

    run = commands.add_parser("run", help="the version matrix (the default subcommand)",
                              description="Measure each release (and each --xla-flags value) in its own environment: "
                              "worker processes in rotating order, a pytest-benchmark file a cell.")  # fmt: skip
    run.add_argument("versions", nargs="*", metavar="VERSION",
                     help=f"jax/jaxlib releases (default: {' '.join(SWEEP_VERSIONS)})")  # fmt: skip
    measuring(run)
    matrix(run)
    run.set_defaults(run=run_command)

    bisect = commands.add_parser("bisect", help="the first release between GOOD and BAD that is slower (or faster)",
                                 description="Bisect the releases between GOOD and BAD: each probe measures the ends "
                                 "and their midpoint together and keeps the half that holds the change, until the "
                                 "first release flagged against the one before it.")  # fmt: skip
    bisect.add_argument("good", metavar="GOOD", help="the release before the change (e.g. 0.6.2)")
    bisect.add_argument("bad", metavar="BAD", help="a release after it (e.g. 0.8.3)")
    bisect.add_argument("--versions", help="the releases to bisect over, comma-separated (default: the package "
                        "index's, via pip index versions)")  # fmt: skip
    bisect.add_argument(
        "--on",
        metavar="WORKLOAD",
        help="the workload whose steady state is bisected (default: the first --workload, else batched)",
    )
    bisect.add_argument("--threshold", type=number, default=THRESHOLD, help="minimum effect (default: %(default)s)")
    bisect.add_argument("--alpha", type=number, default=ALPHA, help="significance level (default: %(default)s)")
    measuring(bisect)
    matrix(bisect, hand_made=False)  # the releases between come from the index: each is made here
    bisect.set_defaults(run=bisect_command, env=None)

    trials = commands.add_parser("trials", help="the detector's check: A/A and injected-slowdown trials here")
    measuring(trials)
    trials.add_argument("--trials", type=integer, default=20, help="A/A and injected comparisons (default: 20)")
    trials.add_argument("--processes", type=integer, default=14, help="processes a side per trial (default: 14)")
    trials.add_argument("--inject-slowdown", type=number, default=0.10, help="the known slowdown (default: 0.10)")
    trials.add_argument("--threshold", type=number, default=THRESHOLD)
    trials.add_argument("--alpha", type=number, default=ALPHA)
    trials.add_argument("--out", default=layout.RESULTS_DIR, help="results folder (default: %(default)s)")
    # Short runs of many short epochs: the setting that met the detector's goals on a 2-core machine (README).
    trials.set_defaults(run=trials_command, dataset="synthetic", limit=2000, epochs=16, workload=None)

    env = commands.add_parser("env", help="make each release's environment and check that it runs")
    env.add_argument("versions", nargs="+", metavar="VERSION")
    env.add_argument("--envs", type=Path, default=None, help="(default: $JAXMLP_ENVS, else ~/.cache/jaxmlp/envs)")
    env.set_defaults(run=env_command, env=None, dataset="synthetic")

    worker = commands.add_parser("worker", help="(internal) measure in this process and print one JSON line")
    measuring(worker)
    worker.add_argument(
        "--inject-slowdown", type=number, default=0.0, help="test hook: stretch timings by this fraction"
    )
    worker.set_defaults(run=worker_command)


def check(args) -> None:
    """Impossible settings as one-line errors, before anything runs."""
    if getattr(args, "epochs", 2) < 2:
        raise JaxmlpError("--epochs must be at least 2: the first epoch is recorded apart from the steady state")
    if getattr(args, "calls", 2) < 2:
        raise JaxmlpError("--calls must be at least 2: the first call is recorded apart from the steady state")
    for option in ("processes", "trials"):
        if getattr(args, option, 1) < 1:
            raise JaxmlpError(f"--{option} must be at least 1, got {getattr(args, option)}")
    if not getattr(args, "inject_slowdown", 0) >= 0:
        raise JaxmlpError(f"--inject-slowdown must be 0 or more (0.10: 10% slower), got {args.inject_slowdown}")
    if not getattr(args, "tolerance", 0) >= 0:
        raise JaxmlpError(f"--tolerance must be 0 or more, got {args.tolerance}")
    if not (getattr(args, "threshold", 0) >= 0 and 0 < getattr(args, "alpha", 0.5) < 1):
        raise JaxmlpError("--threshold must be 0 or more and --alpha between 0 and 1")
    for spec in getattr(args, "workload", None) or ():
        if not is_builtin(spec) and ":" not in spec and not spec.endswith(".py"):
            raise JaxmlpError(f"--workload {spec!r}: neither a built-in ({', '.join(SWEEP_WORKLOADS)}) nor "
                              "path/to/file.py:make or module:make")  # fmt: skip


def main(argv=None) -> int:
    """``python -m jaxmlp.measure.sweep worker ...``: the worker processes' entry (``jaxmlp sweep`` for people)."""
    parser = argparse.ArgumentParser(prog="jaxmlp sweep", description=__doc__.splitlines()[0])
    add_arguments(parser.add_subparsers(dest="sweep_command", required=True))
    args = parser.parse_args(argv)
    try:
        check(args)
        return args.run(args)
    except JaxmlpError as e:
        print(f"jaxmlp sweep: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
