"""``jaxmlp sweep validate``: the detectors on synthetic histories from measured noise and on Apache Otava's suite."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from jaxmlp.errors import JaxmlpError
from jaxmlp.measure.environment import metadata
from jaxmlp.measure.sweep import peer, validation
from jaxmlp.measure.sweep.settings import Validation
from jaxmlp.report.summary_base import Summary
from jaxmlp.report.sweep_summaries import validation_summary
from jaxmlp.report.text import render
from jaxmlp.results.schema.validation import ValidationDocument
from jaxmlp.results.store import layout
from jaxmlp.results.store.writing import ResultsStore, check_folder, write_json_new
from jaxmlp.results.sweep.folders import noise_cells
from jaxmlp.units import minutes


@dataclass(frozen=True)
class ValidationOutcome:
    """The validation filed: its file and its document."""

    path: Path
    document: ValidationDocument


def validate(*, settings: Validation, noise: Sequence[Path], out: Path) -> ValidationOutcome:
    """``settings``' detectors on histories from the ``noise`` folders and on Otava's suite, filed under ``out``."""
    detectors, held_out = _detectors(settings), _held_out(settings)
    cells = noise_cells(noise)
    deviations = validation.deviations(cells)
    store = ResultsStore(check_folder(out, "--out"))
    print(
        f"Validating {', '.join(detectors)} on {settings.histories} histories a case ({len(validation.CASES)} cases), "
        f"noise from {len(deviations)} samples of {len(cells)} cells"
    )
    start = time.monotonic()
    noise_from = ", ".join(str(f) for f in noise)
    rows, chosen, given = validation.validate(
        deviations, len(cells), detectors, settings.histories, settings.seed, settings.penalty, noise_from
    )
    peers = peer.run_seeds(settings.peer, held_out) if settings.peer else []
    if peers:
        seeds = {"peer_seed": peer.SEED, "peer_held_out": list(held_out)}
        given = {
            **given,
            "peer_every": settings.peer,
            "peer_tolerance": peer.TOLERANCE,
            "peer": peer.versions(),
            **seeds,
        }
    doc = ValidationDocument(metadata(), given, chosen, tuple(rows), tuple(peers))
    with store.new_folder(layout.DETECTOR) as folder:
        write_json_new(folder.path / layout.VALIDATION_FILE, doc.to_json())
    print(f"\n{render([validation_summary(doc), *([peer_summary(peers)] if peers else [])])}\n")
    print(f"Wrote {folder.path / layout.VALIDATION_FILE} in {minutes(time.monotonic() - start)}")
    return ValidationOutcome(folder.path / layout.VALIDATION_FILE, doc)


def _detectors(settings: Validation) -> list[str]:
    """The detectors asked for, once each, checked with the other numbers before anything runs."""
    detectors = list(dict.fromkeys(settings.detectors))
    if unknown := [d for d in detectors if d not in validation.DETECTORS]:
        raise JaxmlpError(
            f"--detectors {' '.join(unknown)}: choose among {', '.join(validation.DETECTORS)}, space-separated"
        )
    if "edivisive" in detectors:
        try:
            import signal_processing_algorithms  # noqa: F401
        except ImportError:
            raise JaxmlpError(
                "--detectors edivisive needs signal-processing-algorithms (it wants numpy<2: install "
                "it in an environment of its own)"
            ) from None
    if settings.peer and peer.missing():
        raise JaxmlpError(f"{peer.missing()} (or --peer 0)")
    return detectors


def _held_out(settings: Validation) -> tuple[int, ...]:
    """The held-out seeds asked for (`peer.HELD_OUT` if none), each once; the tuning seed refused among them."""
    seeds = tuple(dict.fromkeys(peer.HELD_OUT if settings.held_out is None else settings.held_out))
    if peer.SEED in seeds:
        raise JaxmlpError(f"--held-out {peer.SEED}: that is the seed the detector was tuned on; give others")
    return seeds


def peer_summary(rows: Sequence[peer.PeerRow]) -> Summary:
    """The peer suite's table on the tuning seed, with how a found change matches a true one; then each seed's."""
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
