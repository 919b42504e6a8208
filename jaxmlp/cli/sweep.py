"""``jaxmlp sweep``: the version matrix (``run``, the default), ``bisect``, the detector's ``trials`` and ``env``.

Each subcommand builds its frozen settings (`jaxmlp.measure.sweep.settings`) once from its arguments, runs the
flow in `jaxmlp.measure.sweep` and files what it returns through `jaxmlp.results`.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import shutil
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path

from jaxmlp import changepoints, errors, registry
from jaxmlp.cli import options
from jaxmlp.errors import EXIT_FAILED, Interrupted, JaxmlpError
from jaxmlp.measure import bisection, workers
from jaxmlp.measure.environment import metadata
from jaxmlp.measure.sweep import bisect, envs, peer, timeline, trials, validation
from jaxmlp.measure.sweep.matrix import (
    Failure,
    Measured,
    Probed,
    Runner,
    Tick,
    environments,
    measure_cells,
    rounds,
    run_worker,
    runners_for,
    unmeasured,
    unmeasured_line,
)
from jaxmlp.measure.sweep.settings import EVERY, Bisect, Detector, Matrix, Measuring, Timeline, Trials, hand_made
from jaxmlp.report.summaries import Summary, bisect_summary, summaries, validation_summary
from jaxmlp.report.text import render
from jaxmlp.results import layout, sweep_files, sweep_tables
from jaxmlp.results.explain_files import EXPLAIN_PROCESSES, settings_of, spec_of
from jaxmlp.results.frames import load
from jaxmlp.results.schema.bisect import BisectDocument
from jaxmlp.results.schema.trials import TrialsDocument, TrialSettings
from jaxmlp.results.schema.validation import ValidationDocument
from jaxmlp.results.store import ResultsStore, check_folder, new_dir, write_json_new
from jaxmlp.results.sweep_files import Plan, RunLog
from jaxmlp.units import count, duration, minutes, ratio

SUBCOMMANDS = ("run", "resume", "timeline", "bisect", "explain", "trials", "validate", "env")

DEFAULT_WORKLOAD = registry.SWEEP_WORKLOADS[0]
DETECTORS = ("pelt", "binseg")
"""``sweep validate``'s detectors unless --detectors names others."""
WORKLOADS = f"a built-in ({', '.join(registry.SWEEP_WORKLOADS)}) or your own, path/to/file.py:make or module:make"


