"""Bisection across releases, on a fake measurement with a known change point (noise included), and the release
list it bisects over (parsed from the package index's answer)."""

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import made_releases

from jaxmlp.cli import main
from jaxmlp.errors import JaxmlpError
from jaxmlp.measure.bisection import (
    RUNS,
    Bisection,
    ReleasesFailed,
    ResultsDiffer,
    answer_line,
    bisect,
    checked_line,
    expected_releases,
)
from jaxmlp.measure.environments import published
from jaxmlp.report.sections import build_sections
from jaxmlp.results.findings.model import ANCHOR
from jaxmlp.results.findings.sweeps import bisection
from jaxmlp.results.schema import parse
from jaxmlp.results.schema.bisect import BisectDocument
from jaxmlp.results.store.frames import load
from jaxmlp.results.store.writing import ResultsStore

ROOT = Path(__file__).parent.parent
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
    assert answer_line(result).startswith("no change found between 0.6.2 and 0.10.0 (0.10.0 against 0.6.2: ")


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


class Failing(Fake):
    """The fake's releases, those from ``fails`` on failing (a probe that holds one raises `ReleasesFailed`);
    records each release ``fails`` was asked about."""

    def __init__(self, fails: str, change: str | None = None):
        super().__init__(change)
        self.first_failing, self.asked = self.releases.index(fails), []

    def failure(self, release: str) -> str:
        return f"the worker failed: {release} lacks it" if self.releases.index(release) >= self.first_failing else ""

    def __call__(self, names):
        failed = {n: self.failure(n) for n in names if self.failure(n)}
        if failed:
            self.measured.append(list(names))
            raise ReleasesFailed(failed)
        return super().__call__(names)

    def fails(self, release: str) -> str:
        self.asked.append(release)
        return self.failure(release)


@pytest.mark.parametrize("fails", RELEASES[1:])
def test_the_first_release_that_fails_is_found_by_one_probe_a_release(fails):
    fake = Failing(fails)
    result = bisect(RELEASES, fake, fails=fake.fails)
    at = RELEASES.index(fails)
    assert (result.status, result.first, result.after) == ("fails", fails, RELEASES[at - 1])
    assert result.failure == f"the worker failed: {fails} lacks it" and result.answered
    assert (
        answer_line(result)
        == f"first release that fails: {fails} ({result.failure}); the last that runs: {RELEASES[at - 1]}"
    )
    assert len(fake.asked) <= 3 and len(set(fake.asked)) == len(fake.asked)  # about log2 of the releases between
    assert result.checked[fails] != RUNS and result.checked[RELEASES[at - 1]] == RUNS
    assert "fails" in checked_line(result) and json.loads(json.dumps(result.to_json()))["failure"] == result.failure
    assert Bisection.from_json(result.to_json()) == result


def test_a_failure_is_searched_from_a_release_that_runs():
    fake = Failing("0.9.1", change="0.7.1")
    result = bisect(RELEASES, fake, fails=fake.fails)  # the bad end fails: the first probe meets it
    assert result.status == "fails" and result.first == "0.9.1" and result.probes == ()
    with pytest.raises(ReleasesFailed, match="0.6.2"):  # the good end fails too: nothing known to run
        bisect(RELEASES, Failing("0.6.2"), fails=lambda release: "")
    with pytest.raises(ReleasesFailed):  # without a way to probe one release, as before
        bisect(RELEASES, Failing("0.8.0"))


def test_the_release_list_is_parsed_from_the_package_index():
    jax, jaxlib = published.parse_index_versions(INDEX_ANSWER), published.parse_index_versions(JAXLIB_ANSWER)
    assert jax[:3] == ["0.2.0", "0.4.29", "0.4.30"] and jax[-1] == "0.10.2"
    # published for both, and supported: 0.4.37 and 0.5.2 had no jaxlib of their own, 0.4.29 is too old
    assert published.releases(jax, jaxlib) == ["0.4.30", "0.4.31", "0.4.33", "0.8.3", "0.9.0.1", "0.10.1", "0.10.2"]
    assert published.between(published.releases(jax, jaxlib), "0.4.31", "0.9.0.1") == [
        "0.4.31",
        "0.4.33",
        "0.8.3",
        "0.9.0.1",
    ]
    assert published.parse_index_versions("ERROR: No matching distribution found for jax") == []


