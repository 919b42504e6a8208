"""Time to accuracy (``jaxmlp tta``): each pipeline and precision trained over N seeds until the target, its table
and its file."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from jaxmlp.errors import EXIT_FAILED, keeping
from jaxmlp.flows import Filed
from jaxmlp.flows.train import cpu_only_if_asked
from jaxmlp.measure import tta
from jaxmlp.measure.environment import metadata, select_device
from jaxmlp.measure.train import check_batch_size
from jaxmlp.measure.tta import TtaConfig, TtaRun, short_of_target
from jaxmlp.pipelines.epoch_base import check_precision
from jaxmlp.pipelines.loaders import load_splits
from jaxmlp.report.run_summaries import tta_summary
from jaxmlp.report.text import render
from jaxmlp.results.schema.tta import TtaDocument
from jaxmlp.results.store.writing import ResultsStore, check_folder
from jaxmlp.units import count, percent


def measure(*, config: TtaConfig, dataset: str, data_dir: str | None, limit: int | None, out: Path) -> Filed:
    """``config``'s runs on the ``dataset`` (its first ``limit`` training images), each printed as it ends, then
    their table; filed under ``out`` (the runs that ended, when stopped)."""
    check_folder(out, "--out")  # fail before measuring, not after
    cpu_only_if_asked(config.backend)
    device = select_device(config.backend)
    for precision in config.precisions:
        check_precision(precision, device.platform)
    datasets = load_splits(dataset, data_dir, limit=limit, pipelines=config.pipelines)
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

    settings = {**dataclasses.asdict(config), "dataset": datasets.name, "data_source": datasets.source, "limit": limit}
    runs: list[TtaRun] = []

    def partial(said: str) -> Path:
        return ResultsStore(out).save(
            TtaDocument(settings, {**meta, "partial": said}, tuple(r.to_json() for r in runs))
        )

    asked = len(config.pipelines) * len(config.precisions) * config.runs
    with keeping(runs, count(asked, "run"), lambda n: f"{count(n, 'run')} that ended", partial):
        tta.measure(config, datasets, on_run, runs)
    document = TtaDocument(settings, meta, tuple(r.to_json() for r in runs))
    path = ResultsStore(out).save(document)
    print(render([tta_summary(document, "Time to accuracy")]))
    print(f"Wrote {count(len(runs), 'run')} to {path}")
    short = short_line(config, runs)
    return Filed(path, EXIT_FAILED, (short,)) if short else Filed(path)


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
