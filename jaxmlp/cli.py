"""`jaxmlp` on the command line: parse arguments into a config and call the library.

Bad input ends in one line on stderr that names the problem and the fix, and a
non-zero exit; never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from jaxmlp import registry
from jaxmlp.errors import JaxmlpError
from jaxmlp.results import layout
from jaxmlp.stats import ALPHA, THRESHOLD

EXIT_ERROR = 2
EXIT_DIVERGED = 3


class _Parser(argparse.ArgumentParser):
    """argparse, with errors as one line that points to --help."""

    def error(self, message: str):
        self.exit(EXIT_ERROR, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def build_parser() -> argparse.ArgumentParser:
    from jaxmlp.pipelines.train import TrainConfig

    defaults = TrainConfig()
    parser = _Parser(prog="jaxmlp", description="Benchmark and profile the JAX MNIST tutorial's training pipeline.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser, metavar="COMMAND")

    train = commands.add_parser(
        "train",
        help="train the tutorial's MLP and print its per-epoch lines",
        description="Train the tutorial's MLP (defaults are the tutorial's) and print its three lines per epoch.",
    )
    train.add_argument(
        "--epochs", type=_integer, default=defaults.epochs, help="epochs to train (default: %(default)s)"
    )
    train.add_argument(
        "--batch-size", type=_integer, default=defaults.batch_size, help="images per step (default: %(default)s)"
    )
    train.add_argument(
        "--step-size", type=_number, default=defaults.step_size, help="SGD step size (default: %(default)s)"
    )
    train.add_argument(
        "--workers",
        type=_integer,
        default=defaults.workers,
        help="loader worker processes, spawned: torch's DataLoader (seed, seed_batched) or Grain's (grain) "
        "(default: %(default)s)",
    )
    _add_data_arguments(train, defaults)
    train.add_argument(
        "--seed", type=_integer, default=defaults.seed, help="PRNGKey seed of the initial params (default: %(default)s)"
    )
    train.add_argument("--backend", choices=registry.BACKENDS, help="JAX backend (default: JAX's default device)")
    train.add_argument(
        "--pipeline",
        choices=registry.PIPELINES,
        default=defaults.pipeline,
        help="how batches reach the step: the tutorial's DataLoader (seed), the same a batch at a time (seed_batched), "
        "Grain (grain), Hugging Face datasets (hf), array slices (batched), slices put on the device by a background "
        "thread (prefetch), one lax.scan per epoch (scan), that scan data-parallel over every device (sharded) "
        "(default: %(default)s)",
    )
    train.add_argument(
        "--processes",
        type=_integer,
        default=1,
        help="sharded only: start this many local processes joined by jax.distributed on 127.0.0.1, each with its "
        "own devices (default: %(default)s)",
    )
    train.add_argument("--json", metavar="PATH", help="write per-epoch records to this NEW JSON file")
    train.add_argument(
        "--progress", action=argparse.BooleanOptionalAction, help="a progress bar (default: on a terminal only)"
    )
    train.set_defaults(run=run_train)

    summary = commands.add_parser(
        "summary",
        help="summarize a pytest-benchmark JSON file (and file it in a results folder)",
        description="Print the compact summary of a pytest-benchmark JSON file: jit/eager and vmap/loop speedups, "
        "the best worker count, and the pipeline ladder against the compute floor.",
    )
    summary.add_argument("file", help="a pytest-benchmark JSON file (written with --benchmark-json)")
    summary.add_argument(
        "--save",
        metavar="DIR",
        help="also copy the file, atomically and under a new name (never over another run), into DIR",
    )
    summary.add_argument(
        "--name", help=f"the saved file's name (default: {layout.BENCH}-<UTC time of the run>-<backends>.json)"
    )
    summary.set_defaults(run=run_summary)

    report = commands.add_parser(
        "report",
        help="render every result under a folder as summary.md, index.html (with plots) and CSV tables",
        description="Load every pytest-benchmark JSON and jaxmlp train --json file under --results into one "
        "table and write summary.md, a self-contained index.html with plots, results.csv and samples.csv.",
    )
    report.add_argument("--results", default=layout.RESULTS_DIR, help="folder of result files (default: %(default)s)")
    report.add_argument("--out", help="NEW folder for the report (default: RESULTS/report-<UTC time>)")
    report.set_defaults(run=run_report)

    profile = commands.add_parser(
        "profile",
        help="capture an XLA profiler trace of training steps, for TensorBoard",
        description="After a warm-up, trace N training steps of a pipeline (each step, batch fetch included, "
        "marked for TensorBoard's profile plugin) into a new run folder under --logdir.",
    )
    profile.add_argument("--pipeline", choices=registry.PIPELINES, default="scan", help="(default: %(default)s)")
    profile.add_argument(
        "--steps", type=_integer, default=10, help="steps to trace; for scan one step is one epoch (default: 10)"
    )
    profile.add_argument("--logdir", default=layout.TRACES_DIR, help="TensorBoard logdir (default: %(default)s)")
    _add_data_arguments(profile, defaults)
    profile.add_argument("--batch-size", type=_integer, default=defaults.batch_size, help="(default: %(default)s)")
    profile.add_argument(
        "--workers", type=_integer, default=0, help="loader workers: seed, seed_batched and grain only (default: 0)"
    )
    profile.add_argument("--backend", choices=registry.BACKENDS, help="JAX backend (default: JAX's default device)")
    profile.set_defaults(run=run_profile)

    board = commands.add_parser(
        "tensorboard",
        help="serve TensorBoard with the profile plugin on 127.0.0.1 over a traces folder",
        description="Start TensorBoard (with its profile plugin) on 127.0.0.1 over --logdir; stop it with Ctrl-C.",
    )
    board.add_argument("--logdir", default=layout.TRACES_DIR, help="(default: %(default)s)")
    board.add_argument("--port", type=_integer, default=6006, help="(default: %(default)s)")
    board.set_defaults(run=run_tensorboard)

    compare = commands.add_parser(
        "compare",
        help="is NEW slower than BASELINE? ratio of medians, bootstrap interval, Mann-Whitney U",
        description="Compare two pytest-benchmark JSON files (or folders of them) with raw samples, benchmark by "
        "benchmark. A regression is flagged only when p < --alpha (one-sided Mann-Whitney U) AND the ratio of "
        "medians exceeds 1 + --threshold; improvements likewise. Exit 1 with --fail-on-regression if any is flagged.",
    )
    compare.add_argument(
        "baseline", help="file or folder of pytest-benchmark JSON (raw samples: --benchmark-save-data)"
    )
    compare.add_argument("new", help="file or folder of pytest-benchmark JSON")
    compare.add_argument("--threshold", type=_number, default=THRESHOLD, help="minimum effect (default: %(default)s)")
    compare.add_argument("--alpha", type=_number, default=ALPHA, help="significance level (default: %(default)s)")
    compare.add_argument("--fail-on-regression", action="store_true", help="exit 1 when any regression is flagged")
    compare.set_defaults(run=run_compare)

    from jaxmlp.measure import scaling

    scale = commands.add_parser(
        "scaling",
        help="data-parallel scaling: the sharded epoch, step and compile time for 1, 2, 4, 8 devices",
        description="Time the sharded pipeline (jax.sharding: the batch split over a mesh of N devices, params "
        "replicated) for each device count N, each in a fresh process: on the CPU N simulated devices "
        f"({scaling.FORCE_DEVICES}=N, sharing this machine's cores), on a GPU machine the first N GPUs.",
    )
    scale.add_argument("--devices", type=_integer, nargs="+", help="device counts (default: 1 2 4 8 on the CPU; "
                       "1, 2, 4, ... up to the GPUs visible on --backend gpu)")  # fmt: skip
    scale.add_argument("--backend", choices=registry.BACKENDS, default="cpu", help="default: %(default)s")
    scaling.add_worker_arguments(scale, _integer)
    scale.add_argument("--out", default=layout.RESULTS_DIR, help="results folder (default: %(default)s)")
    scale.set_defaults(run=run_scaling)

    from jaxmlp.measure import sweep

    sweeping = commands.add_parser(
        "sweep",
        help="did a jax/jaxlib release make a workload slower? the version matrix, bisection, XLA flags",
        description="Time a workload (the MLP's epochs and step, or your own function) in each release's own "
        "environment, worker processes in rotating order; `jaxmlp sweep 0.6.2 0.8.3` runs the matrix (the `run` "
        "subcommand), `jaxmlp sweep bisect GOOD BAD` finds the release that changed it.",
    )
    sweep.add_arguments(sweeping.add_subparsers(dest="sweep_command", required=True, metavar="COMMAND"),
                        _integer, _number)  # fmt: skip
    return parser


def _default_subcommand(argv: list[str]) -> list[str]:
    """``jaxmlp sweep 0.6.2 0.8.3 ...`` is ``jaxmlp sweep run 0.6.2 0.8.3 ...``."""
    from jaxmlp.measure.sweep import COMMANDS, attach_flag_values

    if argv[:1] != ["sweep"]:
        return argv
    if len(argv) == 1 or argv[1] not in (*COMMANDS, "-h", "--help"):
        argv = ["sweep", "run", *argv[1:]]
    return attach_flag_values(argv)


def _add_data_arguments(parser: argparse.ArgumentParser, defaults) -> None:
    parser.add_argument(
        "--data-dir",
        help="folder with the four MNIST IDX files, gzipped or not (default: $JAXMLP_DATA_DIR, else a cache folder)",
    )
    parser.add_argument("--download", action="store_true", help="let torchvision download MNIST into the data folder")
    parser.add_argument(
        "--limit", type=_integer, default=defaults.limit, help="the first LIMIT training images only (default: all)"
    )
    parser.add_argument(
        "--dataset",
        choices=registry.DATASETS,
        default=defaults.dataset,
        help="real MNIST, or a generated MNIST-shaped set for machines without it (default: %(default)s)",
    )


def _progress_bar(enabled: bool | None):
    from tqdm import tqdm

    def wrap(iterable, total):
        # disable=None: shown on a terminal, silent in logs.
        return tqdm(iterable, total=total, disable=None if enabled is None else not enabled, leave=False, unit="batch")

    return wrap


def _config(args: argparse.Namespace):
    """The command's settings as a validated `TrainConfig` (the fields it has no option for keep their defaults)."""
    import dataclasses

    from jaxmlp.pipelines.train import TrainConfig, validate_config

    given = {f.name: getattr(args, f.name) for f in dataclasses.fields(TrainConfig) if hasattr(args, f.name)}
    return validate_config(TrainConfig(**given))