def normalized(argv: Sequence[str]) -> list[str]:
    """``jaxmlp sweep 0.6.2 0.8.3 ...`` is ``jaxmlp sweep run 0.6.2 0.8.3 ...``; ``--xla-flags --xla_foo=1`` is
    ``--xla-flags=--xla_foo=1`` (a value that starts with a dash, which argparse would take for an option)."""
    argv = list(argv)
    at = argv.index("sweep")
    if len(argv) == at + 1 or argv[at + 1] not in (*SUBCOMMANDS, "-h", "--help"):
        argv.insert(at + 1, "run")
    out: list[str] = []
    values = iter(argv)
    for arg in values:
        if arg == "--xla-flags":
            value = next(values, None)
            out.append(arg if value is None else f"{arg}={value}")
        else:
            out.append(arg)
    return out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Time a workload (the MLP's epochs and step, or your own function) in each release's own "
        "environment, fresh processes in rotating order, and say which release is slower or faster "
        "than the one before; `jaxmlp sweep 0.6.2 0.8.3` runs the matrix (the `run` subcommand), "
        "`jaxmlp sweep bisect GOOD BAD` finds the release that changed it."
    )
    sub = parser.add_subparsers(dest="sweep_command", required=True, metavar="COMMAND", parser_class=type(parser))

    run_ = sub.add_parser(
        "run",
        help="the version matrix (the default subcommand)",
        description="Measure each release (and each --xla-flags value) in its own environment: "
        "worker processes in rotating order, a pytest-benchmark file a cell.",
    )
    run_.add_argument(
        "versions",
        nargs="*",
        metavar="VERSION",
        help=f"jax/jaxlib releases (default: {' '.join(registry.SWEEP_VERSIONS)})",
    )
    _measuring(run_)
    _matrix(run_)
    run_.add_argument("--env", metavar="LABEL=PYTHON", **options.LIST, help="also measure environments made by hand")
    run_.set_defaults(run=run_command)

    resume = sub.add_parser(
        "resume",
        help="go on with a sweep that was stopped: measure only what is missing",
        description="Measure the processes a stopped sweep did not finish (those that failed "
        "too), with its own settings, into its own folder, then write its files.",
    )
    resume.add_argument("folder", metavar="FOLDER", help="the sweep's folder (it holds samples.jsonl and INCOMPLETE)")
    resume.set_defaults(run=resume_command)

    timeline = sub.add_parser(
        "timeline",
        help="every release from A to B, and where the time changed",
        description="Measure every release published for jax and jaxlib alike from A to B "
        "(patch releases included) in its own environment, fresh processes in rotating order "
        "as `run` does; then the change points, transients and drifts of each workload's steady "
        "state (README: the release timeline).",
    )
    timeline.add_argument("first", metavar="A", help="the first release (e.g. 0.4.30)")
    timeline.add_argument("last", metavar="B", help="the last release (e.g. 0.5.0)")
    options.add(timeline, options.VERSIONS)
    timeline.add_argument(
        "--every",
        choices=EVERY,
        default="patch",
        help="every release (patch), or the last patch of each minor release (minor) (default: %(default)s)",
    )
    timeline.add_argument(
        "--budget",
        type=options.number,
        metavar="MINUTES",
        help="the minutes the processes may "
        "take: sets the processes a release from the probe's measured time (default: "
        "--processes)",
    )
    _measuring(timeline)
    _matrix(timeline)
    timeline.set_defaults(run=timeline_command)

    bisect_ = sub.add_parser(
        "bisect",
        help="the first release between GOOD and BAD that is slower (or faster)",
        description="Bisect the releases between GOOD and BAD: each probe measures the ends "
        "and their midpoint together and keeps the half that holds the change, until the "
        "first release flagged against the one before it.",
    )
    bisect_.add_argument("good", metavar="GOOD", help="the release before the change (e.g. 0.6.2)")
    bisect_.add_argument("bad", metavar="BAD", help="a release after it (e.g. 0.8.3)")
    options.add(bisect_, options.VERSIONS)
    bisect_.add_argument(
        "--on",
        metavar="WORKLOAD",
        help=f"the workload whose steady state is bisected (default: the first --workload, else {DEFAULT_WORKLOAD})",
    )
    options.add(bisect_, *options.DETECTOR)
    _measuring(bisect_)
    _matrix(bisect_)  # no --env: the releases between come from the index, each made here
    bisect_.set_defaults(run=bisect_command)

    explain_ = sub.add_parser(
        "explain",
        help="why A and B differ on a workload: the compiled program, or below it",
        description="Say whether two releases compiled the same optimized HLO for a workload: "
        "if not, the operations added or removed, the change in flops, bytes and memory and "
        "the HLO's diff; if so, each operation's time in one profiled process per release. "
        "Writes RESULTS/explain-<time>/.",
    )
    explain_.add_argument("a", metavar="A", help="the earlier release (e.g. 0.4.30)")
    explain_.add_argument("b", metavar="B", help="the later release (e.g. 0.10.2)")
    options.add(
        explain_, options.WORKLOAD.but(help=f"the workload to explain: {WORKLOADS} (default: {DEFAULT_WORKLOAD})")
    )
    options.add(explain_, *options.DATA, *options.TIMING, options.PIN_CPU)
    options.add(
        explain_,
        options.PROCESSES.but(
            default=EXPLAIN_PROCESSES,
            why="a release; the first of each profiled",
            help="processes a release, the first of each profiled (default: %(default)s)",
        ),
        options.XLA_FLAGS.but(
            help="the XLA_FLAGS both releases run with, one value (e.g. "
            "--xla_cpu_use_thunk_runtime=false) (default: none)"
        ),
        options.TOLERANCE,
        options.ENVS,
        options.TIMEOUT,
        options.OUT,
    )
    explain_.add_argument("--env", metavar="LABEL=PYTHON", **options.LIST, help="releases' environments made by hand")
    explain_.set_defaults(run=explain_command)

    trials_ = sub.add_parser(
        "trials",
        help="the detector's check: A/A and injected-slowdown trials here",
        description="Check the detector on this machine: --trials comparisons of the jax "
        "installed here against itself (A/A: a flag is a false alarm) and against itself with a "
        "known slowdown injected (a flag is a hit), each side --processes fresh processes; writes "
        "OUT/detector-<time>/trials.json.",
    )
    # Short runs of many short epochs: the setting that met the detector's goals on a 2-core machine (README).
    measured = "the setting measured here (README: how the detector was checked)"
    options.add(
        trials_,
        options.WORKLOAD.but(help=f"the workload to compare against itself: {WORKLOADS} (default: {DEFAULT_WORKLOAD})"),
        options.DATASET.but(default="synthetic", why=measured),
        options.DATA_DIR,
        options.LIMIT.but(default=2000, why=measured),
        options.EPOCHS.but(default=16, why=measured),
        options.CALLS,
        options.PIN_CPU,
    )
    trials_.add_argument(
        "--trials", type=options.whole_number, default=20, help="A/A and injected comparisons (default: %(default)s)"
    )
    options.add(
        trials_,
        options.PROCESSES.but(
            default=14, why=measured, help="fresh processes a side of each comparison (default: %(default)s)"
        ),
    )
    trials_.add_argument(
        "--inject-slowdown",
        type=options.number,
        default=0.10,
        help="the known slowdown, as a fraction (default: %(default)s)",
    )
    options.add(trials_, *options.DETECTOR, options.OUT)
    trials_.set_defaults(run=trials_command)

    validate = sub.add_parser(
        "validate",
        help="the change-point detector on synthetic histories with known changes",
        description="Draw synthetic histories (8 to 30 releases, 8 samples each) from the noise "
        "of real fresh-process samples, with known steps, transients, drifts or none, and count "
        "how often each detector finds them and how often it flags a flat history.",
    )
    validate.add_argument(
        "noise",
        nargs="*",
        metavar="FOLDER",
        help="sweep or timeline folders whose samples give the noise (default: every one under --results)",
    )
    options.add(validate, options.RESULTS)
    validate.add_argument(
        "--histories", type=options.whole_number, default=200, help="histories a case (default: %(default)s)"
    )
    validate.add_argument(
        "--seed", type=options.whole_number, default=0, help="the histories' seed (default: %(default)s)"
    )
    validate.add_argument(
        "--detectors",
        metavar="DETECTOR",
        **options.LIST,
        help="the detectors to validate, of "
        f"{', '.join(validation.DETECTORS)} (edivisive needs signal-processing-algorithms) "
        f"(default: {' '.join(DETECTORS)})",
    )
    validate.add_argument(
        "--penalty",
        type=options.number,
        default=changepoints.PENALTY,
        help="PELT's and binary segmentation's penalty (default: %(default)s)",
    )
    validate.add_argument(
        "--peer",
        type=options.whole_number,
        default=1,
        metavar="EVERY",
        help="also run the detector and Apache Otava's on every EVERY-th series of Otava's own test "
        "suite, one value a point (0: not at all; default: %(default)s, all 110)",
    )
    options.add(validate, options.OUT)
    validate.set_defaults(run=validate_command)

    env = sub.add_parser(
        "env",
        help="make each release's environment and check that it runs",
        description="Make each release's environment under --envs (or find it made) and check that "
        "a worker process runs in it: two short epochs of the synthetic set.",
    )
    env.add_argument("versions", nargs="+", metavar="VERSION", help="jax/jaxlib releases (e.g. 0.6.2 0.8.3)")
    options.add(env, options.ENVS)
    env.set_defaults(run=env_command)


