"""Bisection across releases, on a fake measurement with a known change point (noise included), and the release
list it bisects over (parsed from the package index's answer)."""

import json

import numpy as np
import pytest

from jaxmlp.cli import main
from jaxmlp.errors import JaxmlpError
from jaxmlp.measure.bisection import answer_line, bisect, expected_releases
from jaxmlp.measure.sweep import envs
from jaxmlp.report.sections import BISECTION, MATRIX, build_sections
from jaxmlp.results.schema import parse
from jaxmlp.results.schema.bisect import BisectDocument
from jaxmlp.results.store.frames import load
from jaxmlp.results.store.writing import ResultsStore

RELEASES = ["0.6.2", "0.7.0", "0.7.1", "0.7.2", "0.8.0", "0.8.1", "0.8.2", "0.8.3", "0.9.0", "0.9.1", "0.10.0"]


class Fake:
    """A step function of the release: ``before`` seconds up to the change, ``after`` from it on; each sample a
    process with log-normal noise. Records which releases were measured."""

    def __init__(
        self,
        change: str | None,
        before=1.0,
        after=1.3,
        spread=0.03,
        processes=10,
        seed=0,
        releases=RELEASES,
        second: str | None = None,
    ):
        self.rng = np.random.default_rng(seed)
        self.change, self.second, self.releases = change, second, list(releases)
        self.before, self.after, self.spread, self.processes = before, after, spread, processes
        self.measured: list[list[str]] = []

    def level(self, release: str) -> float:
        i = self.releases.index(release)
        value = self.before
        if self.change is not None and i >= self.releases.index(self.change):
            value = self.after
        if self.second is not None and i >= self.releases.index(self.second):
            value *= self.after / self.before
        return value

    def __call__(self, names):
        self.measured.append(list(names))
        return {n: list(self.level(n) * np.exp(self.rng.normal(0, self.spread, self.processes))) for n in names}


@pytest.mark.parametrize("change", RELEASES[1:])
def test_bisection_finds_the_first_slower_release_wherever_it_is(change):
    fake = Fake(change)
    result = bisect(RELEASES, fake)
    assert (result.status, result.first, result.direction) == ("found", change, "regression")
    assert result.after == RELEASES[RELEASES.index(change) - 1]
    k = len(RELEASES) - 2
    assert len(result.measured) <= expected_releases(k) == 2 + 4  # log2(k) + 2, not k
    assert 1.25 < result.comparison.ratio < 1.35 and result.comparison.p_slower < 0.01
    line = answer_line(result)
    assert line.startswith(f"first slower release: {change} (ratio ×1.") and line.endswith(f"after {result.after}")
    assert "95% interval ×1." in line and ", p <0.001)" in line  # in units: never 9.1e-05


def test_an_improvement_is_bisected_the_same_way():
    result = bisect(RELEASES, Fake("0.8.1", before=1.0, after=0.75))
    assert (result.status, result.first, result.after) == ("found", "0.8.1", "0.8.0")
    assert answer_line(result).startswith("first faster release: 0.8.1 (ratio ×0.7")


def test_bisecting_backwards_from_a_newer_good_release():
    backwards = list(reversed(RELEASES))
    fake = Fake("0.8.1", releases=RELEASES)  # read from the new end, the releases before 0.8.1 are faster
    result = bisect(backwards, fake)
    assert (result.status, result.first, result.after) == ("found", "0.8.0", "0.8.1")
    assert result.direction == "improvement"


def test_no_change_between_the_ends_stops_after_one_probe():
    fake = Fake(None)
    result = bisect(RELEASES, fake)
    assert result.status == "no change" and len(fake.measured) == 1 and result.first is None
    assert answer_line(result).startswith("no change between 0.6.2 and 0.10.0 (no change: ratio ×")


def test_a_change_in_both_halves_is_inconclusive_not_a_guess():
    fake = Fake("0.7.1", second="0.9.0", after=1.3)
    result = bisect(RELEASES, fake)
    assert result.status == "inconclusive" and result.first is None
    assert "finds the change in both halves" in answer_line(result) and "rather than guessing" in answer_line(result)


def test_too_few_processes_is_inconclusive_when_the_statistics_cannot_decide():
    result = bisect(RELEASES, Fake("0.8.0", processes=2))
    assert result.status == "inconclusive" and "too few processes for p < 0.01" in answer_line(result)


def test_adjacent_releases_need_one_probe():
    fake = Fake("0.7.0")
    result = bisect(["0.6.2", "0.7.0"], fake)
    assert (result.status, result.first, fake.measured) == ("found", "0.7.0", [["0.6.2", "0.7.0"]])


def test_each_probe_is_told_as_it_goes():
    told = []
    result = bisect(RELEASES, Fake("0.9.0"), progress=told.append)
    assert [p.number for p in told] == list(range(1, len(result.probes) + 1))
    assert told[0].releases == ("0.6.2", "0.8.1", "0.10.0") and told[0].decision == "slower between 0.8.1 and 0.10.0"


