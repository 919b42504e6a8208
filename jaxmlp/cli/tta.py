"""``jaxmlp tta``: time to accuracy per pipeline and precision over N seeds, its table and its file."""

from __future__ import annotations

import argparse
import dataclasses
import sys

from jaxmlp.cli import options
from jaxmlp.errors import EXIT_FAILED, Interrupted, JaxmlpError
from jaxmlp.flows.train import cpu_only_if_asked
from jaxmlp.measure.environment import metadata, select_device
from jaxmlp.measure.train import check_batch_size
from jaxmlp.measure.tta import TtaConfig, TtaRun, measure, short_of_target
from jaxmlp.pipelines.epoch_base import check_precision
from jaxmlp.pipelines.loaders import load_splits
from jaxmlp.report.run_summaries import tta_summary
from jaxmlp.report.text import render
from jaxmlp.results.schema.tta import TtaDocument
from jaxmlp.results.store.writing import ResultsStore, check_folder
from jaxmlp.units import count, percent

DEFAULTS = TtaConfig()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Time to accuracy, MLPerf style: the wall time from the start of a run (data preparation "
        "and compilation included, each also shown apart) until the test accuracy first reaches "
        "--target, evaluated after every epoch (or every --eval-every steps), over --runs seeds, "
        "per pipeline and precision."
    )
    parser.epilog = (
        "Exit status 1 where, for a pipeline and precision, at most half the runs reached --target within "
        "--max-epochs: the median time over its runs is then no time (the runs are written all the same). "
        "Stopped (Ctrl-C, SIGTERM), the runs that ended are written, marked partial."
    )
    options.add(
        parser,
        options.own(
            "--target", "test accuracy to reach, a fraction (default: %(default)s)", DEFAULTS.target, options.number
        ),
        options.own(
            "--runs",
            "runs of each pipeline and precision, seeds 0..RUNS-1 (default: %(default)s)",
            DEFAULTS.runs,
            options.whole_number,
        ),
        options.own(
            "--eval-every",
            "evaluate every STEPS training steps (default: after every epoch)",
            None,
            options.whole_number,
            metavar="STEPS",
        ),
        options.own(
            "--max-epochs",
            "a run that has not reached the target after this many epochs stops and says so (default: %(default)s)",
            DEFAULTS.max_epochs,
            options.whole_number,
        ),
        options.EACH_PIPELINE,
        options.EACH_PRECISION,
        options.BATCH_SIZE,
        options.BACKEND,
        *options.DATA,
        options.OUT,
    )


def config_of(args: argparse.Namespace) -> TtaConfig:
    return TtaConfig(
        target=args.target,
        runs=args.runs,
        pipelines=tuple(dict.fromkeys(args.pipeline or ["scan"])),
        precisions=tuple(dict.fromkeys(args.precision or ["f32"])),
        eval_every=args.eval_every,
        max_epochs=args.max_epochs,
        batch_size=args.batch_size,
        backend=args.backend,
    )


def run(args: argparse.Namespace) -> int:
    config = config_of(args)
    check_folder(args.out, "--out")  # fail before measuring, not after
    cpu_only_if_asked(config.backend)
    device = select_device(config.backend)
    for precision in config.precisions:
        check_precision(precision, device.platform)
    datasets = load_splits(args.dataset, args.data_dir, limit=args.limit, pipelines=config.pipelines)
    check_batch_size(config.batch_size, len(datasets.train))
    meta = metadata(device)
    print(
        f"jaxmlp tta: {datasets.label}; {meta['backend']} ({meta['device_kind']}); target {config.target}, "
        f"{count(config.runs, 'run')} of {', '.join(config.pipelines)} in {', '.join(config.precisions)}",
        flush=True,
    )

    def on_run(r: TtaRun) -> None:
        said = f"reached in {r.seconds:.2f} s" if r.reached else f"not reached (best {r.best_accuracy:.4f})"
        print(
            f"  {r.pipeline} {r.precision} seed {r.seed}: {said} after {count(r.epochs, 'epoch')} (data "
            f"{r.data_seconds:.2f} s, compile {r.compile_seconds:.2f} s)",
            flush=True,
        )

    settings = {
        **dataclasses.asdict(config),
        "dataset": datasets.name,
        "data_source": datasets.source,
        "limit": args.limit,
    }
    runs: list[TtaRun] = []
    try:
        measure(config, datasets, on_run, runs)
    except KeyboardInterrupt as e:  # the runs that ended before the signal are kept
        stopped = e if isinstance(e, Interrupted) else Interrupted()
        if runs:
            asked = len(config.pipelines) * len(config.precisions) * config.runs
            said = f"kept {len(runs)} of {count(asked, 'run')}"
            partial = {**meta, "partial": f"stopped by {stopped}; {said}"}
            try:
                path = ResultsStore(args.out).save(TtaDocument(settings, partial, tuple(r.to_json() for r in runs)))
                stopped.kept = f"{said} in {path}"
            except (JaxmlpError, OSError) as error:  # the stop's line still, saying why nothing was kept
                stopped.kept = f"the {count(len(runs), 'run')} that ended could not be written: {error}"
        raise stopped from None
    document = TtaDocument(settings, meta, tuple(r.to_json() for r in runs))
    path = ResultsStore(args.out).save(document)
    print(render([tta_summary(document, "Time to accuracy")]))
    print(f"Wrote {count(len(runs), 'run')} to {path}")
    short = short_line(config, runs)
    if short:
        print(f"{args.prog}: {short}", file=sys.stderr)
        return EXIT_FAILED
    return 0


def short_line(config: TtaConfig, runs: list[TtaRun]) -> str | None:
    """The last line where at most half of ``runs`` reached the target for some pipeline and precision; else None."""
    short = short_of_target(runs)
    if not short:
        return None
    within = f"{percent(config.target)} within {count(config.max_epochs, 'epoch')}"
    said = (
        f"no run reached {within}"
        if not any(r.reached for r in runs)
        else f"at most half the runs reached {within} ({'; '.join(short)}), so no median time to it"
    )
    return f"{said}: give them more --max-epochs or set a lower --target"
