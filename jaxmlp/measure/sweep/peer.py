"""The change-point detector on Apache Otava's test series beside Otava's own detector (docs/methods/changepoints.md).
Pure but for the two packages it imports."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from jaxmlp.changepoints import detect
from jaxmlp.jsonio import Plain

if TYPE_CHECKING:
    import pandas as pd

TOLERANCE = 5
"""How far (points) a found change may be from a true one and still match it: TCPDBench's margin."""
SEED = 42
"""The suite's seed, ``otava-test-data``'s and the one the detector was tuned on."""
HELD_OUT = (1, 2, 3, 4, 5)
"""The seeds of the suite the detector was never tuned on: its results on them are reported apart from `SEED`'s."""
LENGTHS = (50, 500)
OTAVA_WINDOW = 50
OTAVA_P = 0.001
DETECTORS = ("jaxmlp", "otava")
NEEDS = (
    "the peer suite needs otava-test-data and apache-otava: pip install otava-test-data; pip install --no-deps "
    "apache-otava"
)

Spans = list[tuple[int, int]]  # each found change's first and last point (the same point but for a drift)


@dataclass(frozen=True)
class Series:
    """One of the suite's series: its generator, length, added noise, values and true change positions."""

    name: str
    noise: float
    values: tuple[float, ...]
    truth: tuple[int, ...]


def missing() -> str | None:
    """What to install for the peer suite, or None when both packages import."""
    try:
        import otava.analysis  # noqa: F401
        import otava_test_data  # noqa: F401
    except ImportError:
        return NEEDS
    return None


def versions() -> str:
    """The two packages' versions, as the settings record them."""
    from importlib.metadata import version

    return f"otava-test-data {version('otava-test-data')}, apache-otava {version('apache-otava')}"


def suite(seed: int = SEED) -> list[Series]:
    """Every series of Otava's generated suite, with its truth."""
    from otava_test_data.generators.combiner import CombinationGenerator

    made = CombinationGenerator(lengths=list(LENGTHS), seed=seed).generate_all_test_cases()
    return [
        Series(
            ts.generator_name,
            float(ts.parameters.get("noise_sigma", 0.0)),
            tuple(float(v) for v in ts.data),
            tuple(int(i) for i in ts.get_change_point_indices()),
        )
        for ts in made
    ]


def ours(values: Sequence[float]) -> Spans:
    """`jaxmlp.changepoints.detect` on one value a point."""
    labels = [str(i) for i in range(len(values))]
    return [
        (int(c.before) + 1 if c.kind == "drift" else c.index, c.index) for c in detect(labels, [[v] for v in values])
    ]


def otava(values: Sequence[float]) -> Spans:
    """Apache Otava's ``compute_change_points`` (window `OTAVA_WINDOW`, p `OTAVA_P`)."""
    from otava.analysis import compute_change_points

    found, _ = compute_change_points(list(values), window_len=OTAVA_WINDOW, max_pvalue=OTAVA_P)
    return [(int(c.index), int(c.index)) for c in found]


FINDERS: Mapping[str, Callable[[Sequence[float]], Spans]] = {"jaxmlp": ours, "otava": otava}


def matched(truth: Sequence[int], spans: Spans, tolerance: int = TOLERANCE) -> int:
    """How many true changes a found one matches (one to one, nearest pairs first, within ``tolerance``)."""
    pairs = sorted((max(lo - t, t - hi, 0), i, j) for i, t in enumerate(truth) for j, (lo, hi) in enumerate(spans))
    true_used: set[int] = set()
    found_used: set[int] = set()
    for distance, i, j in pairs:
        if distance <= tolerance and i not in true_used and j not in found_used:
            true_used.add(i)
            found_used.add(j)
    return len(true_used)