def test_an_unreachable_index_says_how_to_pass_the_releases(monkeypatch):
    with pytest.raises(JaxmlpError, match=r"could not list jax's releases .* --versions 0.6.2 0.7.0"):
        published.index_versions("jax", python="/nonexistent/python")


def test_a_release_outside_the_list_is_named():
    with pytest.raises(JaxmlpError, match="jax 0.7.5 is not among the releases"):
        published.between(RELEASES, "0.6.2", "0.7.5")


def test_bisect_writes_every_probe_and_its_answer_and_the_report_shows_it(tmp_path, monkeypatch, capsys, explained):
    """`jaxmlp sweep bisect` over releases given by hand, the worker processes replaced by the fake's values."""
    from jaxmlp.measure.records import ProcessResult, WorkloadTimes
    from jaxmlp.measure.sweep import bisect, matrix

    fake = Fake("0.8.1", processes=8)
    monkeypatch.setattr(bisect, "environments", lambda matrix_, names, say=print: {n: "python" for n in names})

    def measure_cells(runners, matrix_, say=print, progress=None, planned=None):
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
    assert not [s for s in sections if s.anchor == ANCHOR.matrix]  # probes are the bisection's, not sweeps
    (section,) = [s for s in sections if s.anchor == ANCHOR.bisection]
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


@pytest.mark.xdist_group("processes")
def test_a_bisection_over_a_release_that_fails_files_the_first_that_fails(tmp_path, capsys, explained, monkeypatch):
    """Real worker processes: the workload fails from 0.6.0 on; the first probe meets it at the bad end, one probe
    process of 0.6.0 finds it the first."""
    releases = {"0.5.1": "", "0.5.3": "", "0.6.0": "tree_map", "0.6.2": "tree_map"}
    monkeypatch.chdir(ROOT)  # the repository: the workload inside it is recorded relative to it
    made_releases(tmp_path / "envs", removed=releases)
    workload = f"{ROOT / 'tests' / 'workloads' / 'removed_api.py'}:make"
    argv = ["sweep", "bisect", "0.5.1", "0.6.2", "--versions", *releases, "--workload", workload, "--calls", "2"]
    argv += ["--processes", "2", "--envs", str(tmp_path / "envs"), "--out", str(tmp_path / "out")]
    assert main(argv) == 1
    said = capsys.readouterr()
    failure = (  # the workload as the folder records it (relative: the tests run in the repository)
        "failed at its probe: the worker failed: workload 'tests/workloads/removed_api.py:make': make() raised "
        "AttributeError: module 'jax' has no attribute 'tree_map'"
    )
    line = f"first release that fails: 0.6.0 ({failure}); the last that runs: 0.5.3"
    assert line in said.out and said.err.strip().splitlines()[-1].startswith(f"jaxmlp sweep bisect: {line}")
    assert "probe of 0.6.0: failed at its probe" in said.out and not explained  # a failure is not explained
    (folder,) = (tmp_path / "out").iterdir()
    assert [p.name for p in folder.iterdir() if p.is_dir()] == ["probe-1"]  # the probe that met it
    cells = parse(json.loads((folder / "probe-1" / "cells.json").read_text()))
    assert [c.status for c in cells.cells] == ["ok", "ok", failure] and cells.complete  # its answer: no rounds
    assert str(ROOT) not in (folder / "probe-1" / "cells.json").read_text() + (folder / "bisect.json").read_text()
    assert "Measuring" not in said.out
    assert said.out.index("Searching for the first release that fails") < said.out.index("probe of 0.6.0")
    doc = parse(json.loads((folder / "bisect.json").read_text()))
    b = doc.bisection
    assert (b.status, b.first, b.after, b.failure, doc.line) == ("fails", "0.6.0", "0.5.3", failure, line)
    assert b.checked == {"0.5.1": RUNS, "0.5.3": RUNS, "0.6.0": failure, "0.6.2": failure}
    finding = bisection(load(ResultsStore(tmp_path / "out")).bisections, tmp_path / "out")
    assert finding.answer.startswith("First release that fails: 0.6.0")
    capsys.readouterr()
    assert main(["summary", str(folder)]) == 0  # in this process: the bisection's processes were real
    summary = capsys.readouterr().out
    assert f"Verdict: {line}" in summary and "0.5.1 runs, 0.5.3 runs, 0.6.0 fails" in summary
    assert "probe 1 met the failure at its probe processes; no rounds" in summary
    assert main(["summary", str(folder / "probe-1")]) == 0  # the probe that met it is whole: nothing to resume
    probe = capsys.readouterr().out
    assert failure in probe and "INCOMPLETE" not in probe and "resume" not in probe
    assert main(["report", "--results", str(tmp_path / "out"), "--out", str(tmp_path / "report")]) == 0  # no runs
    assert line in (tmp_path / "report" / "summary.md").read_text()