def _train_args(config, json_path: str | None, progress: bool | None) -> list[str]:
    """The ``jaxmlp train`` arguments that give ``config`` (for the processes of a distributed run)."""
    import dataclasses

    args = ["train"]
    for key, value in dataclasses.asdict(config).items():
        option = f"--{key.replace('_', '-')}"
        if isinstance(value, bool):
            args += [option] if value else []
        elif value is not None:
            args += [option, str(value)]
    args += ["--json", json_path] if json_path else []
    return args + ([] if progress is None else ["--progress" if progress else "--no-progress"])


def run_train(args: argparse.Namespace) -> int:
    from jaxmlp.pipelines import distributed
    from jaxmlp.pipelines.train import steady_state_seconds, to_rows, train

    config = _config(args)
    if args.json:
        from jaxmlp.results.store import check_new_path

        check_new_path(args.json)  # fail before training, not after
    joined = distributed.rank()
    if config.processes > 1 and joined is None:  # start the processes, rank 0 writes the results
        return distributed.launch([_train_args(config, args.json if i == 0 else None, args.progress)
                                   for i in range(config.processes)])  # fmt: skip
    _cpu_only_if_asked(config.backend)
    distributed.initialize()

    import numpy as np

    from jaxmlp.pipelines.data import load_datasets

    datasets = load_datasets(config.dataset, config.data_dir, config.download, limit=config.limit)

    def on_start(meta: dict, compile_s: float) -> None:
        print(
            f"jaxmlp train: {datasets.label}; {meta['backend']} ({meta['device_kind']}); pipeline {config.pipeline}; "
            f"{config.epochs} epochs, batch {config.batch_size}, step size {config.step_size}, {config.workers} workers"
        )
        print(f"Compiled in {compile_s:0.2f} sec (before epoch 0, not in any epoch time)", flush=True)

    def on_epoch(r) -> None:
        print(f"Epoch {r.epoch} in {r.epoch_seconds:0.2f} sec")
        if r.diverged:
            print(f"Diverged: the training loss is not finite after epoch {r.epoch}; try a smaller --step-size")
        else:
            # As the tutorial prints them: float32 scalars at their shortest exact repr.
            print(f"Training set accuracy {np.float32(r.train_accuracy)!s}")
            print(f"Test set accuracy {np.float32(r.test_accuracy)!s}", flush=True)

    try:
        result = train(config, datasets, on_start=on_start, on_epoch=on_epoch, progress=_progress_bar(args.progress))
    except Exception as e:  # in a distributed run, a peer that stops breaks the collectives of the others
        if joined is None or isinstance(e, JaxmlpError):
            raise
        said = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise JaxmlpError(f"process {joined[0]} of {joined[1]} stopped: {said[-300:]}") from None
    records = result.records
    last = records[-1]
    steady = steady_state_seconds(records)
    over = f"median of epochs 1-{len(records) - 1}" if len(records) > 1 else "epoch 0 only"
    label = f" [{registry.SYNTHETIC_LABEL}]" if datasets.name == registry.SYNTHETIC else ""
    if last.diverged:
        print(f"Summary: DIVERGED at epoch {last.epoch} (no accuracy to report){label}")
    else:
        print(
            f"Summary: train accuracy {last.train_accuracy:.4f}, test accuracy {last.test_accuracy:.4f} after "
            f"{len(records)} epochs; epoch time {steady:0.2f} sec ({over}); "
            f"compile {records[0].compile_seconds:0.2f} sec{label}"
        )
    if args.json:
        from jaxmlp.results.records import TrainDocument
        from jaxmlp.results.store import write_json_new

        path = write_json_new(args.json, TrainDocument(tuple(to_rows(config, datasets, result))).to_json())
        print(f"Wrote {len(records)} epoch records to {path}")
    return EXIT_DIVERGED if last.diverged else 0