def _measuring(parser: argparse.ArgumentParser) -> None:
    options.add(parser, options.WORKLOAD, *options.DATA, *options.TIMING, options.PIN_CPU, options.PRECISION)


def _matrix(parser: argparse.ArgumentParser) -> None:
    options.add(
        parser, options.PROCESSES, options.XLA_FLAGS, options.TOLERANCE, options.ENVS, options.TIMEOUT, options.OUT
    )


def measuring_of(args: argparse.Namespace) -> Measuring:
    for spec in args.workload or ():
        if re.fullmatch(r"\d+(\.\d+)+", spec):  # `sweep run --workload scan 0.6.2`: the list took the release
            raise JaxmlpError(
                f"--workload {spec}: a release, not a workload; --workload takes every value up to the "
                "next option: give the releases first (jaxmlp sweep run 0.6.2 0.8.3 --workload scan)"
            )
    return Measuring(
        tuple(args.workload or ()),
        args.dataset,
        args.data_dir,
        args.limit,
        args.epochs,
        args.calls,
        args.pin_cpu,
        precision=getattr(args, "precision", "f32"),
    )


def matrix_of(args: argparse.Namespace, versions: Sequence[str] = ()) -> Matrix:
    return Matrix(
        tuple(versions),
        args.processes,
        tuple(args.xla_flags or ()),
        args.tolerance,
        args.envs,
        hand_made(tuple(getattr(args, "env", None) or ())),
        args.timeout,
    )


