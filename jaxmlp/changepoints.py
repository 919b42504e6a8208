"""Change points in a history of sample sets: ``ruptures``' PELT candidates confirmed by `jaxmlp.stats`
(docs/methods/changepoints.md). Pure: the callers hand it labels and samples."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import numpy as np

from jaxmlp import stats
from jaxmlp.jsonio import Plain
from jaxmlp.registry import ALPHA, CHANGE_ALPHA, CHANGE_THRESHOLD, THRESHOLD
from jaxmlp.stats import Comparison, compare
from jaxmlp.units import interval, p_value, ratio

PENALTY = 3.0
"""PELT's penalty per change in noise-variance x log(points) units, tuned (docs/methods/changepoints.md)."""

SERIES_WINDOW = 21
"""The running median's width (points) for `series_variance`: chosen on Otava's suite (docs/methods/changepoints.md)."""

FLOOR = 1e-12
"""The smallest noise variance the penalty is scaled by (a series of identical values has none)."""

DRIFT_GAP = 3
"""The longest segment (in points) between two same-direction steps for them to read as one drift."""


def parameters() -> dict[str, float]:
    """Every parameter of the detector and the release comparison, fixed before scoring (docs/methods/trials.md)."""
    return {
        "penalty": PENALTY,
        "series_window": SERIES_WINDOW,
        "drift_gap": DRIFT_GAP,
        "change_threshold": CHANGE_THRESHOLD,
        "change_alpha": CHANGE_ALPHA,
        "threshold": THRESHOLD,
        "alpha": ALPHA,
    }