def _cpu_only_if_asked(backend: str | None) -> None:
    if backend == "cpu" and not os.environ.get("JAX_PLATFORMS"):
        import jax

        jax.config.update("jax_platforms", "cpu")  # don't start (and fill) a GPU we won't use


def run_profile(args: argparse.Namespace) -> int:
    from pathlib import Path

    from jaxmlp.pipelines.data import load_datasets
    from jaxmlp.pipelines.train import check_batch_size

    config = _config(args)
    if args.steps <= 0:
        raise JaxmlpError(f"--steps must be at least 1, got {args.steps}")
    _cpu_only_if_asked(config.backend)
    datasets = load_datasets(config.dataset, config.data_dir, config.download, limit=config.limit)
    check_batch_size(config.batch_size, len(datasets.train))

    import jax
    from jax import random

    from jaxmlp.measure.environment import select_device
    from jaxmlp.measure.profiling import capture
    from jaxmlp.measure.traces import capture_summary
    from jaxmlp.model import LAYER_SIZES, init_network_params
    from jaxmlp.pipelines.epochs import make_epoch

    device = select_device(config.backend)
    with jax.default_device(device):
        params = init_network_params(LAYER_SIZES, random.PRNGKey(config.seed))
        epoch = make_epoch(
            config.pipeline, datasets.train, batch_size=config.batch_size, workers=config.workers, device=device
        )
        print(f"jaxmlp profile: {datasets.label}; {device.platform} ({device.device_kind}); pipeline {config.pipeline}")
        result = capture(epoch, params, steps=args.steps, logdir=Path(args.logdir))
    unit = "epochs (one scan each)" if config.pipeline in registry.ONE_PROGRAM else "steps"
    print(f"Traced {result.steps} {unit} in {result.seconds:0.2f} sec into {result.run_dir}")
    for xplane in result.xplanes:
        s = capture_summary(xplane)
        if s.median_step_ms is not None:
            print(
                f"Median step {s.median_step_ms:0.3g} ms (load {s.median_load_ms:0.3g} ms, "
                f"compute {s.median_compute_ms:0.3g} ms); top op: {s.top_ops['op'].iloc[0]}"
            )
    print(f"Open it: jaxmlp tensorboard --logdir {args.logdir}   (then the PROFILE tab)")
    return 0