@contextlib.contextmanager
def progress_bar(total: int) -> Iterator[Tick]:
    """A bar on a terminal; in a log, a plain line per process."""
    from tqdm import tqdm

    bar = tqdm(total=total, unit="process", disable=None, file=sys.stderr)
    start = time.monotonic()
    done = [0]

    def tick(round_: int, label: str) -> None:
        done[0] += 1
        bar.set_postfix_str(f"round {round_ + 1}, {label}")
        bar.update()
        if bar.disable:
            print(
                f"  {done[0]}/{total} processes ({label}, round {round_ + 1}), {time.monotonic() - start:.0f} s",
                file=sys.stderr,
                flush=True,
            )

    try:
        yield tick
    finally:
        bar.close()


def run_command(args: argparse.Namespace) -> int:
    start = time.monotonic()
    measuring = measuring_of(args)
    matrix = matrix_of(args, args.versions if args.versions or args.env else registry.SWEEP_VERSIONS)
    store = ResultsStore(check_folder(args.out, "--out"))
    pythons = environments(matrix, matrix.versions)
    runners = runners_for(pythons, matrix, measuring)
    run = RunLog.create(store)
    print(f"Samples go into {run.folder} as they are measured")
    plans: list[Plan] = []

    def planned(probed: Probed, differs: dict[str, dict[str, str]], limit: float) -> None:
        plans.append(Plan(tuple(runners), probed, differs, matrix, limit))
        run.start(plans[0])

    code, missing = _measured(
        run, plans, lambda: measure_cells(runners, matrix, print, progress_bar, run.record, planned), start
    )
    for workload, flags, before, release in flagged_changes(run.folder):
        explain_change(run.folder, workload, flags, before, release, "flagged", matrix)
    return _ended(code, missing, run.folder)


def flagged_changes(folder: Path) -> list[tuple[str, str, str, str]]:
    """A sweep's flagged changes (a release slower or faster than the one before it, `release_verdicts`): each
    workload, XLA-flags value, the release before and the release."""
    results = load(ResultsStore(folder))
    rows = sweep_tables.sweeps(results.runs).get(str(folder))
    if rows is None:
        return []
    verdicts = sweep_tables.release_verdicts(rows, results.samples)
    found = []
    for (workload, flags), column in verdicts.groupby(["workload", "xla_flags"], sort=False):
        releases = list(column["release"])
        for i, verdict in enumerate(column["verdict"]):
            if i and verdict in ("slower", "faster"):
                found.append((str(workload), str(flags), releases[i - 1], releases[i]))
    return found


def timeline_command(args: argparse.Namespace) -> int:
    """Every release from A to B as one sweep matrix, then its change points (`jaxmlp.changepoints`)."""
    start = time.monotonic()
    settings = Timeline(args.first, args.last, _releases(args.versions), args.every, args.budget)
    measuring = measuring_of(args)
    store = ResultsStore(check_folder(args.out, "--out"))
    versions = timeline.releases(settings)
    matrix = matrix_of(args, versions)
    missing = [v for v in versions if not envs.is_made(v, matrix.envs)]
    size = envs.env_megabytes(matrix.envs)
    disk = (
        f"about {size * len(missing) / 1e3:.1f} GB of disk for {len(missing)} not made yet"
        if missing and size
        else f"{len(missing)} not made yet (size unknown: none made here)"
        if missing
        else "every environment made"
    )
    columns = 1 + len(matrix.xla_flags)
    print(
        f"Timeline {settings.first} to {settings.last}: {len(versions)} releases ({', '.join(versions)}), "
        f"{columns} column(s); {disk}; a probe process each, then "
        + (
            f"as many processes a release as fit in {settings.budget:g} min"
            if settings.budget
            else f"{matrix.processes} processes a release"
        )
    )
    pythons = environments(matrix, versions)
    envs.prune(versions, matrix.envs)
    runners = runners_for(pythons, matrix, measuring)
    run = RunLog.create(store, layout.TIMELINE)
    print(f"Samples go into {run.folder} as they are measured")
    plans: list[Plan] = []
    fitted: list[Matrix] = [matrix]

    def fit(probed: Probed) -> Matrix:
        spent, per_round = time.monotonic() - start, sum(probed.seconds.values())
        processes = (
            timeline.fitted_processes(settings.budget * 60, 0.0, per_round) if settings.budget else matrix.processes
        )
        fitted[0] = replace(matrix, processes=processes)
        print(
            f"Cost: {len(probed.runners)} cells x {processes} processes = {len(probed.runners) * processes} "
            f"processes; the probe's processes took {per_round:.1f} s a round ({minutes(spent)} so far, "
            f"environments included): about {minutes(per_round * processes)} to go"
        )
        return fitted[0]

    def planned(probed: Probed, differs: dict[str, dict[str, str]], limit: float) -> None:
        plans.append(Plan(tuple(runners), replace(probed, reference={}), differs, fitted[0], limit))
        run.start(plans[0])

    code, unmeasured_cells = _measured(
        run, plans, lambda: measure_cells(runners, matrix, print, progress_bar, run.record, planned, fit), start
    )
    for column in timeline_columns(run.folder):
        for change in column.changes:
            explain_change(
                run.folder, column.workload, column.xla_flags, change.before, change.at, change.kind, fitted[0]
            )
    return _ended(code, unmeasured_cells, run.folder)


