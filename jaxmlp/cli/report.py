"""``jaxmlp report``: every result under a folder rendered into a new report folder."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from pathlib import Path

from jaxmlp.cli import options
from jaxmlp.errors import JaxmlpError
from jaxmlp.report.write import write_report
from jaxmlp.results import history
from jaxmlp.results.findings import findings
from jaxmlp.results.store.frames import load_indexed
from jaxmlp.results.store.memo import IndexMemo
from jaxmlp.results.store.reading import Skipped
from jaxmlp.results.store.writing import ResultsStore, check_new_folder
from jaxmlp.results.sweep import tracked
from jaxmlp.results.tables import capture_summary


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Load every result file under --results (benchmarks, training runs, sweeps, bisections, "
        "scaling, trials, traces) and write summary.md, a self-contained index.html with plots, "
        "results.csv and samples.csv into a new folder."
    )
    options.add(parser, options.RESULTS, options.REPORT_OUT)


def warn_skipped(skipped: Iterable[Skipped], command: str) -> None:
    """One line on stderr for each file a folder held that is not a result (never modified)."""
    for s in skipped:
        print(s.line(f"jaxmlp {command}"), file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    if args.out:  # before reading anything
        check_new_folder(args.out, "--out")
    store = ResultsStore(args.results)
    results = load_indexed(store, "jaxmlp report")
    warn_skipped(results.skipped, "report")
    traces = [capture_summary(xplane) for xplane in results.captures]
    tracked_calls, _ = tracked.history(store.folder)
    if results.runs.empty and not traces and not results.trials and not results.bisections and not tracked_calls:
        raise JaxmlpError(
            f"no results in {args.results}: run `nox -s bench` (or jaxmlp train --json, or jaxmlp track) first"
        )
    memo = IndexMemo(store.folder, "jaxmlp report")  # what was computed before (changes, comparisons): kept
    past = history.of(results, memo)  # the findings' and the report's
    found = findings(results, traces, store.folder, past, memo)
    paths = write_report(results, store, traces, Path(args.out) if args.out else None, found, past)
    for finding in found:  # the answers first, as the page opens with them
        if finding.answered:
            print(finding.line())
    n_files = results.runs["file"].nunique() if len(results.runs) else 0
    print(
        f"\nReport of {len(results.runs)} rows from {n_files} files and {len(traces)} traces: "
        + ", ".join(str(p) for p in paths)
    )
    return 0
