"""``jaxmlp sweep trials``: the detector checked here, A/A and injected-slowdown comparisons of one jax."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from jaxmlp.cli import options
from jaxmlp.cli.sweep.common import DEFAULT_WORKLOAD, WORKLOADS, measuring_of
from jaxmlp.errors import Interrupted, JaxmlpError
from jaxmlp.flows.progress import progress_bar
from jaxmlp.measure.sweep import trials as flow
from jaxmlp.measure.sweep.settings import Detector, Measuring, Trials
from jaxmlp.measure.sweep.trials import Trial
from jaxmlp.results.schema.trials import TrialsDocument, TrialSettings
from jaxmlp.results.store import layout
from jaxmlp.results.store.writing import ResultsStore, write_json_new
from jaxmlp.units import count

DESCRIPTION = (
    "Check the detector on this machine: --trials comparisons of the jax "
    "installed here against itself (A/A: a flag is a false alarm) and against itself with a "
    "known slowdown injected (a flag is a hit), each side --processes fresh processes; writes "
    "OUT/detector-<time>/trials.json."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    # Short runs of many short epochs: the setting that met the detector's goals on a 2-core machine (README).
    measured = "the setting measured here (README: how the detector was checked)"
    options.add(
        parser,
        options.WORKLOAD.but(help=f"the workload to compare against itself: {WORKLOADS} (default: {DEFAULT_WORKLOAD})"),
        options.DATASET.but(default="synthetic", why=measured),
        options.DATA_DIR,
        options.LIMIT.but(default=2000, why=measured),
        options.EPOCHS.but(default=16, why=measured),
        options.CALLS,
        options.PIN_CPU,
    )
    parser.add_argument(
        "--trials", type=options.whole_number, default=20, help="A/A and injected comparisons (default: %(default)s)"
    )
    options.add(
        parser,
        options.PROCESSES.but(
            default=14, why=measured, help="fresh processes a side of each comparison (default: %(default)s)"
        ),
    )
    parser.add_argument(
        "--inject-slowdown",
        type=options.number,
        default=0.10,
        help="the known slowdown, as a fraction (default: %(default)s)",
    )
    options.add(parser, *options.DETECTOR, options.OUT)


@dataclass(frozen=True)
class TrialsOutcome:
    """The trials filed: the file and its document."""

    path: Path
    document: TrialsDocument


def run(args: argparse.Namespace) -> int:
    """A/A and injected-slowdown trials of one version against itself."""
    settings = Trials(args.trials, args.processes, args.inject_slowdown)
    detector = Detector(args.threshold, args.alpha)
    measuring = replace(measuring_of(args), workloads=((args.workload or [DEFAULT_WORKLOAD])[0],))
    trials(settings=settings, detector=detector, measuring=measuring, out=Path(args.out))
    return 0


def trials(*, settings: Trials, detector: Detector, measuring: Measuring, out: Path) -> TrialsOutcome:
    """``settings``' A/A and injected-slowdown trials of the release installed here on ``measuring``'s workload,
    each judged by ``detector``, filed into a new detector folder under ``out`` (those that ended, when stopped)."""
    from tqdm import tqdm

    meta: dict[str, Any] = {}
    done: list[Trial] = []

    def keep(first: Mapping[str, Any], trial: Trial) -> None:  # before the trial's line is printed
        meta.update(first)
        done.append(trial)

    try:
        flow.run(settings, measuring, detector, progress_bar, keep, tqdm.write)
    except KeyboardInterrupt as e:  # the trials that ended before the signal are kept
        stopped = e if isinstance(e, Interrupted) else Interrupted()
        if done:
            said = f"kept {len(done)} of {settings.trials} trials"
            partial = {**meta, "partial": f"stopped by {stopped}; {said}"}
            try:
                path = _write(
                    TrialsDocument(partial, TrialSettings.of(settings, measuring, detector), tuple(done)), out
                )
                stopped.kept = f"{said} in {path}"
            except (JaxmlpError, OSError) as error:  # the stop's line still, saying why nothing was kept
                stopped.kept = f"the {len(done)} trials that ended could not be written: {error}"
        raise stopped from None
    doc = TrialsDocument(meta, TrialSettings.of(settings, measuring, detector), tuple(done))
    path = _write(doc, out)
    print(
        f"Injected {settings.inject_slowdown:.0%} slowdown flagged in {doc.injected_flagged}/{settings.trials} "
        f"trials (median ratio {doc.median_ratio('injected'):.3f}); A/A flagged in {doc.aa_flagged}/"
        f"{settings.trials} (median ratio {doc.median_ratio('aa'):.3f}); "
        f"{count(settings.processes, 'process', 'processes')} a side; jax {meta['jax']}. "
        f"Wrote {path}"
    )
    return TrialsOutcome(path, doc)


def _write(doc: TrialsDocument, out: Path) -> Path:
    with ResultsStore(out).new_folder(layout.DETECTOR) as folder:
        write_json_new(folder.path / layout.TRIALS_FILE, doc.to_json())
    return folder.path / layout.TRIALS_FILE
