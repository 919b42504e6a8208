"""``jaxmlp compare BASELINE NEW``: benchmark by benchmark, is NEW slower? (docs/methods/statistics.md)"""

from __future__ import annotations

import argparse
import os
import sys

from jaxmlp import errors, registry
from jaxmlp.cli import options
from jaxmlp.cli.report import warn_skipped
from jaxmlp.errors import JaxmlpError
from jaxmlp.report.text import compare_text, memory_text
from jaxmlp.results.schema.bench import BenchmarkDocument
from jaxmlp.results.store.reading import incomplete_sweep, read_benchmarks
from jaxmlp.results.store.writing import ResultsStore
from jaxmlp.results.tables import RUN_PEAK, compare_memory, compare_samples, undecidable, undecided_memory


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Compare two pytest-benchmark JSON files (or folders of them) with raw samples, benchmark "
        "by benchmark. A regression is flagged only when p < --alpha (one-sided Mann-Whitney U) AND "
        "the ratio of medians exceeds 1 + --threshold; improvements likewise. Peak memory, where "
        "both record it, is compared as a second metric (flagged beyond 1 + --memory-threshold). "
        "Each verdict is slower, faster, the same (the 95%% interval within the threshold both ways) or "
        "inconclusive. Exit 3 when any is slower (or a peak beyond the memory threshold), 1 when a sample is "
        "not a number, 4 with --strict when any is inconclusive (docs/reference/exit-codes.md)."
    )
    options.add(
        parser,
        options.own("baseline", "file or folder of pytest-benchmark JSON (raw samples: --benchmark-save-data)"),
        options.own("new", "file or folder of pytest-benchmark JSON"),
        *options.DETECTOR,
        options.own(
            "--memory-threshold",
            "flag a benchmark's peak memory beyond 1 + this ratio (default: %(default)s)",
            registry.MEMORY_THRESHOLD,
            options.number,
        ),
        options.STRICT,
        options.own(
            "--fail-on-regression", "kept for older scripts: the exit code gates without it", action="store_true"
        ),
    )


def run(args: argparse.Namespace) -> int:
    errors.detector(args.threshold, args.alpha)
    errors.finite_at_least_zero("--memory-threshold", args.memory_threshold)
    for side in (args.baseline, args.new):
        if (folder := incomplete_sweep(side)) is not None:
            print(
                f"jaxmlp compare: note: {side} is from an INCOMPLETE sweep ({folder}): its samples so far; "
                f"`jaxmlp sweep resume {folder}` measures the rest",
                file=sys.stderr,
            )
    documents = documents_of(args.baseline), documents_of(args.new)  # each file read once, for both metrics
    (baseline, before), (new, after) = (samples(side) for side in documents)
    memory = compare_memory(*comparable_peaks(*documents), args.memory_threshold)
    table = compare_samples(baseline, new, args.threshold, args.alpha)
    if table.empty:
        raise JaxmlpError(f"no benchmark appears in both {args.baseline} and {args.new}: nothing to compare")
    if before != after:  # the first line: every ratio below compares the machines too
        print(
            f"jaxmlp compare: warning: {args.baseline} ({'; '.join(sorted(before))}) and {args.new} "
            f"({'; '.join(sorted(after))}) come from different machines: their ratios compare the machines too",
            file=sys.stderr,
            flush=True,
        )
    undecided = undecidable(table, baseline, new, args.threshold, args.alpha)
    if undecided is not None:
        print(f"{undecided.line(len(table), args.threshold, args.alpha)}\n", flush=True)
    memory = undecided_memory(memory, undecided)
    print(compare_text(table, args.threshold, args.alpha))
    invalid = int((~table["valid"]).sum())
    if invalid:  # never a silent pass: a NaN time is a broken measurement, whatever the other samples say
        print(
            f"jaxmlp compare: {invalid} benchmark(s) have samples that are not finite numbers (NaN or inf): "
            "they could not be measured (their verdict is inconclusive); rerun them",
            file=sys.stderr,
        )
    if len(memory):
        print(f"\n{memory_text(memory, args.memory_threshold)}")
        unsure = int(memory["verdict"].str.endswith(", undecided").sum())
        if unsure:
            print(
                f"{unsure} peak(s) differ beyond the memory threshold in runs too short to decide anything "
                "(marked undecided, not counted above): measure again with the rounds said first"
            )
    heavier = ["slower"] if len(memory) and (memory["verdict"] == "memory regression").any() else []
    return errors.gate([*table["verdict"], *heavier], invalid, args.strict)


Documents = list[tuple[str, BenchmarkDocument]]


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
