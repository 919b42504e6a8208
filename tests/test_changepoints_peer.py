"""The change-point detector where a point has one sample: on a representative third of Apache Otava's own test
suite (`jaxmlp.measure.sweep.peer`), beside Otava's detector run on the same series, and its noise from the series
itself. The whole suite is `jaxmlp sweep validate`'s (docs: methods/changepoints)."""

from pathlib import Path

import numpy as np
import pytest

from jaxmlp import changepoints
from jaxmlp.measure.sweep import peer, validation
from jaxmlp.results.sweep.folders import noise_cells

EVERY = 3  # every third series: 37 of 110, each generator, length and noise level (a few seconds)


def test_on_otava_suite_the_detector_holds_beside_otavas():
    rows = peer.run(peer.of(peer.suite(), EVERY))
    mine, otava = (next(r for r in rows if r.detector == name) for name in ("jaxmlp", "otava"))
    assert mine.series == otava.series == 37 and mine.changes == otava.changes > 0 and mine.change_free > 0
    assert mine.f1 >= otava.f1 and mine.flagged <= otava.flagged
    assert peer.holds(rows)


def test_matching_is_one_to_one_within_the_tolerance():
    assert peer.matched([10, 30], [(12, 12), (30, 30), (31, 31)]) == 2  # the third found change is a false alarm
    assert peer.matched([10], [(16, 16)]) == 0 and peer.matched([10], [(15, 15)]) == 1
    assert peer.matched([25, 25], [(25, 25)]) == 1  # two truths at one point: one found change matches one
    assert peer.matched([40], [(20, 34)]) == 0 and peer.matched([40], [(20, 35)]) == 1  # a drift: its span
    row = peer.PeerRow("x", 3, 4, 5, 3, 1, 1, 0.5)
    assert (row.recall, row.precision, row.false_alarms) == (0.75, 0.6, 2)
    assert row.f1 == pytest.approx(2 / 3) and peer.PeerRow.from_json(row.to_json()) == row


def test_one_sample_a_point_takes_the_noise_from_the_series():
    rng = np.random.default_rng(0)
    steps = np.r_[np.ones(100), 1.2 * np.ones(100)] * np.exp(rng.normal(0, 0.02, 200))
    single = [[float(v)] for v in steps]
    assert changepoints.series_variance(single) == pytest.approx(0.02**2, rel=0.3)  # the step is not noise
    assert changepoints.noise_variance(single) == changepoints.series_variance(single)
    (change,) = changepoints.detect([str(i) for i in range(200)], single)
    assert change.kind == "step" and abs(change.index - 100) <= 1
    wave = 100 + 10 * np.cos(np.arange(500) * 2 * np.pi / 20)  # a short period moves within the window: noise
    assert changepoints.detect([str(i) for i in range(500)], [[float(v)] for v in wave]) == []
    flat = [[1.0]] * 50  # no spread at all: the floor, and nothing found
    assert (
        changepoints.series_variance(flat) == changepoints.FLOOR
        and changepoints.detect([str(i) for i in range(50)], flat) == []
    )


TIMELINE = Path(__file__).parent / "fixtures" / "runs" / "timeline-20261205T181756"  # a real timeline's noise


def test_at_home_the_goals_still_hold():
    """The home figures the series estimate must not cost: 8 samples a release, noise drawn from a real timeline's
    fresh-process samples; 60 histories a case of the validation's 200."""
    noise = validation.deviations(noise_cells([TIMELINE]))
    rows = validation.run(noise, ["pelt"], histories=60, cases=["flat", "step 10%", "transient 10%"])
    found = {r.case: r for r in rows}
    assert found["flat"].false_alarms <= validation.FLAT_GOAL
    assert found["step 10%"].recall >= 0.99 and found["transient 10%"].recall >= 0.90