def timeline_columns(folder: Path) -> list[sweep_tables.TimelineColumn]:
    """The timeline in ``folder``: per workload and XLA-flags column, its releases' samples and changes."""
    results = load(ResultsStore(folder))
    rows = sweep_tables.sweeps(results.runs).get(str(folder))
    return [] if rows is None else sweep_tables.timeline_columns(rows, results.samples)


def explain_change(folder: Path, workload: str, flags: str, before: str, at: str, kind: str, matrix: Matrix) -> None:
    """`jaxmlp sweep explain BEFORE AT` for one change a sweep flagged or a timeline found (a step, a drift, a
    transient), with the sweep's own settings, into its folder; printed. ``workload`` is the name its results carry:
    the explanation is given its spec (``mine.py:make``), the one its processes can import."""
    spec = spec_of(settings_of(folder), workload)
    _explained(
        f"Explaining {workload}: {before} -> {at} ({kind})",
        folder,
        before,
        at,
        spec,
        folder,
        replace(matrix, xla_flags=(flags,) if flags else ()),
    )


def _explained(
    heading: str, settings: Measuring | Path, before: str, after: str, workload: str, out: Path, matrix: Matrix
) -> None:
    """An explanation a command makes of its own answer (`jaxmlp.results.explain_files.explain`, at most
    `EXPLAIN_PROCESSES` processes a release), printed under ``heading``; a failure to explain is one line, never
    the command's failure."""
    from jaxmlp.report.explain import explain_text
    from jaxmlp.results.explain_files import explain  # looked up when called (tests/conftest.py `explained`)

    print(f"\n{heading}")
    try:
        doc, folder = explain(
            settings,
            before,
            after,
            workload,
            out,
            replace(matrix, processes=min(matrix.processes, EXPLAIN_PROCESSES)),
            print,
        )
    except JaxmlpError as e:
        print(f"could not explain it: {e}")
        return
    print(f"\n{explain_text(doc, folder)}")


def resume_command(args: argparse.Namespace) -> int:
    start = time.monotonic()
    run = RunLog(Path(args.folder))
    if not run.incomplete:
        raise JaxmlpError(f"{run.folder} is no stopped sweep (no {layout.INCOMPLETE_FILE} in it): nothing to resume")
    plan, samples = run.read()
    missing = [r.python for r in plan.probed.runners.values() if not Path(r.python).exists()]
    if missing:
        raise JaxmlpError(f"the environment {missing[0]} this sweep ran in is gone: make it again (jaxmlp sweep env)")
    print(f"Resuming {run.folder}: {sum(not isinstance(s, Failure) for s in samples.values())} samples kept")

    def measure() -> Measured:
        with envs.jaxmlp_path() as path:
            return rounds(
                plan.probed, plan.differs, plan.matrix, plan.limit, path, print, progress_bar, run.record, samples
            )

    return _ended(*_measured(run, [plan], measure, start), run.folder)


