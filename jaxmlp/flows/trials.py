"""The detector checked here (``jaxmlp sweep trials``): A/A and injected-slowdown comparisons of one jax."""

from __future__ import annotations

import functools
import os
import statistics
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jaxmlp.errors import keeping
from jaxmlp.flows.progress import progress_bar
from jaxmlp.measure.sweep import trials as flow
from jaxmlp.measure.sweep.settings import Detector, Measuring, Trials
from jaxmlp.measure.sweep.trials import Trial
from jaxmlp.report.corpus_sections import rates_line
from jaxmlp.results.schema.trials import TrialsDocument, TrialSettings
from jaxmlp.results.store import layout
from jaxmlp.results.store.writing import ResultsStore, write_json_new
from jaxmlp.results.sweep.settling import more_processes
from jaxmlp.units import count, minutes


@dataclass(frozen=True)
class TrialsOutcome:
    """The trials filed: the file and its document."""

    path: Path
    document: TrialsDocument


def trials(*, settings: Trials, detector: Detector, measuring: Measuring, out: Path) -> TrialsOutcome:
    """``settings``' A/A and injected-slowdown trials of the release installed here on ``measuring``'s workload,
    each judged by ``detector``, filed into a new detector folder under ``out`` (those that ended, when stopped)."""
    from tqdm import tqdm

    load = {"load_average_start": list(os.getloadavg())}  # the machine's load, said beside the rates
    meta: dict[str, Any] = {}
    done: list[Trial] = []

    def keep(first: Mapping[str, Any], trial: Trial) -> None:  # before the trial's line is printed
        meta.update({**first, **load, "load_average_end": list(os.getloadavg())})
        done.append(trial)

    recorded = TrialSettings.of(settings, measuring, detector)

    def partial(said: str) -> Path:
        return _write(TrialsDocument({**meta, "partial": said}, recorded, tuple(done)), out)

    bar = functools.partial(progress_bar, unit="trial")
    settle = functools.partial(more_processes, threshold=detector.threshold)  # processes to add to an unsettled one
    with keeping(done, f"{settings.trials} trials", lambda n: f"{n} trials that ended", partial):
        flow.run(settings, measuring, detector, bar, keep, tqdm.write, settle)
    doc = TrialsDocument(meta, recorded, tuple(done))
    path = _write(doc, out)
    print(rates_line(doc))
    print(minutes_line(doc))
    print(
        f"Median ratios: injected {doc.median_ratio('injected'):.3f}, A/A {doc.median_ratio('aa'):.3f}; "
        f"{count(settings.processes, 'process', 'processes')} a side at first; jax {meta['jax']}. Wrote {path}"
    )
    return TrialsOutcome(path, doc)


def minutes_line(doc: TrialsDocument) -> str:
    """How long each comparison took to settle (or to end unsettled), its median and longest."""
    told = []
    for key, name in (("aa", "A/A"), ("injected", "injected")):
        if seconds := doc.seconds(key):
            told.append(f"{name} median {minutes(statistics.median(seconds))}, longest {minutes(max(seconds))}")
    return "Time to a verdict: " + ("; ".join(told) or "not recorded")


def _write(doc: TrialsDocument, out: Path) -> Path:
    with ResultsStore(out).new_folder(layout.DETECTOR) as folder:
        write_json_new(folder.path / layout.TRIALS_FILE, doc.to_json())
    return folder.path / layout.TRIALS_FILE
