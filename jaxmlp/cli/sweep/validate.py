"""``jaxmlp sweep validate``: the change-point detectors on synthetic histories drawn from measured noise, and beside
Apache Otava's on its own test suite."""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path

from jaxmlp import changepoints, errors
from jaxmlp.cli import options
from jaxmlp.errors import JaxmlpError
from jaxmlp.measure.environment import metadata
from jaxmlp.measure.sweep import peer, validation
from jaxmlp.report.summary_base import Summary
from jaxmlp.report.sweep_summaries import validation_summary
from jaxmlp.report.text import render
from jaxmlp.results.schema.validation import ValidationDocument
from jaxmlp.results.store import layout
from jaxmlp.results.store.writing import ResultsStore, check_folder, write_json_new
from jaxmlp.results.sweep.folders import noise_cells
from jaxmlp.units import minutes

DETECTORS = ("pelt", "binseg")
"""The detectors validated unless --detectors names others."""

DESCRIPTION = (
    "Draw synthetic histories (8 to 30 releases, 8 samples each) from the noise "
    "of real fresh-process samples, with known steps, transients, drifts or none, and count "
    "how often each detector finds them and how often it flags a flat history."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "noise",
        nargs="*",
        metavar="FOLDER",
        help="sweep or timeline folders whose samples give the noise (default: every one under --results)",
    )
    options.add(parser, options.RESULTS)
    parser.add_argument(
        "--histories", type=options.whole_number, default=200, help="histories a case (default: %(default)s)"
    )
    parser.add_argument(
        "--seed", type=options.whole_number, default=0, help="the histories' seed (default: %(default)s)"
    )
    parser.add_argument(
        "--detectors",
        metavar="DETECTOR",
        **options.LIST,
        help="the detectors to validate, of "
        f"{', '.join(validation.DETECTORS)} (edivisive needs signal-processing-algorithms) "
        f"(default: {' '.join(DETECTORS)})",
    )
    parser.add_argument(
        "--penalty",
        type=options.number,
        default=changepoints.PENALTY,
        help="PELT's and binary segmentation's penalty (default: %(default)s)",
    )
    parser.add_argument(
        "--peer",
        type=options.whole_number,
        default=1,
        metavar="EVERY",
        help="also run the detector and Apache Otava's on every EVERY-th series of Otava's own test "
        "suite, one value a point (0: not at all; default: %(default)s, all 110)",
    )
    parser.add_argument(
        "--held-out",
        type=options.whole_number,
        metavar="SEED",
        **options.LIST,
        help="the peer suite's seeds the detector was not tuned on, reported apart from the tuning seed "
        f"{peer.SEED} (default: {' '.join(map(str, peer.HELD_OUT))})",
    )
    options.add(parser, options.OUT)


def run(args: argparse.Namespace) -> int:
    """The detectors on synthetic histories drawn from measured noise (`validation`), filed and printed."""
    detectors, held_out = _detectors(args), _held_out(args)
    folders = [Path(f) for f in args.noise] or [Path(args.results)]
    cells = noise_cells(folders)
    noise = validation.deviations(cells)
    store = ResultsStore(check_folder(args.out, "--out"))
    print(
        f"Validating {', '.join(detectors)} on {args.histories} histories a case ({len(validation.CASES)} cases), "
        f"noise from {len(noise)} samples of {len(cells)} cells"
    )
    start = time.monotonic()
    noise_from = ", ".join(str(f) for f in folders)
    rows, chosen, settings = validation.validate(
        noise, len(cells), detectors, args.histories, args.seed, args.penalty, noise_from
    )
    peers = peer.run_seeds(args.peer, held_out) if args.peer else []
    if peers:
        seeds = {"peer_seed": peer.SEED, "peer_held_out": list(held_out)}
        settings = {
            **settings,
            "peer_every": args.peer,
            "peer_tolerance": peer.TOLERANCE,
            "peer": peer.versions(),
            **seeds,
        }
    doc = ValidationDocument(metadata(), settings, chosen, tuple(rows), tuple(peers))
    with store.new_folder(layout.DETECTOR) as folder:
        write_json_new(folder.path / layout.VALIDATION_FILE, doc.to_json())
    print(f"\n{render([validation_summary(doc), *([peer_summary(peers)] if peers else [])])}\n")
    print(f"Wrote {folder.path / layout.VALIDATION_FILE} in {minutes(time.monotonic() - start)}")
    return 0


def _detectors(args: argparse.Namespace) -> list[str]:
    """The detectors asked for, once each, checked with the other numbers before anything runs."""
    detectors = list(dict.fromkeys(args.detectors or DETECTORS))
    unknown = [d for d in detectors if d not in validation.DETECTORS]
    if unknown:
        raise JaxmlpError(
            f"--detectors {' '.join(unknown)}: choose among {', '.join(validation.DETECTORS)}, space-separated"
        )
    errors.at_least("--histories", args.histories, 1)
    errors.positive_finite("--penalty", args.penalty)
    errors.at_least("--peer", args.peer, 0)
    if "edivisive" in detectors:
        try:
            import signal_processing_algorithms  # noqa: F401
        except ImportError:
            raise JaxmlpError(
                "--detectors edivisive needs signal-processing-algorithms (it wants numpy<2: install "
                "it in an environment of its own)"
            ) from None
    if args.peer and peer.missing():
        raise JaxmlpError(f"{peer.missing()} (or --peer 0)")
    return detectors


def _held_out(args: argparse.Namespace) -> tuple[int, ...]:
    """The held-out seeds asked for (`peer.HELD_OUT` if none), each once; the tuning seed refused among them."""
    seeds = tuple(dict.fromkeys(peer.HELD_OUT if args.held_out is None else args.held_out))
    if peer.SEED in seeds:
        raise JaxmlpError(f"--held-out {peer.SEED}: that is the seed the detector was tuned on; give others")
    return seeds


def peer_summary(rows: Sequence[peer.PeerRow]) -> Summary:
    """The peer suite's table on the tuning seed, with how a found change matches a true one; then each seed's,
    the held-out seeds apart."""
    tuned = peer.tuning(rows)
    verdict = "holds" if peer.holds(tuned) else "does not hold"
    held = [r for r in rows if r.held_out]
    held_seeds = sorted({r.seed for r in held})
    holding = sum(peer.holds([r for r in held if r.seed == seed]) for seed in held_seeds)
    lines = [
        f"jaxmlp's detector {verdict} beside Apache Otava's (F1 no lower, no more "
        f"change-free series flagged) on {tuned[0].series} series of the seed it was tuned on ({tuned[0].seed}), "
        f"one value a point; a found change matches a true one within {peer.TOLERANCE} points, one to one"
    ]
    if held_seeds:
        lines.append(
            f"On the held-out seeds it holds on {holding} of {len(held_seeds)} ({', '.join(map(str, held_seeds))})"
        )
    tables = [(f"Each detector, seed {tuned[0].seed} (tuning)", peer.table(tuned))]
    if held_seeds:
        tables.append(("Each seed, tuning and held out", peer.seeds_table(rows)))
    return Summary("On Otava's suite", tuple(lines), tuple(tables))