def _measured(run: RunLog, plans: list[Plan], measure: Callable[[], Measured], start: float) -> tuple[int, str]:
    """Measure into ``run``; its files written at the end, or with what was kept when it is stopped. Returns the
    exit code and the line naming the cells that could not be measured (`unmeasured_line`; "" if none)."""
    try:
        measured = measure()
    except (KeyboardInterrupt, JaxmlpError) as e:
        if not plans:  # stopped before the first round: nothing measured, nothing left behind
            shutil.rmtree(run.folder, ignore_errors=True)
            raise
        kept = run.write_cells(plans[0], complete=False)
        said = (
            f"kept {sum(map(len, kept.processes.values()))} samples in {run.folder} "
            f"(jaxmlp sweep resume {run.folder} goes on)"
        )
        if isinstance(e, KeyboardInterrupt):
            stopped = e if isinstance(e, Interrupted) else Interrupted()
            stopped.kept = said
            raise stopped from None
        raise JaxmlpError(f"{e}; {said}") from None
    measured = run.write_cells(plans[0], complete=True)
    print(f"\n{verdicts_of(run.folder)}\n")  # the verdicts, then the cells that failed (from cells.json)
    print(f"Wrote {len(measured.processes)} cell files into {run.folder} in {minutes(time.monotonic() - start)}")
    return EXIT_FAILED if measured.failures else 0, unmeasured_line(unmeasured(measured))


def _ended(code: int, missing: str, folder: Path) -> int:
    """The command's exit code; a release it could not measure fails it, named in its last line (stderr)."""
    if not missing:
        return code
    sys.stdout.flush()
    print(f"jaxmlp sweep: {missing}; what was measured is in {folder}", file=sys.stderr)
    return EXIT_FAILED


def verdicts_of(folder: Path) -> str:
    """The sweep in ``folder``, as `jaxmlp summary` shows it: its verdict tables, then its failed cells."""
    return render([found.summary for found in summaries(load(ResultsStore(folder)), folder.parent)])


def bisect_command(args: argparse.Namespace) -> int:
    start = time.monotonic()
    settings = Bisect(args.good, args.bad, _releases(args.versions), args.on)
    detector = Detector(args.threshold, args.alpha)
    measuring, matrix = measuring_of(args), matrix_of(args)
    candidates = bisect.candidates(settings)
    target, spec = bisect.bisected(measuring.workloads, settings.on)
    measuring = replace(measuring, workloads=(spec,))  # only the bisected workload is measured
    between = candidates[1:-1]
    print(
        f"Bisecting {len(between)} release(s) between {args.good} and {args.bad} ({', '.join(between) or 'none'}) "
        f"on the steady state of {target}: about {bisection.expected_releases(len(between))} releases measured, "
        f"{matrix.processes} processes each a probe"
    )
    store = ResultsStore(args.out)
    folder = new_dir(store.folder, layout.name(layout.BISECT))
    print(f"Probes go into {folder}")

    def record_probe(number: int, runners: Sequence[Runner], measured: Measured) -> None:
        sweep_files.write(ResultsStore(folder), runners, measured, final=folder / layout.probe_folder(number))

    def said(p: bisection.BisectProbe) -> None:
        medians = ", ".join(f"{r} {duration(p.medians[r])}" for r in p.releases)
        steps = "; ".join(f"{s.from_}→{s.to} {ratio(s.comparison.ratio)} ({s.comparison.in_words()})" for s in p.steps)
        print(f"probe {p.number}: {medians}; {steps} => {p.decision}", flush=True)

    try:
        result = bisect.run(candidates, target, measuring, matrix, detector, record_probe, print, said, progress_bar)
    except BaseException:
        if not any(folder.iterdir()):  # no probe finished: leave nothing behind
            folder.rmdir()
        else:
            print(f"The finished probes stay in {folder}", file=sys.stderr)
        raise
    line = bisection.answer_line(result)
    flags = matrix.xla_flags[0] if matrix.xla_flags else ""
    recorded = {
        "good": args.good,
        "bad": args.bad,
        "workload": target,
        "quantity": "steady state",
        "processes": matrix.processes,
        "threshold": detector.threshold,
        "alpha": detector.alpha,
        "xla_flags": flags,
        "dataset": measuring.dataset,
        "limit": measuring.limit,
        "epochs": measuring.epochs,
        "calls": measuring.calls,
        "pin_cpu": measuring.pin_cpu,
    }
    seconds = time.monotonic() - start
    doc = BisectDocument(metadata(), recorded, result, line, seconds)
    path = write_json_new(folder / layout.BISECT_FILE, doc.to_json())
    print(f"\n{render([bisect_summary(doc, folder.name)])}\n")  # the probes' verdicts, then the answer line
    probes = ", ".join(layout.probe_folder(p.number) for p in result.probes)
    print(f"Wrote {path}, beside the probes' folders ({probes})")
    explain_answer(result, measuring, spec, matrix, folder)
    return 0


