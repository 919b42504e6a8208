"""``jaxmlp sweep validate``: the change-point detectors on synthetic histories and on Apache Otava's suite."""

from __future__ import annotations

import argparse
from pathlib import Path

from jaxmlp import changepoints
from jaxmlp.cli import options
from jaxmlp.flows.validate import validate
from jaxmlp.measure.sweep import peer, validation
from jaxmlp.measure.sweep.settings import Validation

DETECTORS = Validation.detectors
"""The detectors validated unless --detectors names others."""

DESCRIPTION = (
    "Draw synthetic histories (8 to 30 releases, 8 samples each) from the noise "
    "of real fresh-process samples, with known steps, transients, drifts or none, and count "
    "how often each detector finds them and how often it flags a flat history."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    options.add(
        parser,
        options.own(
            "noise",
            "sweep or timeline folders whose samples give the noise (default: every one under --results)",
            nargs="*",
            metavar="FOLDER",
        ),
        options.RESULTS,
        options.own("--histories", "histories a case (default: %(default)s)", 200, options.whole_number),
        options.own("--seed", "the histories' seed (default: %(default)s)", 0, options.whole_number),
        options.own(
            "--detectors",
            "the detectors to validate, of "
            f"{', '.join(validation.DETECTORS)} (edivisive needs signal-processing-algorithms) "
            f"(default: {' '.join(DETECTORS)})",
            metavar="DETECTOR",
            **options.LIST,
        ),
        options.own(
            "--penalty",
            "PELT's and binary segmentation's penalty (default: %(default)s)",
            changepoints.PENALTY,
            options.number,
        ),
        options.own(
            "--peer",
            "also run the detector and Apache Otava's on every EVERY-th series of Otava's own test "
            "suite, one value a point (0: not at all; default: %(default)s, all 110)",
            1,
            options.whole_number,
            metavar="EVERY",
        ),
        options.own(
            "--held-out",
            "the peer suite's seeds the detector was not tuned on, reported apart from the tuning seed "
            f"{peer.SEED} (default: {' '.join(map(str, peer.HELD_OUT))})",
            None,
            options.whole_number,
            metavar="SEED",
            **options.LIST,
        ),
        options.OUT,
    )


def run(args: argparse.Namespace) -> int:
    """The detectors on synthetic histories drawn from measured noise (`jaxmlp.flows.validate`), filed and printed."""
    held_out = None if args.held_out is None else tuple(args.held_out)
    settings = Validation(
        args.histories, args.seed, tuple(args.detectors or DETECTORS), args.penalty, args.peer, held_out
    )
    validate(settings=settings, noise=[Path(f) for f in args.noise] or [Path(args.results)], out=Path(args.out))
    return 0