def _flow_with(monkeypatch, outcomes, probed_status="ok", releases=("0.5.1", "0.5.3", "0.6.0"), values=None):
    """The bisection's flow over ``releases``, its cells' outcomes given (``outcomes``: release -> status at the
    probe, or "rounds failed" where every process of it failed in the rounds); a probe of one release answers
    ``probed_status``; each release's workload returns ``values[release]`` (1.0 where not given). Returns a call
    that runs it and what was said."""
    from jaxmlp.measure.records import Leaf, Output, ProcessResult, WorkloadTimes
    from jaxmlp.measure.sweep import bisect as flow
    from jaxmlp.measure.sweep import matrix
    from jaxmlp.measure.sweep.settings import Detector, Matrix, Measuring

    monkeypatch.setattr(flow, "environments", lambda matrix_, names, say=print: {n: "python" for n in names})

    def measure_cells(runners, matrix_, say=print, progress=None, planned=None):
        status = {r.name: outcomes.get(r.label, "ok") for r in runners}
        probed = matrix.Probed(
            {n: r for r in runners if (n := r.name) and status[n] in ("ok", "rounds failed")},
            {n: matrix.Outcome("ok" if s == "rounds failed" else s) for n, s in status.items()},
            {},
            {},
        )
        if planned:
            planned(probed, {}, 1.0)

        def times(release):
            value = (values or {}).get(release, 1.0)
            output = Output((Leaf((1,), "float32", (value,), value, abs(value)),))
            return ProcessResult({}, {"batched": WorkloadTimes.of(0.1, [0.2, 0.1], output)})

        processes = {n: [times(n)] * 3 for n in probed.runners if status[n] == "ok"}
        failures = tuple(matrix.Failure(n, 0, "it crashed") for n in probed.runners if status[n] == "rounds failed")
        return matrix.Measured(probed, processes, {}, failures)

    monkeypatch.setattr(flow, "measure_cells", measure_cells)
    monkeypatch.setattr(
        flow,
        "probe",
        lambda runners, *a: matrix.Probed({}, {r.name: matrix.Outcome(probed_status) for r in runners}, {}, {}),
    )
    said: list[str] = []

    def run():
        return flow.run(list(releases), "batched", Measuring(), Matrix(), Detector(), lambda *a: None, said.append)

    return run, said


def test_a_release_whose_every_process_failed_in_the_rounds_is_not_searched_for(monkeypatch):
    """Its probe ran, so a probe process would not find it failing: the old one line, no search."""
    run, said = _flow_with(monkeypatch, {"0.6.0": "rounds failed"})
    with pytest.raises(JaxmlpError, match=r"0.6.0 \(every process failed \(the last: it crashed\)\): no bisection"):
        run()
    assert not [s for s in said if "Searching" in s or "probe of" in s]


def test_a_failure_at_the_probe_is_searched_for_and_said_once_it_starts(monkeypatch):
    fails = "failed at its probe: the worker failed: gone"
    run, said = _flow_with(monkeypatch, {"0.6.0": fails})
    result = run()  # the probe of 0.5.3 (the midpoint) ran: 0.6.0 is the first that fails, no search needed
    assert (result.status, result.first, result.after) == ("fails", "0.6.0", "0.5.3")
    assert not [s for s in said if "Searching" in s]
    run, said = _flow_with(monkeypatch, {"0.5.1": fails})
    with pytest.raises(JaxmlpError, match="a failure is bisected from a GOOD release that runs"):
        run()  # the good end fails: no search either
    assert not [s for s in said if "Searching" in s]
    four = ("0.5.1", "0.5.3", "0.6.0", "0.6.2")
    run, said = _flow_with(monkeypatch, {"0.6.2": fails}, probed_status=fails, releases=four)
    assert run().first == "0.6.0" and said[-2:] == [
        "Searching for the first release that fails, a probe process each",
        f"probe of 0.6.0: {fails}",
    ]