@dataclass(frozen=True)
class PeerRow(Plain):
    """One detector on the suite: changes true, found and matched, series flagged, and its seconds."""

    detector: str
    series: int
    changes: int
    found: int
    matched: int
    change_free: int
    flagged: int
    seconds: float
    seed: int = SEED  # where not written (before 2026-12-06): the tuning seed alone
    held_out: bool = False  # a seed the detector was not tuned on (`HELD_OUT`)

    @property
    def recall(self) -> float:
        return self.matched / self.changes if self.changes else math.nan

    @property
    def precision(self) -> float:
        return self.matched / self.found if self.found else math.nan

    @property
    def f1(self) -> float:
        return 2 * self.matched / (self.changes + self.found) if self.changes + self.found else math.nan

    @property
    def false_alarms(self) -> int:
        return self.found - self.matched


def run(
    series: Sequence[Series], detectors: Sequence[str] = DETECTORS, seed: int = SEED, held_out: bool = False
) -> list[PeerRow]:
    """Each detector on every series (the suite of ``seed``), matched alike."""
    rows = []
    for name in detectors:
        find = FINDERS[name]
        start = time.monotonic()
        changes = found = hits = free = flagged = 0
        for s in series:
            spans = find(s.values)
            changes += len(s.truth)
            found += len(spans)
            hits += matched(s.truth, spans)
            free += not s.truth
            flagged += bool(spans) and not s.truth
        rows.append(
            PeerRow(name, len(series), changes, found, hits, free, flagged, time.monotonic() - start, seed, held_out)
        )
    return rows


def run_seeds(every: int, held_out: Sequence[int] = HELD_OUT) -> list[PeerRow]:
    """Both detectors on every ``every``-th series of the tuning seed's suite, then of each held-out seed's."""
    rows = run(of(suite(SEED), every))
    for seed in held_out:
        rows += run(of(suite(seed), every), seed=seed, held_out=True)
    return rows


def tuning(rows: Sequence[PeerRow]) -> list[PeerRow]:
    """The rows of the seed the detector was tuned on (all of a file written before held-out seeds)."""
    return [r for r in rows if not r.held_out]


def seeds_table(rows: Sequence[PeerRow]) -> pd.DataFrame:
    """A row a seed, tuning first then held out: each detector's F1 and change-free series flagged side by side."""
    by = {(r.seed, r.detector): r for r in rows}
    seeds = list(dict.fromkeys(r.seed for r in sorted(rows, key=lambda r: r.held_out)))
    out = []
    for seed in seeds:
        mine, peer = by.get((seed, "jaxmlp")), by.get((seed, "otava"))
        if mine is None or peer is None:
            continue
        out.append(
            (
                seed,
                "held out" if mine.held_out else "tuning",
                mine.series,
                f"{mine.f1:.2f}",
                f"{peer.f1:.2f}",
                f"{mine.flagged} of {mine.change_free}",
                f"{peer.flagged} of {peer.change_free}",
                "yes" if holds([mine, peer]) else "no",
            )
        )
    columns = ["seed", "seeds", "series", "jaxmlp F1", "Otava F1", "jaxmlp flagged", "Otava flagged", "holds"]
    import pandas as pd  # here: a process that only measures never imports it

    return pd.DataFrame(out, columns=columns)


def holds(rows: Sequence[PeerRow]) -> bool:
    """Whether jaxmlp's detector did at least as well as Otava's (F1 and change-free series flagged)."""
    by = {r.detector: r for r in rows}
    mine, peer = by["jaxmlp"], by["otava"]
    return mine.f1 >= peer.f1 and mine.flagged <= peer.flagged


def table(rows: Sequence[PeerRow]) -> pd.DataFrame:
    """The rows as people read them: recall, precision, F1, false alarms, change-free series flagged."""
    import pandas as pd

    return pd.DataFrame(
        [
            (
                r.detector,
                f"{r.matched} of {r.changes} ({r.recall:.0%})",
                f"{r.precision:.0%}",
                f"{r.f1:.2f}",
                r.false_alarms,
                f"{r.flagged} of {r.change_free}",
                f"{r.seconds:.1f} s",
            )
            for r in rows
        ],
        columns=["detector", "true changes found", "precision", "F1", "false alarms", "change-free flagged", "time"],
    )


def of(series: Sequence[Series], every: int) -> list[Series]:
    """Every ``every``-th series (a representative subset: the suite cycles through its generators)."""
    return list(series[::every]) if every > 1 else list(series)