def tensorboard_command(logdir: str, port: int) -> list[str]:
    """TensorBoard with the profile plugin, bound to 127.0.0.1 only."""
    return [
        sys.executable,
        "-m",
        "tensorboard.main",
        "--logdir",
        str(logdir),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]


def run_tensorboard(args: argparse.Namespace) -> int:
    import importlib.util
    import subprocess

    for module, package in (("tensorboard", "tensorboard"), ("xprof", "tensorboard-plugin-profile")):
        if importlib.util.find_spec(module) is None:
            raise JaxmlpError(f"{package} is not installed: pip install {package} (or pip install -e .)")
    if not os.path.isdir(args.logdir):
        raise JaxmlpError(f"no traces folder {args.logdir}: capture one with jaxmlp profile --logdir {args.logdir}")
    print(f"TensorBoard on http://127.0.0.1:{args.port}/#profile over {args.logdir} (Ctrl-C stops it)", flush=True)
    try:
        return subprocess.run(tensorboard_command(args.logdir, args.port)).returncode
    except KeyboardInterrupt:
        return 0


def run_compare(args: argparse.Namespace) -> int:
    from jaxmlp.report import compare_text
    from jaxmlp.results.tables import compare_samples

    if not (args.threshold >= 0 and 0 < args.alpha < 1):
        raise JaxmlpError("--threshold must be 0 or more and --alpha between 0 and 1")
    (baseline, before), (new, after) = _samples(args.baseline), _samples(args.new)
    table = compare_samples(baseline, new, args.threshold, args.alpha)
    if table.empty:
        raise JaxmlpError(f"no benchmark appears in both {args.baseline} and {args.new}: nothing to compare")
    print(compare_text(table, args.threshold, args.alpha))
    if before != after:
        print(f"jaxmlp compare: warning: {args.baseline} ({'; '.join(sorted(before))}) and {args.new} "
              f"({'; '.join(sorted(after))}) come from different machines: their ratios compare the machines too",
              file=sys.stderr)  # fmt: skip
    return 1 if args.fail_on_regression and (table["verdict"] == "regression").any() else 0