def test_a_release_that_refuses_the_flag_is_one_line_not_a_failure(monkeypatch):
    refused = "flag unknown in 0.6.0 (--xla_nonsense)"
    run, said = _flow_with(monkeypatch, {"0.6.0": refused})
    with pytest.raises(JaxmlpError, match=r"not measured: 0.6.0 \(flag unknown in 0.6.0"):
        run()  # not a KeyError for the cell that has no processes
    fails = "failed at its probe: the worker failed: gone"
    four = ("0.5.1", "0.5.3", "0.6.0", "0.6.2")  # the first probe: 0.5.1, 0.5.3, 0.6.2; the search: 0.6.0
    run, said = _flow_with(monkeypatch, {"0.6.2": fails}, probed_status=refused, releases=four)
    with pytest.raises(JaxmlpError, match=r"not measured: 0.6.0 \(flag unknown in 0.6.0"):
        run()  # the search's probe of one release refuses it: not counted as a failure


def test_a_probe_whose_releases_computed_different_values_ends_the_bisection_with_no_verdict_on_time(monkeypatch):
    """0.6.0 returns other values than 0.5.1 and 0.5.3: no probe is compared on time, the answer names each pair
    whose two sides differ (0.5.3 against 0.5.1 agree: not named)."""
    run, said = _flow_with(monkeypatch, {}, values={"0.6.0": 1.1})
    result = run()
    assert (result.status, result.probes, result.first, result.comparison) == ("results differ", (), None, None)
    assert answer_line(result) == (
        "results differ: 0.6.0 on batched: results differ from 0.5.1: values differ by 0.1 relative (tolerance "
        "0.001); 0.6.0 on batched: results differ from 0.5.3: values differ by 0.1 relative (tolerance 0.001): not "
        "compared on time, so not bisected (a larger --tolerance accepts the difference)"
    )
    assert not [line for line in said if "slower" in line or "faster" in line]
    pure = bisect(["a", "b"], lambda names: (_ for _ in ()).throw(ResultsDiffer("w", {("a", "b"): "why"})))
    assert pure.status == "results differ" and "b on w: why" in pure.reason


def test_bisect_whose_results_differ_exits_1_with_its_line_and_no_explanation(tmp_path, monkeypatch, capsys, explained):
    """`jaxmlp sweep bisect` where the bad end computes other values: the probe is filed, the command's last line
    on stderr says the results differ, exit 1, nothing explained; a --tolerance that accepts it bisects on time."""
    from jaxmlp.measure.records import Leaf, Output, ProcessResult, WorkloadTimes
    from jaxmlp.measure.sweep import bisect, matrix

    fake = Fake("0.7.0", processes=6)
    monkeypatch.setattr(bisect, "environments", lambda matrix_, names, say=print: {n: "python" for n in names})

    def measure_cells(runners, matrix_, say=print, progress=None, planned=None):
        values = fake([r.label for r in runners])

        def process(release, v):
            value = 1.01 if release == "0.7.0" else 1.0
            output = Output((Leaf((1,), "float32", (value,), value, abs(value)),))
            return ProcessResult({"jax": release}, {"batched": WorkloadTimes.of(0.1, [2 * v, v], output)})

        processes = {r.name: [process(r.label, v) for v in values[r.label]] for r in runners}
        outcomes = {r.name: matrix.Outcome("ok") for r in runners}
        probed = matrix.Probed({r.name: r for r in runners}, outcomes, {}, {})
        return matrix.Measured(probed, processes, {}, tolerance=matrix_.tolerance)

    monkeypatch.setattr(bisect, "measure_cells", measure_cells)
    argv = ["sweep", "bisect", "0.6.2", "0.7.0", "--versions", "0.6.2", "0.7.0", "--out", str(tmp_path / "a")]
    assert main(argv) == 1
    said = capsys.readouterr()
    last = said.err.strip().splitlines()[-1]
    assert last.startswith("jaxmlp sweep bisect: results differ: 0.7.0 on batched: results differ from 0.6.2")
    assert "first slower release" not in said.out and not explained
    (folder,) = (tmp_path / "a").iterdir()
    doc = parse(json.loads((folder / "bisect.json").read_text()))
    assert (folder / "probe-1").is_dir() and doc.bisection.status == "results differ" and doc.line in last
    assert main(["summary", str(folder)]) == 0
    summary = capsys.readouterr().out
    assert f"Verdict: {doc.line}" in summary and "not compared on time" in summary and "slower" not in summary
    argv[-1] = str(tmp_path / "b")
    assert main([*argv, "--tolerance", "0.1"]) == 0  # the difference accepted: bisected on time
    assert "first slower release: 0.7.0" in capsys.readouterr().out
