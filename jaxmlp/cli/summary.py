"""``jaxmlp summary FILE``: a benchmark run's answers in a few short tables (and the file filed in a folder)."""

from __future__ import annotations

import argparse

from jaxmlp.errors import JaxmlpError
from jaxmlp.report.text import text_summary
from jaxmlp.results import layout
from jaxmlp.results.frames import benchmark_rows
from jaxmlp.results.store import ResultsStore, check_folder, incomplete_sweep, read_benchmarks


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Print the compact summary of a pytest-benchmark JSON file: jit/eager and vmap/loop "
        "speedups, the best worker count, and the pipeline ladder against the compute floor."
    )
    parser.add_argument("file", help="a pytest-benchmark JSON file (written with --benchmark-json)")
    parser.add_argument("--save", metavar="DIR", help="also copy the file, atomically and under a new name (never "
                        "over another run), into DIR")  # fmt: skip
    parser.add_argument("--name", help=f"the saved file's name (default: {layout.BENCH}-<UTC time of the run>-"
                        "<backends>.json)")  # fmt: skip
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.save:  # before reading anything
        check_folder(args.save, "--save")
    document = read_benchmarks(args.file)
    rows, _ = benchmark_rows(document, str(args.file))
    if rows.empty:
        raise JaxmlpError(f"{args.file}: holds no benchmarks; did the benchmark run select any?")
    print(text_summary(rows))
    if (folder := incomplete_sweep(args.file)) is not None:
        print(f"\nINCOMPLETE: {args.file} is from a sweep stopped before its last round: its samples so far "
              f"(`jaxmlp sweep resume {folder}` measures the rest)")  # fmt: skip
    if args.save:
        path = ResultsStore(args.save).save(document, args.name)
        print(f"\nSaved {path}")
    return 0
