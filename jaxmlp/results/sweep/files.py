"""A measured sweep matrix as its folder of files, and while it is measured its log (`RunLog`)."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import json
import os
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jaxmlp.errors import JaxmlpError
from jaxmlp.measure.programs import HLO_TEXT
from jaxmlp.measure.records import ProcessResult
from jaxmlp.measure.sweep.matrix import Failure, Measured, Outcome, Probed, Runner
from jaxmlp.measure.sweep.pairs import recorded
from jaxmlp.measure.sweep.settings import Matrix, Measuring
from jaxmlp.results.schema.common import JSON, SWEEP_LOG, header
from jaxmlp.results.schema.sweep import NODE, Cell, CellsDocument, SweepDocument
from jaxmlp.results.store import layout
from jaxmlp.results.store.writing import ResultsStore, new_dir, write_gzip_new, write_json_new, write_new


def to_document(
    label: str, processes: Sequence[ProcessResult], differs: Mapping[str, str] | None = None
) -> SweepDocument:
    """One cell's processes as its sweep document (a pytest-benchmark file; a raw sample per process), ``differs``
    the workloads whose values differ from the cells it is compared with (`pairs.recorded`)."""
    now = datetime.datetime.now(datetime.UTC).isoformat()
    return SweepDocument(label, tuple(processes), now, dict(differs or {}), pairwise=True)


def documents(measured: Measured) -> dict[str, SweepDocument]:
    """Each cell that ran, by name, as its document."""
    runners, differs = measured.probed.runners, recorded(measured)
    return {
        name: to_document(runners[name].label, processes, differs.get(name))
        for name, processes in measured.processes.items()
    }


PROCESS_FACTS = ("peak_rss_bytes", "peak_rss_why", "device_peak_bytes", "device_peak_why")
"""What ``cells.json`` keeps of each probe process: its own and the device's peak memory, or why not."""


def without_hlo(runner: Runner, result: ProcessResult) -> tuple[ProcessResult, dict[str, str]]:
    """``result`` with each workload's HLO text replaced by its file's name, and the texts by file."""
    texts: dict[str, str] = {}
    workloads = {}
    for name, times in result.workloads.items():
        program = None if times.program is None else dict(times.program)
        if program is not None and HLO_TEXT in program:
            file = layout.hlo_file(runner.label, runner.flags_index, name)
            texts[file] = program.pop(HLO_TEXT)
            program["hlo_file"] = file
        workloads[name] = dataclasses.replace(times, program=program)
    return dataclasses.replace(result, workloads=workloads), texts


def store_hlo(folder: Path, runners: Sequence[Runner], probed: Probed) -> Probed:
    """The probes' HLO texts written gzipped into ``folder``, and the probed cells without them."""
    by_name = {r.name: r for r in runners}
    reference = {}
    for name, result in probed.reference.items():
        reference[name], texts = without_hlo(by_name[name], result)
        for file, text in texts.items():
            if not (folder / file).exists():
                write_gzip_new(folder / file, text)
    return dataclasses.replace(probed, reference=reference)


def cells(runners: Sequence[Runner], measured: Measured, complete: bool = True) -> CellsDocument:
    """What became of every cell: its file, its failed processes, and what its probe found compiled."""
    found = []
    for runner in runners:
        outcome = measured.probed.outcomes[runner.name]
        ran = runner.name in measured.processes
        file = layout.sweep_file(runner.label, runner.flags_index) if ran else None
        failed = [f.reason for f in measured.failures if f.cell == runner.name]
        probe = measured.probed.reference.get(runner.name)
        programs = {} if probe is None else {w: dict(t.program) for w, t in probe.workloads.items() if t.program}
        process = {} if probe is None else {k: probe.metadata[k] for k in PROCESS_FACTS if k in probe.metadata}
        found.append(
            Cell(
                runner.label,
                runner.xla_flags,
                outcome.status,
                file,
                outcome.note,
                len(failed),
                failed[-1] if failed else "",
                programs,
                process,
            )
        )
    return CellsDocument(tuple(found), complete, float("nan") if measured.limit is None else measured.limit)


