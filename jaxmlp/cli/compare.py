"""``jaxmlp compare BASELINE NEW``: benchmark by benchmark, is NEW slower? (`jaxmlp.flows.compare`)"""

from __future__ import annotations

import argparse

from jaxmlp import registry
from jaxmlp.cli import options
from jaxmlp.flows.compare import compare
from jaxmlp.measure.sweep.settings import Detector


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
    detector = Detector(args.threshold, args.alpha)
    memory = args.memory_threshold
    return compare(
        baseline=args.baseline, new=args.new, detector=detector, memory_threshold=memory, strict=args.strict
    ).code
