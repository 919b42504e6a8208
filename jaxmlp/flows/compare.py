"""Benchmark by benchmark, is NEW slower than BASELINE (``jaxmlp compare``; docs/methods/statistics.md)?"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Any

from jaxmlp import errors
from jaxmlp.errors import JaxmlpError
from jaxmlp.flows.progress import warn_skipped
from jaxmlp.measure.sweep.settings import Detector
from jaxmlp.report.text import compare_text, memory_text
from jaxmlp.results.schema.bench import BenchmarkDocument
from jaxmlp.results.store.reading import incomplete_sweep, read_benchmarks
from jaxmlp.results.store.writing import ResultsStore
from jaxmlp.results.tables import RUN_PEAK, compare_memory, compare_samples, undecidable, undecided_memory

Documents = list[tuple[str, BenchmarkDocument]]


@dataclass(frozen=True)
class CompareOutcome:
    """The comparison: its table of verdicts, that of peak memory, and the gate's exit code."""

    table: Any
    memory: Any
    code: int


def compare(*, baseline: str, new: str, detector: Detector, memory_threshold: float, strict: bool) -> CompareOutcome:
    """Each benchmark of ``new`` against ``baseline`` (files or folders), by ``detector``, and their peaks beyond 1 +
    ``memory_threshold``, printed; the gate's code (`errors.gate`, ``strict``: inconclusive fails)."""
    errors.finite_at_least_zero("--memory-threshold", memory_threshold)
    threshold, alpha = detector.threshold, detector.alpha
    for side in (baseline, new):
        if (folder := incomplete_sweep(side)) is not None:
            print(
                f"jaxmlp compare: note: {side} is from an INCOMPLETE sweep ({folder}): its samples so far; "
                f"`jaxmlp sweep resume {folder}` measures the rest",
                file=sys.stderr,
            )
    documents = documents_of(baseline), documents_of(new)  # each file read once, for both metrics
    (before, before_on), (after, after_on) = (samples(side) for side in documents)
    memory = compare_memory(*comparable_peaks(*documents), memory_threshold)
    table = compare_samples(before, after, threshold, alpha)
    if table.empty:
        raise JaxmlpError(f"no benchmark appears in both {baseline} and {new}: nothing to compare")
    if before_on != after_on:  # the first line: every ratio below compares the machines too
        print(
            f"jaxmlp compare: warning: {baseline} ({'; '.join(sorted(before_on))}) and {new} "
            f"({'; '.join(sorted(after_on))}) come from different machines: their ratios compare the machines too",
            file=sys.stderr,
            flush=True,
        )
    undecided = undecidable(table, before, after, threshold, alpha)
    if undecided is not None:
        print(f"{undecided.line(len(table), threshold, alpha)}\n", flush=True)
    memory = undecided_memory(memory, undecided)
    print(compare_text(table, threshold, alpha))
    invalid = int((~table["valid"]).sum())
    if invalid:  # never a silent pass: a NaN time is a broken measurement, whatever the other samples say
        print(
            f"jaxmlp compare: {invalid} benchmark(s) have samples that are not finite numbers (NaN or inf): "
            "they could not be measured (their verdict is inconclusive); rerun them",
            file=sys.stderr,
        )
    if len(memory):
        print(f"\n{memory_text(memory, memory_threshold)}")
        if unsure := int(memory["verdict"].str.endswith(", undecided").sum()):
            print(
                f"{unsure} peak(s) differ beyond the memory threshold in runs too short to decide anything "
                "(marked undecided, not counted above): measure again with the rounds said first"
            )
    heavier = ["slower"] if len(memory) and (memory["verdict"] == "memory regression").any() else []
    return CompareOutcome(table, memory, errors.gate([*table["verdict"], *heavier], invalid, strict))


def documents_of(path: str) -> Documents:
    """The pytest-benchmark documents of a file, or of every one in a folder (what it skips, said in a warning)."""
    if not os.path.isdir(path):
        return [(path, read_benchmarks(path))]
    scan = ResultsStore(path).scan()
    warn_skipped(scan.skipped, "compare")
    documents = [(str(p), d) for p, d in scan.of(BenchmarkDocument)]
    if not documents:
        raise JaxmlpError(f"{path}: no pytest-benchmark JSON files in this folder")
    return documents


def peak_memory(documents: Documents) -> dict[str, float]:
    """Each benchmark's peak host memory from one document, or the highest of several."""
    out: dict[str, float] = {}
    for _, document in documents:
        for name, peak in document.peak_memory().items():
            out[name] = max(peak, out.get(name, 0.0))
    return out


def comparable_peaks(baseline: Documents, new: Documents) -> tuple[dict[str, float], dict[str, float]]:
    """The peaks to compare: per benchmark where every peak is its own, else each side's largest (`RUN_PEAK`)."""
    peaks = peak_memory(baseline), peak_memory(new)
    if all(document.peaks_own() for _, document in (*baseline, *new)):
        return peaks
    a, b = ({RUN_PEAK: max(side.values())} if side else {} for side in peaks)
    return a, b


def samples(documents: Documents) -> tuple[dict[str, list[float]], set[str]]:
    """Raw samples by benchmark from one document, or pooled from several, and their machines (one line each)."""
    pooled: dict[str, list[float]] = {}
    machines = {", ".join(document.measured_on) for _, document in documents}
    for file, document in documents:
        try:
            found = document.samples()
        except JaxmlpError as e:
            raise JaxmlpError(f"{file}: {e}") from None
        for name, values in found.items():
            pooled.setdefault(name, []).extend(values)
    return pooled, machines