def write_files(folder: Path, runners: Sequence[Runner], measured: Measured, complete: bool = True) -> None:
    """Each cell's file, its probe's optimized HLO (gzipped) and ``cells.json`` into ``folder``."""
    by_name = {r.name: r for r in runners}
    measured = dataclasses.replace(measured, probed=store_hlo(folder, runners, measured.probed))
    for name, doc in documents(measured).items():
        runner = by_name[name]
        write_json_new(folder / layout.sweep_file(runner.label, runner.flags_index), doc.to_json())
    write_json_new(folder / layout.CELLS_FILE, cells(runners, measured, complete).to_json())


def write(store: ResultsStore, runners: Sequence[Runner], measured: Measured, final: Path | None = None) -> Path:
    """The sweep's next ``sweep-<time>`` folder in ``store`` (or ``final``), atomically; incomplete where stopped."""
    with store.new_folder(layout.SWEEP, final) as folder:
        write_files(folder.path, runners, measured, measured.complete)
    return folder.path


# --- a run being measured: its log, kept durably as it goes ------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """What a sweep run set out to measure, once its cells were probed: enough to go on with it later."""

    runners: tuple[Runner, ...]  # every cell, measured or not
    probed: Probed  # without the probes' own results (only what became of each cell, and its cost)
    differs: dict[str, dict[str, str]]
    matrix: Matrix
    limit: float

    def to_json(self) -> JSON:
        return {
            **header(SWEEP_LOG),
            "measuring": self.runners[0].measuring.to_json(),
            "runners": [
                {"label": r.label, "python": r.python, "xla_flags": r.xla_flags, "flags_index": r.flags_index}
                for r in self.runners
            ],
            "measured": list(self.probed.runners),
            "seconds": self.probed.seconds,
            "outcomes": {k: dataclasses.asdict(v) for k, v in self.probed.outcomes.items()},
            "differs": self.differs,
            "processes": self.matrix.processes,
            "xla_flags": list(self.matrix.xla_flags),
            "tolerance": self.matrix.tolerance,
            "timeout": self.matrix.timeout,
            "limit": self.limit,
            "reference": {k: v.to_json() for k, v in self.probed.reference.items()},
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Plan:
        measuring = Measuring.from_json(doc["measuring"])
        runners = tuple(
            Runner(r["label"], r["python"], measuring, r["xla_flags"], r["flags_index"]) for r in doc["runners"]
        )
        by_name = {r.name: r for r in runners}
        reference = {k: ProcessResult.from_json(v) for k, v in (doc.get("reference") or {}).items()}
        probed = Probed(
            {name: by_name[name] for name in doc["measured"]},
            {k: Outcome(**v) for k, v in doc["outcomes"].items()},
            dict(doc["seconds"]),
            reference,
        )
        matrix = Matrix(
            processes=int(doc["processes"]),
            xla_flags=tuple(doc["xla_flags"]),
            tolerance=float(doc["tolerance"]),
            timeout=doc["timeout"],
        )
        return cls(runners, probed, dict(doc["differs"]), matrix, float(doc["limit"]))


class RunLog:
    """A sweep run's folder while it is measured: ``samples.jsonl`` and the ``INCOMPLETE`` mark until its last round."""

    def __init__(self, folder: Path, log: str = layout.SAMPLES_FILE):
        self.folder = folder
        self.log = folder / log  # another name: a rank's own samples, taken into rank 0's log at the end (`take`)
        self.mark = folder / layout.INCOMPLETE_FILE

    @classmethod
    def create(cls, store: ResultsStore, kind: str = layout.SWEEP) -> RunLog:
        """A new ``sweep-<time>`` folder in ``store`` (``timeline-<time>`` for a timeline), marked incomplete."""
        store.folder.mkdir(parents=True, exist_ok=True)
        run = cls(new_dir(store.folder, layout.name(kind)))
        write_new(run.mark, "This sweep did not finish: `jaxmlp sweep resume FOLDER` measures what is missing.\n")
        return run

    @property
    def incomplete(self) -> bool:
        return self.mark.exists()

    def _append(self, line: JSON) -> None:
        with self.log.open("a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")
            f.flush()
            os.fsync(f.fileno())

    def take(self, other: Path) -> None:
        """The sample lines of ``other`` (another rank's log) appended here and ``other`` removed, renamed first."""
        taken = other.rename(other.with_suffix(".taken"))
        lines = taken.read_text(encoding="utf-8").splitlines()
        with self.log.open("a", encoding="utf-8") as f:
            for line in lines:
                with contextlib.suppress(json.JSONDecodeError):
                    json.loads(line)  # a line cut short by a kill is dropped: its process is measured again
                    f.write(line + "\n")
            f.flush()
            os.fsync(f.fileno())
        taken.unlink()

    def start(self, plan: Plan) -> None:
        """The plan first in the log; its probes' optimized HLO into the folder, gzipped, and out of the log."""
        self._append(dataclasses.replace(plan, probed=store_hlo(self.folder, plan.runners, plan.probed)).to_json())

    def record(self, cell: str, round_: int, sample: ProcessResult | Failure) -> None:
        """One process's sample (or failure) appended; a sample names the node (host) that measured it."""
        if isinstance(sample, ProcessResult) and not sample.metadata.get(NODE):
            sample = dataclasses.replace(sample, metadata={**sample.metadata, NODE: socket.gethostname()})
        self._append(
            sample.to_json()
            if isinstance(sample, Failure)
            else {"cell": cell, "round": round_, "result": sample.to_json()}
        )

    def read(self) -> tuple[Plan, dict[tuple[str, int], ProcessResult | Failure]]:
        """The plan and every process recorded (the last of each cell and round; a torn last line is dropped)."""
        if not self.log.is_file():
            raise JaxmlpError(f"{self.folder} holds no {layout.SAMPLES_FILE}: not a sweep run that can be resumed")
        lines = self.log.read_text(encoding="utf-8").splitlines()
        try:
            plan = Plan.from_json(json.loads(lines[0]))
        except (IndexError, KeyError, TypeError, ValueError) as e:
            raise JaxmlpError(f"{self.log}: its first line is no sweep plan ({type(e).__name__}: {e})") from None
        samples: dict[tuple[str, int], ProcessResult | Failure] = {}
        for line in lines[1:]:
            try:
                doc = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut short by a kill: that process is measured again
            key = (str(doc["cell"]), int(doc["round"]))
            samples[key] = (
                Failure(key[0], key[1], str(doc["failed"]))
                if "failed" in doc
                else ProcessResult.from_json(doc["result"])
            )
        return plan, samples

    def measured(self, plan: Plan, samples: Mapping[tuple[str, int], ProcessResult | Failure]) -> Measured:
        """The log as a `Measured` (the samples of each cell in round order), for its files."""
        processes: dict[str, list[ProcessResult]] = {name: [] for name in plan.probed.runners}
        failures = []
        for (cell, _), sample in sorted(samples.items(), key=lambda item: item[0][1]):
            if isinstance(sample, Failure):
                failures.append(sample)
            elif cell in processes:
                processes[cell].append(sample)
        kept = {k: v for k, v in processes.items() if v}
        return Measured(plan.probed, kept, plan.differs, tuple(failures), plan.limit, tolerance=plan.matrix.tolerance)

    def write_cells(self, plan: Plan, complete: bool) -> Measured:
        """The cell files and ``cells.json`` from the log; the mark removed once ``complete``."""
        plan, samples = self.read()
        measured = self.measured(plan, samples)
        for old in [*self.folder.glob("jax-*.json"), self.folder / layout.CELLS_FILE]:
            old.unlink(missing_ok=True)
        write_files(self.folder, plan.runners, measured, complete)
        if complete:
            self.mark.unlink(missing_ok=True)
        return measured