INDEX_ANSWER = """WARNING: pip index is currently an experimental command.
jax (0.10.2)
Available versions: 0.10.2, 0.10.1, 0.9.0.1, 0.8.3, 0.5.2, 0.4.37, 0.4.33, 0.4.31, 0.4.30, 0.4.29, 0.2.0
"""
JAXLIB_ANSWER = """jaxlib (0.10.2)
Available versions: 0.10.2, 0.10.1, 0.9.0.1, 0.8.3, 0.5.1, 0.4.36, 0.4.33, 0.4.31, 0.4.30
"""


def test_the_release_list_is_parsed_from_the_package_index():
    jax, jaxlib = envs.parse_index_versions(INDEX_ANSWER), envs.parse_index_versions(JAXLIB_ANSWER)
    assert jax[:3] == ["0.2.0", "0.4.29", "0.4.30"] and jax[-1] == "0.10.2"
    # published for both, and supported: 0.4.37 and 0.5.2 had no jaxlib of their own, 0.4.29 is too old
    assert envs.releases(jax, jaxlib) == ["0.4.30", "0.4.31", "0.4.33", "0.8.3", "0.9.0.1", "0.10.1", "0.10.2"]
    assert envs.between(envs.releases(jax, jaxlib), "0.4.31", "0.9.0.1") == ["0.4.31", "0.4.33", "0.8.3", "0.9.0.1"]
    assert envs.parse_index_versions("ERROR: No matching distribution found for jax") == []


def test_an_unreachable_index_says_how_to_pass_the_releases(monkeypatch):
    with pytest.raises(JaxmlpError, match=r"could not list jax's releases .* --versions 0.6.2 0.7.0"):
        envs.index_versions("jax", python="/nonexistent/python")


def test_a_release_outside_the_list_is_named():
    with pytest.raises(JaxmlpError, match="jax 0.7.5 is not among the releases"):
        envs.between(RELEASES, "0.6.2", "0.7.5")


def test_bisect_writes_every_probe_and_its_answer_and_the_report_shows_it(tmp_path, monkeypatch, capsys, explained):
    """`jaxmlp sweep bisect` over releases given by hand, the worker processes replaced by the fake's values."""
    from jaxmlp.measure.records import ProcessResult, WorkloadTimes
    from jaxmlp.measure.sweep import bisect, matrix

    fake = Fake("0.8.1", processes=8)
    monkeypatch.setattr(bisect, "environments", lambda matrix_, names, say=print: {n: "python" for n in names})

    def measure_cells(runners, matrix_, say=print, progress=None):
        values = fake([r.label for r in runners])
        processes = {
            r.name: [
                ProcessResult(
                    {"jax": r.label, "xla_flags": r.xla_flags}, {"batched": WorkloadTimes.of(0.1, [2 * v, v])}
                )
                for v in values[r.label]
            ]
            for r in runners
        }
        outcomes = {r.name: matrix.Outcome("ok") for r in runners}
        return matrix.Measured(matrix.Probed({r.name: r for r in runners}, outcomes, {}, {}), processes, {})

    monkeypatch.setattr(bisect, "measure_cells", measure_cells)
    releases = RELEASES[:8]
    assert main(["sweep", "bisect", "0.6.2", "0.8.3", "--versions", *releases, "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert "Bisecting 6 release(s) between 0.6.2 and 0.8.3" in printed and "about 5 releases measured" in printed
    assert "probe 1: 0.6.2 " in printed and "first slower release: 0.8.1 (ratio ×" in printed
    (folder,) = tmp_path.iterdir()
    probes = sorted(p.name for p in folder.iterdir() if p.is_dir() and p.name.startswith("probe-"))
    assert folder.name.startswith("bisect-") and probes == [f"probe-{n}" for n in range(1, len(probes) + 1)]
    assert "Explaining the answer: 0.8.0 -> 0.8.1" in printed and explained == [("0.8.0", "0.8.1", "batched")]
    doc = parse(json.loads((folder / "bisect.json").read_text()))
    assert isinstance(doc, BisectDocument) and doc.bisection.first == "0.8.1" and doc.settings["workload"] == "batched"
    assert doc.line in printed and len(doc.bisection.measured) <= 5
    results = load(ResultsStore(tmp_path))
    sections = build_sections(results, folder=tmp_path)
    assert not [s for s in sections if s.anchor == MATRIX]  # probes are the bisection's, not sweeps
    (section,) = [s for s in sections if s.anchor == BISECTION]
    assert doc.line in section.shown[0].note and section.plots
    (table,) = section.tables
    probes_table = table.frame
    assert set(probes_table["probe"]) == set(range(1, len(doc.bisection.probes) + 1))


def test_the_bisected_workload_is_the_one_named():
    from jaxmlp.measure.sweep.bisect import bisected as _bisected

    assert _bisected([], None) == ("batched", "batched") and _bisected(["scan"], None) == ("scan", "scan")
    assert _bisected(["a/mine.py:make", "step"], "step") == ("step", "step")
    assert _bisected(["a/mine.py:make"], None) == ("mine", "a/mine.py:make")
    assert _bisected([], "a/mine.py:make") == ("mine", "a/mine.py:make")
    with pytest.raises(JaxmlpError, match="--on 'theirs' names no workload of this run"):
        _bisected(["a/mine.py:make"], "theirs")