def explain_command(args: argparse.Namespace) -> int:
    """`jaxmlp sweep explain A B`: run, file and print an explanation."""
    from jaxmlp.report.explain import explain_text
    from jaxmlp.results.explain_files import explain

    measuring, matrix = measuring_of(args), matrix_of(args)
    workload = (args.workload or [DEFAULT_WORKLOAD])[0]
    store = ResultsStore(check_folder(args.out, "--out"))
    print(
        f"Explaining {workload} from {args.a} to {args.b}: {count(matrix.processes, 'process', 'processes')} a "
        "release in rotating order, the first of each recording its program and a trace"
    )
    doc, folder = explain(
        measuring,
        args.a,
        args.b,
        workload,
        store.folder,
        matrix,
        print,
        lambda label: print(f"  a process of {label} done", flush=True),
    )
    print(f"\n{explain_text(doc, folder)}")
    return 0


def explain_answer(result: bisection.Bisection, measuring: Measuring, spec: str, matrix: Matrix, out: Path) -> None:
    """The bisection's answer explained (`jaxmlp sweep explain AFTER FIRST`), printed."""
    if result.status == "found" and result.first is not None and result.after is not None:
        _explained(
            f"Explaining the answer: {result.after} -> {result.first}",
            measuring,
            result.after,
            result.first,
            spec,
            out,
            matrix,
        )


def _releases(given: Sequence[str] | None) -> tuple[str, ...] | None:
    if given and any("," in v for v in given):
        raise JaxmlpError(
            f"--versions {' '.join(given)}: give the releases space-separated, e.g. --versions 0.6.2 0.7.0 0.7.1"
        )
    return None if given is None else tuple(given)


def trials_command(args: argparse.Namespace) -> int:
    """A/A and injected-slowdown trials of one version against itself."""
    from tqdm import tqdm

    settings = Trials(args.trials, args.processes, args.inject_slowdown)
    detector = Detector(args.threshold, args.alpha)
    measuring = replace(measuring_of(args), workloads=((args.workload or [DEFAULT_WORKLOAD])[0],))
    meta, done = trials.run(settings, measuring, detector, progress_bar, tqdm.write)
    recorded = TrialSettings(
        workload=measuring.names[0],
        processes_per_side=settings.processes,
        trials=settings.trials,
        inject_slowdown=settings.inject_slowdown,
        threshold=detector.threshold,
        alpha=detector.alpha,
        limit=measuring.limit,
        epochs=measuring.epochs,
        dataset=measuring.dataset,
    )
    doc = TrialsDocument(meta, recorded, tuple(done))
    with ResultsStore(args.out).new_folder(layout.DETECTOR) as folder:
        write_json_new(folder.path / layout.TRIALS_FILE, doc.to_json())
    injected, aa = (statistics.median(getattr(t, side).ratio for t in done) for side in ("injected", "aa"))
    print(
        f"Injected {settings.inject_slowdown:.0%} slowdown flagged in {doc.injected_flagged}/{settings.trials} "
        f"trials (median ratio {injected:.3f}); A/A flagged in {doc.aa_flagged}/{settings.trials} (median ratio "
        f"{aa:.3f}); {count(settings.processes, 'process', 'processes')} a side; jax {meta['jax']}. "
        f"Wrote {folder.path / layout.TRIALS_FILE}"
    )
    return 0