def _samples(path: str) -> tuple[dict[str, list[float]], set[str]]:  # for `jaxmlp compare`
    """Raw samples by benchmark name from a pytest-benchmark file, or pooled from every one in a folder, and the
    machines they were measured on (each as one line)."""
    from jaxmlp.results.records import BenchmarkDocument
    from jaxmlp.results.store import ResultsStore, read_benchmarks

    if not os.path.isdir(path):
        documents = [(path, read_benchmarks(path))]
    else:
        scan = ResultsStore(path).scan()
        _warn_skipped(scan.skipped, "compare")
        documents = scan.of(BenchmarkDocument)
        if not documents:
            raise JaxmlpError(f"{path}: no pytest-benchmark JSON files in this folder")
    pooled: dict[str, list[float]] = {}
    machines = {", ".join(document.machine) for _, document in documents}
    for file, document in documents:
        try:
            samples = document.samples()
        except JaxmlpError as e:
            raise JaxmlpError(f"{file}: {e}") from None
        for name, values in samples.items():
            pooled.setdefault(name, []).extend(values)
    return pooled, machines


def _warn_skipped(skipped, command: str) -> None:
    """One line on stderr for each file a folder held that is not a result (never modified)."""
    for s in skipped:
        print(s.line(f"jaxmlp {command}"), file=sys.stderr)