def _identity() -> str:
    """What the detector's answers follow from: its `parameters`, its code's hash and its libraries' versions."""
    code = hashlib.sha256(b"".join(Path(f).read_bytes() for f in (__file__, stats.__file__))).hexdigest()[:16]
    versions: dict[str, str | None] = {}
    for package in ("ruptures", "scipy", "numpy"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return json.dumps({"parameters": parameters(), "code": code, "versions": versions}, sort_keys=True)


DETECTOR = _identity()
"""The detector's identity (`_identity`): a kept change is used again only under the same one."""

KINDS = ("step", "transient", "drift")
WORDS = {"regression": "slower", "improvement": "faster"}


@dataclass(frozen=True)
class Change(Plain):
    """One change of ``kind`` at ``at`` (``before``: the point before it), with its ``comparison`` of either side."""

    kind: str
    at: str
    before: str
    index: int  # the position of ``at``
    comparison: Comparison

    @property
    def direction(self) -> str:
        return WORDS.get(self.comparison.verdict, self.comparison.verdict)

    def line(self) -> str:
        """``0.4.33 slower than both neighbours, x1.31 (95% interval x1.25-x1.36, p 0.0001)``."""
        c = self.comparison
        figures = f"{ratio(c.ratio)} (95% interval {interval(c.ci_low, c.ci_high)}, p {p_value(c.p_one_sided())})"
        if self.kind == "transient":
            return f"{self.at} {self.direction} than both neighbours, {figures}"
        if self.kind == "drift":
            return f"drift from {self.before} to {self.at}, {self.direction}, {figures}"
        return f"{self.at} {self.direction} than {self.before} and before, {figures}"


def noise_variance(samples: Sequence[Sequence[float]]) -> float:
    """The variance of one point's log median under the measured noise (docs/methods/changepoints.md)."""
    variances = []
    for values in samples:
        logs = np.log(np.asarray(values, float))
        if len(logs) < 2:
            continue
        mad = 1.4826 * float(np.median(np.abs(logs - np.median(logs))))
        variances.append(mad**2 * math.pi / 2 / len(logs))
    positive = [v for v in variances if v > 0]
    if 2 * len(variances) < len(samples):
        return series_variance(samples)
    return float(np.median(positive)) if positive else FLOOR


def series_variance(samples: Sequence[Sequence[float]], window: int | None = None) -> float:
    """The variance of one point's log median from the series itself, around a running median."""
    logs = np.log([float(np.median(s)) for s in samples])
    half = (window or SERIES_WINDOW) // 2
    level = np.array([np.median(logs[max(0, i - half) : i + half + 1]) for i in range(len(logs))])
    residuals = logs - level
    mad = 1.4826 * float(np.median(np.abs(residuals - np.median(residuals))))
    return max(mad**2, FLOOR)


MISSING = "the change-point detector needs ruptures, which this Python lacks (pip install ruptures)"
"""Why no change is searched for where ruptures is not installed (a TPU host's index may not have it)."""


def unavailable() -> str | None:
    """`MISSING` where ruptures is not installed (looked up, not imported), else None."""
    import importlib.util

    return MISSING if importlib.util.find_spec("ruptures") is None else None


def candidates(samples: Sequence[Sequence[float]], penalty: float = PENALTY, method: str = "pelt") -> list[int]:
    """The candidate change positions (the first point after each) over the log medians, by PELT or ``binseg``."""
    import ruptures

    if len(samples) < 2:
        return []
    signal = np.log([float(np.median(s)) for s in samples]).reshape(-1, 1)
    pen = penalty * noise_variance(samples) * math.log(len(samples))
    algo = (
        ruptures.KernelCPD(kernel="linear", min_size=1, jump=1)
        if method == "pelt"
        else ruptures.Binseg(model="l2", min_size=1, jump=1)
    )
    return [int(b) for b in algo.fit(signal).predict(pen=pen)[:-1]]


def _pooled(samples: Sequence[Sequence[float]], lo: int, hi: int) -> list[float]:
    return [float(x) for s in samples[lo:hi] for x in s]


def _flagged(c: Comparison) -> bool:
    return c.verdict in WORDS


def _weakness(c: Comparison) -> tuple[float, float]:
    """How weak an unconfirmed candidate is: its one-sided p, then the smaller its change the weaker."""
    p = c.p_one_sided()
    return (p if p == p else 1.0, -abs(math.log(c.ratio)) if c.ratio > 0 else 0.0)


def confirmed(
    samples: Sequence[Sequence[float]],
    points: Sequence[int],
    threshold: float = CHANGE_THRESHOLD,
    alpha: float = CHANGE_ALPHA,
) -> list[tuple[int, Comparison]]:
    """The candidates the two-sample test confirms, the weakest unconfirmed one merged away until all are."""
    kept = sorted(set(points))
    known: dict[tuple[int, int, int], Comparison] = {}  # (segment start, candidate, segment end): its comparison

    def tested(lo: int, at: int, hi: int, interval: bool = False) -> Comparison:
        if interval:  # the verdicts need no interval: only the confirmed ones get it
            return compare(_pooled(samples, lo, at), _pooled(samples, at, hi), threshold, alpha)
        if (lo, at, hi) not in known:
            known[lo, at, hi] = compare(_pooled(samples, lo, at), _pooled(samples, at, hi), threshold, alpha, False)
        return known[lo, at, hi]

    while True:
        bounds = [0, *kept, len(samples)]
        found = [tested(bounds[i], bounds[i + 1], bounds[i + 2]) for i in range(len(kept))]
        weak = [(_weakness(c), i) for i, c in enumerate(found) if not _flagged(c)]
        if not weak:
            return [(at, tested(bounds[i], at, bounds[i + 2], True)) for i, at in enumerate(kept)]
        kept.pop(max(weak)[1])


def label(
    labels: Sequence[str],
    samples: Sequence[Sequence[float]],
    found: Sequence[tuple[int, Comparison]],
    threshold: float = CHANGE_THRESHOLD,
    alpha: float = CHANGE_ALPHA,
) -> list[Change]:
    """The confirmed changes as steps, transients and drifts (see the module's docstring)."""
    changes: list[Change] = []
    i = 0
    while i < len(found):
        at, c = found[i]
        if i + 1 < len(found) and found[i + 1][0] == at + 1 and found[i + 1][1].verdict != c.verdict and at > 0:
            around = compare(samples[at - 1], samples[at + 1], threshold, alpha)
            if not _flagged(around):  # its neighbours agree: one transient, not two steps
                both = [*samples[at - 1], *samples[at + 1]]
                changes.append(
                    Change("transient", labels[at], labels[at - 1], at, compare(both, samples[at], threshold, alpha))
                )
                i += 2
                continue
        j = i
        while (
            j + 1 < len(found) and found[j + 1][1].verdict == c.verdict and found[j + 1][0] - found[j][0] <= DRIFT_GAP
        ):
            j += 1
        if j > i:  # consecutive same-direction steps a few points apart: one drift
            start, end = found[i][0], found[j][0]
            lo = found[i - 1][0] if i > 0 else 0
            hi = found[j + 1][0] if j + 1 < len(found) else len(samples)
            whole = compare(_pooled(samples, lo, start), _pooled(samples, end, hi), threshold, alpha)
            changes.append(Change("drift", labels[end], labels[start - 1], end, whole))
            i = j + 1
            continue
        changes.append(Change("step", labels[at], labels[at - 1], at, c))
        i += 1
    return changes


def without_node_levels(samples: Sequence[Sequence[float]], nodes: Sequence[Sequence[str]]) -> list[tuple[float, ...]]:
    """``samples`` with each node's level taken out (``nodes[i][j]`` measured ``samples[i][j]``)."""
    offsets: dict[str, list[float]] = {}
    for values, where in zip(samples, nodes):
        logs = np.log(np.asarray(values, float))
        for node in set(where):
            mine = logs[np.asarray(where, dtype=object) == node]
            offsets.setdefault(node, []).append(float(np.median(mine) - np.median(logs)))
    level = {node: math.exp(float(np.median(o))) for node, o in offsets.items()}
    return [tuple(float(x) / level[n] for x, n in zip(values, where)) for values, where in zip(samples, nodes)]


def detect(
    labels: Sequence[str],
    samples: Sequence[Sequence[float]],
    penalty: float = PENALTY,
    threshold: float = CHANGE_THRESHOLD,
    alpha: float = CHANGE_ALPHA,
    method: str = "pelt",
    nodes: Sequence[Sequence[str]] | None = None,
) -> list[Change]:
    """The changes in a history of ``samples`` (seconds, oldest first) labelled ``labels``, measured on ``nodes``."""
    if len(labels) != len(samples):
        raise ValueError("one label per point")
    if nodes is not None and any(len(where) != len(values) for where, values in zip(nodes, samples, strict=True)):
        raise ValueError("one node per sample")
    usable = [s for s in samples if len(s) and np.all(np.isfinite(s)) and np.all(np.asarray(s, float) > 0)]
    if len(usable) != len(samples) or len(samples) < 2:
        return []
    if nodes is not None and len({n for where in nodes for n in where}) > 1:
        samples = without_node_levels(samples, nodes)
    return label(
        labels, samples, confirmed(samples, candidates(samples, penalty, method), threshold, alpha), threshold, alpha
    )


def at_each(changes: Sequence[Change]) -> dict[str, Change]:
    """The changes by the point each marks (``at``)."""
    return {c.at: c for c in changes}
