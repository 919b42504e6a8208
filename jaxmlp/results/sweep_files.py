"""A measured sweep matrix as its folder of files: a pytest-benchmark file per cell that ran
(``jax-<release>[-flags<i>].json``) and ``cells.json``, written whole or not at all."""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from pathlib import Path

from jaxmlp.measure.records import ProcessResult
from jaxmlp.measure.sweep.matrix import Measured, Runner
from jaxmlp.results import layout
from jaxmlp.results.schema.sweep import Cell, CellsDocument, SweepDocument
from jaxmlp.results.store import ResultsStore, write_json_new


def to_document(label: str, processes: Sequence[ProcessResult], differs: Mapping[str, str] | None = None
                ) -> SweepDocument:  # fmt: skip
    """One cell's processes as its sweep document (a pytest-benchmark file; a raw sample per process)."""
    return SweepDocument(label, tuple(processes), datetime.datetime.now(datetime.UTC).isoformat(), dict(differs or {}))


def documents(measured: Measured) -> dict[str, SweepDocument]:
    """Each cell that ran, by name, as its document."""
    runners = measured.probed.runners
    return {name: to_document(runners[name].label, processes, measured.differs.get(name))
            for name, processes in measured.processes.items()}  # fmt: skip


def cells(runners: Sequence[Runner], measured: Measured) -> CellsDocument:
    """What became of every cell, with its file where it ran."""
    found = []
    for runner in runners:
        outcome = measured.probed.outcomes[runner.name]
        ran = runner.name in measured.processes
        file = layout.sweep_file(runner.label, runner.flags_index) if ran else None
        found.append(Cell(runner.label, runner.xla_flags, outcome.status, file, outcome.note))
    return CellsDocument(tuple(found))


def write(store: ResultsStore, runners: Sequence[Runner], measured: Measured, final: Path | None = None) -> Path:
    """The sweep's folder, atomically: the next ``jaxlib-<time>`` in ``store`` (or ``final``)."""
    with store.new_folder(layout.SWEEP, final) as folder:
        by_name = {r.name: r for r in runners}
        for name, doc in documents(measured).items():
            runner = by_name[name]
            write_json_new(folder.path / layout.sweep_file(runner.label, runner.flags_index), doc.to_json())
        write_json_new(folder.path / layout.CELLS_FILE, cells(runners, measured).to_json())
    return folder.path