def run_scaling(args: argparse.Namespace) -> int:
    from jaxmlp.measure import scaling
    from jaxmlp.report import text_summary
    from jaxmlp.results.frames import benchmark_rows
    from jaxmlp.results.store import ResultsStore

    visible = scaling.visible_devices(args.backend)
    devices = tuple(args.devices or scaling.default_devices(args.backend, visible))
    if any(n < 1 for n in devices) or args.epochs < 2 or args.calls < 2 or (args.limit is not None and args.limit < 1):
        raise JaxmlpError("--devices and --limit must be 1 or more, --epochs and --calls at least 2 (the first call "
                          "is apart)")  # fmt: skip
    if args.backend == "gpu" and max(devices) > visible:
        raise JaxmlpError(f"--devices {max(devices)} asks for more GPUs than the {visible} visible: choose at most "
                          f"{visible}")  # fmt: skip
    if args.backend == "gpu" and visible == 1:
        print("jaxmlp scaling: one GPU visible: N = 1 only (scaling needs more than one GPU)")
    options = [f"--{k.replace('_', '-')}={v}" for k, v in (("dataset", args.dataset), ("data_dir", args.data_dir),
               ("limit", args.limit), ("epochs", args.epochs), ("calls", args.calls)) if v is not None]  # fmt: skip
    print(f"jaxmlp scaling: the sharded pipeline on {', '.join(map(str, devices))} {args.backend} device(s), a fresh "
          f"process each; {registry.dataset_label(args.dataset)}", flush=True)  # fmt: skip
    document = scaling.run_scaling(devices, args.backend, options, progress=lambda line: print(line, flush=True))
    rows, _ = benchmark_rows(document)
    print(text_summary(rows))
    print(f"Saved {ResultsStore(args.out).save(document)}")
    return 0


def run_summary(args: argparse.Namespace) -> int:
    from jaxmlp.report import text_summary
    from jaxmlp.results.frames import benchmark_rows
    from jaxmlp.results.store import ResultsStore, read_benchmarks

    document = read_benchmarks(args.file)
    rows, _ = benchmark_rows(document, str(args.file))
    if rows.empty:
        raise JaxmlpError(f"{args.file}: holds no benchmarks; did the benchmark run select any?")
    print(text_summary(rows))
    if args.save:
        if not os.path.isdir(args.save):
            raise JaxmlpError(f"results folder {args.save} does not exist: create it or choose another")
        path = ResultsStore(args.save).save(document, args.name)
        print(f"\nSaved {path}")
    return 0


def run_report(args: argparse.Namespace) -> int:
    from pathlib import Path

    from jaxmlp.measure.traces import capture_summary
    from jaxmlp.report import write_report
    from jaxmlp.results.store import ResultsStore

    if args.out and os.path.exists(args.out):  # before reading anything
        raise JaxmlpError(f"{args.out} already exists and reports are never overwritten: choose a new folder")
    store = ResultsStore(args.results)
    results = store.load()
    _warn_skipped(results.skipped, "report")
    traces = [capture_summary(xplane) for xplane in results.captures]
    if results.runs.empty and not traces and not results.trials:
        raise JaxmlpError(f"no results in {args.results}: run `nox -s bench` (or jaxmlp train --json) first")
    paths = write_report(results, store, traces, Path(args.out) if args.out else None)
    n_files = results.runs["file"].nunique() if len(results.runs) else 0
    print(
        f"Report of {len(results.runs)} rows from {n_files} files and {len(traces)} traces: "
        + ", ".join(str(p) for p in paths)
    )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(_default_subcommand(list(sys.argv[1:] if argv is None else argv)))
    try:
        if args.command == "sweep":
            from jaxmlp.measure.sweep import check

            check(args)
        return args.run(args)
    except JaxmlpError as e:
        print(f"jaxmlp {args.command}: error: {e}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print(f"jaxmlp {args.command}: interrupted; nothing was written", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