def validate_command(args: argparse.Namespace) -> int:
    """The change-point detector on synthetic histories drawn from measured noise (`validation`)."""
    detectors = list(dict.fromkeys(args.detectors or DETECTORS))
    unknown = [d for d in detectors if d not in validation.DETECTORS]
    if unknown:
        raise JaxmlpError(
            f"--detectors {' '.join(unknown)}: choose among {', '.join(validation.DETECTORS)}, space-separated"
        )
    errors.at_least("--histories", args.histories, 1)
    errors.positive_finite("--penalty", args.penalty)
    errors.at_least("--peer", args.peer, 0)
    if "edivisive" in detectors:
        try:
            import signal_processing_algorithms  # noqa: F401
        except ImportError:
            raise JaxmlpError(
                "--detectors edivisive needs signal-processing-algorithms (it wants numpy<2: install "
                "it in an environment of its own)"
            ) from None
    if args.peer and peer.missing():
        raise JaxmlpError(f"{peer.missing()} (or --peer 0)")
    folders = [Path(f) for f in args.noise] or [Path(args.results)]
    cells = noise_cells(folders)
    noise = validation.deviations(cells)
    store = ResultsStore(check_folder(args.out, "--out"))
    print(
        f"Validating {', '.join(detectors)} on {args.histories} histories a case ({len(validation.CASES)} cases), "
        f"noise from {len(noise)} samples of {len(cells)} cells"
    )
    start = time.monotonic()
    rows = validation.run(noise, detectors, args.histories, args.seed, penalty=args.penalty)
    chosen = next((d for d in detectors if validation.meets(rows, d)), "none met every goal")
    settings = {
        "histories": args.histories,
        "samples": validation.SAMPLES,
        "releases": f"{validation.RELEASES[0]} to {validation.RELEASES[1]}",
        "seed": args.seed,
        "penalty": args.penalty,
        "noise": ", ".join(str(f) for f in folders),
        "noise_samples": len(noise),
        "noise_cells": len(cells),
        "seconds": round(time.monotonic() - start, 1),
    }
    peers = peer.run(peer.of(peer.suite(), args.peer)) if args.peer else []
    if peers:
        settings = {**settings, "peer_every": args.peer, "peer_tolerance": peer.TOLERANCE, "peer": peer.versions()}
    doc = ValidationDocument(metadata(), settings, chosen, tuple(rows), tuple(peers))
    with store.new_folder(layout.DETECTOR) as folder:
        write_json_new(folder.path / layout.VALIDATION_FILE, doc.to_json())
    print(f"\n{render([validation_summary(doc), *([peer_summary(peers)] if peers else [])])}\n")
    print(f"Wrote {folder.path / layout.VALIDATION_FILE} in {minutes(time.monotonic() - start)}")
    return 0


def peer_summary(rows: Sequence[peer.PeerRow]) -> Summary:
    """The peer suite's table, with how a found change matches a true one."""
    verdict = "holds" if peer.holds(rows) else "does not hold"
    return Summary(
        "On Otava's suite",
        (
            f"jaxmlp's detector {verdict} beside Apache Otava's (F1 no lower, no more "
            f"change-free series flagged) on {rows[0].series} series, one value a point; a found change matches "
            f"a true one within {peer.TOLERANCE} points, one to one",
        ),
        (("Each detector", peer.table(rows)),),
    )


def noise_cells(folders: Sequence[Path]) -> list[list[float]]:
    """Every sweep cell's steady-state samples (one a process) under ``folders``, a list a cell and workload."""
    cells: list[list[float]] = []
    for folder in folders:
        results = load(ResultsStore(folder))
        for rows in sweep_tables.sweeps(results.runs).values():
            steady = rows[rows["test"] == registry.SWEEP_STEADY.id]
            for file, name in zip(steady["file"], steady["name"]):
                picked = results.samples[(results.samples["file"] == file) & (results.samples["name"] == name)]
                cells.append([float(x) for x in picked["seconds"]])
    if not any(len(c) >= 4 for c in cells):
        raise JaxmlpError(
            f"no sweep cell of 4 or more processes under {', '.join(map(str, folders))}: give the "
            "folder of a sweep or timeline"
        )
    return cells


def env_command(args: argparse.Namespace) -> int:
    """Make (or find) each release's environment and check that a worker runs in it."""
    matrix = Matrix(tuple(args.versions), envs=args.envs)
    pythons = environments(matrix, matrix.versions)
    check = Measuring(dataset="synthetic", limit=512, epochs=2, calls=2)
    with envs.jaxmlp_path() as path:
        for label, python in pythons.items():
            result = run_worker(Runner(label, python, check), path, workers.FIRST_SECONDS)
            print(
                f"jax {label}: {python} runs (jax {result.metadata.get('jax')}, jaxlib {result.metadata.get('jaxlib')})"
            )
    return 0
