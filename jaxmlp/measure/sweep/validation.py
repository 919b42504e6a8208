"""`jaxmlp sweep validate`: the change-point detector on histories of known truth (docs/methods/changepoints.md)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from jaxmlp.changepoints import DRIFT_GAP, PENALTY, Change, detect
from jaxmlp.jsonio import Plain

SAMPLES = 8
RELEASES = (8, 30)
CASES = ("flat", "step 3%", "step 5%", "step 10%", "step 20%", "transient 10%", "two steps 10%", "drift 2%/release")
GOALS = {"step 10%": 0.99, "step 5%": 0.90, "transient 10%": 0.90}
"""The recall each case must reach; flat: false alarms in at most `FLAT_GOAL` of histories."""
FLAT_GOAL = 0.02
DETECTORS = ("pelt", "binseg", "edivisive")

Detect = Callable[[Sequence[str], Sequence[Sequence[float]]], list[Change]]


@dataclass(frozen=True)
class History:
    """A synthetic history: each release's samples and the changed releases' positions."""

    case: str
    samples: tuple[tuple[float, ...], ...]
    truth: tuple[int, ...]


def levels(case: str, n: int, rng: np.random.Generator) -> tuple[np.ndarray, tuple[int, ...]]:
    """Each release's true level (1: unchanged) and the truth, for one history of ``n`` releases."""
    level = np.ones(n)
    sign = 1 if rng.random() < 0.5 else -1
    if case.startswith("step"):
        size = float(case.split()[1].rstrip("%")) / 100
        k = int(rng.integers(1, n))
        level[k:] *= (1 + size) ** sign
        return level, (k,)
    if case.startswith("transient"):
        k = int(rng.integers(1, n - 1))
        level[k] *= 1.10**sign
        return level, (k,)
    if case.startswith("two steps"):
        apart = DRIFT_GAP + 1  # further apart than a drift's steps
        k1 = int(rng.integers(1, n - apart))
        k2 = int(rng.integers(k1 + apart, n))
        level[k1:] *= 1.10**sign
        level[k2:] *= 1.10**sign
        return level, (k1, k2)
    if case.startswith("drift"):
        length = 5
        start = int(rng.integers(1, n - length + 1))
        for i in range(length):
            level[start + i :] *= 1.02**sign
        return level, (start, start + length - 1)
    return level, ()


def history(
    case: str, noise: np.ndarray, rng: np.random.Generator, samples: int = SAMPLES, releases: tuple[int, int] = RELEASES
) -> History:
    """One synthetic history of ``case``: its releases' levels times deviations drawn from ``noise``."""
    n = int(rng.integers(releases[0], releases[1] + 1))
    level, truth = levels(case, n, rng)
    drawn = level[:, None] * rng.choice(noise, (n, samples))
    return History(case, tuple(tuple(float(x) for x in row) for row in drawn), truth)


def found(h: History, changes: Sequence[Change]) -> tuple[bool, bool]:
    """(was the truth found within one release, is there a change elsewhere)."""
    near = [c for c in changes if any(abs(c.index - t) <= 1 for t in h.truth)]
    if h.case.startswith("drift"):  # found when something is marked from its start to one after its end
        lo, hi = h.truth
        near = [c for c in changes if lo - 1 <= c.index <= hi + 1]
        return bool(near), len(near) < len(changes)
    if h.case.startswith("transient"):
        hit = any(c.kind == "transient" and abs(c.index - h.truth[0]) <= 1 for c in changes)
    elif h.case.startswith("two steps"):
        hit = all(any(abs(c.index - t) <= 1 and c.kind != "transient" for c in changes) for t in h.truth)
    else:
        hit = bool(near)
    return hit, len(near) < len(changes)


def detector(method: str, penalty: float = PENALTY) -> Detect:
    """The detector with ``method``'s candidates, all confirmed and labelled alike."""
    if method in ("pelt", "binseg"):
        return lambda labels, samples: detect(labels, samples, penalty, method=method)
    if method == "edivisive":
        return _edivisive
    raise ValueError(f"unknown detector {method!r}: one of {', '.join(DETECTORS)}")


def _edivisive(labels: Sequence[str], samples: Sequence[Sequence[float]]) -> list[Change]:
    """E-divisive means over the log medians, then the same confirmation and labels as the others."""
    from signal_processing_algorithms.energy_statistics import energy_statistics

    from jaxmlp.changepoints import confirmed, label

    series = np.log([float(np.median(s)) for s in samples])
    points = sorted(int(p) for p in energy_statistics.e_divisive(series, pvalue=0.05, permutations=100))
    return label(labels, samples, confirmed(samples, points))


@dataclass(frozen=True)
class Row(Plain):
    """One case under one detector: histories, the share whose truth was found, the share with a false alarm."""

    detector: str
    case: str
    histories: int
    recall: float  # flat: nan (nothing to find)
    false_alarms: float


def run(
    noise: np.ndarray,
    detectors: Sequence[str],
    histories: int = 200,
    seed: int = 0,
    cases: Sequence[str] = CASES,
    penalty: float = PENALTY,
) -> list[Row]:
    """Every case under every detector, each on the same histories."""
    rows = []
    for case in cases:
        rng = np.random.default_rng([seed, CASES.index(case) if case in CASES else 99])
        made = [history(case, noise, rng) for _ in range(histories)]
        for name in detectors:
            detect_ = detector(name, penalty)
            hits = alarms = 0
            for h in made:
                labels = [str(i) for i in range(len(h.samples))]
                hit, alarm = found(h, detect_(labels, h.samples))
                hits += hit
                alarms += alarm
            recall = float("nan") if case == "flat" else hits / histories
            rows.append(Row(name, case, histories, recall, alarms / histories))
    return rows


def meets(rows: Sequence[Row], name: str) -> bool:
    """Whether ``name`` met every goal: `GOALS`' recalls and at most `FLAT_GOAL` flat histories flagged."""
    mine = {r.case: r for r in rows if r.detector == name}
    recalls = all(mine[case].recall >= goal for case, goal in GOALS.items() if case in mine)
    return recalls and ("flat" not in mine or mine["flat"].false_alarms <= FLAT_GOAL)


def validate(
    pool: np.ndarray, cells: int, detectors: Sequence[str], histories: int, seed: int, penalty: float, noise: str
) -> tuple[list[Row], str, dict[str, Any]]:
    """Every case under every detector over ``pool``: the rows, the first detector that met every goal, the settings."""
    start = time.monotonic()
    rows = run(pool, detectors, histories, seed, penalty=penalty)
    chosen = next((d for d in detectors if meets(rows, d)), "none met every goal")
    settings = {
        "histories": histories,
        "samples": SAMPLES,
        "releases": f"{RELEASES[0]} to {RELEASES[1]}",
        "seed": seed,
        "penalty": penalty,
        "noise": noise,
        "noise_samples": len(pool),
        "noise_cells": cells,
        "seconds": round(time.monotonic() - start, 1),
    }
    return rows, chosen, settings


def deviations(cells: Sequence[Sequence[float]]) -> np.ndarray:
    """The noise pool: every sample over its cell's median (cells of fewer than 4 samples left out)."""
    pool = [np.asarray(c, float) / float(np.median(c)) for c in cells if len(c) >= 4]
    if not pool:
        raise ValueError("no cell with 4 or more samples to draw the noise from")
    return np.concatenate(pool)
