"""The release timeline (`jaxmlp sweep timeline`), its change-point detector (`jaxmlp.changepoints`) and the
detector's validation (`jaxmlp sweep validate`): seeded, small versions of what the committed validation measures."""

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import made_releases

from jaxmlp import changepoints
from jaxmlp.cli import main
from jaxmlp.errors import JaxmlpError
from jaxmlp.measure.bisection import bisect
from jaxmlp.measure.environments import disk as env_disk
from jaxmlp.measure.environments import envs
from jaxmlp.measure.records import ProcessResult, WorkloadTimes
from jaxmlp.measure.sweep import matrix, timeline, validation
from jaxmlp.measure.sweep.settings import MIN_PROCESSES, Timeline
from jaxmlp.report.plots import draw
from jaxmlp.report.sections import build_sections
from jaxmlp.results.findings import findings
from jaxmlp.results.findings.model import ANCHOR
from jaxmlp.results.schema import parse
from jaxmlp.results.store.frames import load
from jaxmlp.results.store.writing import ResultsStore

RUNS = Path(__file__).resolve().parent / "fixtures" / "runs"  # real results, copied
SWEEP = RUNS / "jaxlib-20261203T055619"  # a committed sweep: 10 fresh processes a cell


def history(levels, seed=0, samples=8, spread=0.02):
    """Each release's samples: its level times log-normal noise of ``spread``."""
    rng = np.random.default_rng(seed)
    return [list(level * np.exp(rng.normal(0, spread, samples))) for level in levels]


def labels(n):
    return [f"0.4.{30 + i}" for i in range(n)]


# --- the detector -------------------------------------------------------------------------------------------------


def test_a_20_percent_step_is_found_at_its_release_with_its_statistics():
    levels = [1.0] * 6 + [1.2] * 6
    (change,) = changepoints.detect(labels(12), history(levels))
    assert (change.kind, change.at, change.before, change.index) == ("step", "0.4.36", "0.4.35", 6)
    c = change.comparison
    assert c.verdict == "regression" and c.ratio == pytest.approx(1.2, rel=0.03)
    assert c.ci_low > 1.1 and c.p_slower < 1e-6 and (c.n_baseline, c.n_new) == (48, 48)  # every sample either side
    assert change.line().startswith("0.4.36 slower than 0.4.35 and before, ×1.2")


def test_a_release_unlike_both_neighbours_is_one_transient_not_two_steps():
    levels = [1.0] * 10
    levels[4] = 1.31
    (change,) = changepoints.detect(labels(10), history(levels, seed=1))
    assert (change.kind, change.at, change.index) == ("transient", "0.4.34", 4)
    assert change.line().startswith("0.4.34 slower than both neighbours, ×1.3")
    assert change.comparison.n_baseline == 16 and change.comparison.n_new == 8  # both neighbours against it


def test_flat_histories_stay_quiet():
    """At most the validation's goal (2%) of flat histories flagged: 1 of these 100 (seed 6: its last release alone
    3.1% faster by chance)."""
    sizes = {seed: 8 + seed % 23 for seed in range(100)}
    flagged = [seed for seed, n in sizes.items() if changepoints.detect(labels(n), history([1.0] * n, seed=seed))]
    assert flagged == [6]


def test_two_steps_apart_are_two_and_small_steps_in_a_row_are_one_drift():
    two = changepoints.detect(labels(16), history([1.0] * 5 + [1.1] * 6 + [1.21] * 5, seed=2))
    assert [(c.kind, c.index) for c in two] == [("step", 5), ("step", 11)]
    drift = changepoints.detect(
        labels(14), history([1.0] * 4 + [1.04**k for k in range(1, 6)] + [1.04**5] * 5, seed=3, spread=0.01)
    )
    assert [c.kind for c in drift] == ["drift"]
    assert 4 <= drift[0].index <= 9 and drift[0].comparison.ratio == pytest.approx(1.04**5, rel=0.04)
    assert drift[0].line().startswith(f"drift from {drift[0].before} to {drift[0].at}, slower, ×1.2")


def test_a_faster_release_and_unusable_samples():
    (change,) = changepoints.detect(labels(8), history([1.0] * 4 + [0.85] * 4, seed=4))
    assert change.comparison.verdict == "improvement" and change.direction == "faster"
    assert changepoints.detect(labels(3), [[1.0, 1.1], [float("nan"), 1.0], [1.0, 1.0]]) == []
    with pytest.raises(ValueError, match="one label per point"):
        changepoints.detect(labels(2), history([1.0] * 3))


def test_a_change_reads_back_from_json():
    (change,) = changepoints.detect(labels(8), history([1.0] * 4 + [1.2] * 4))
    assert changepoints.Change.from_json(json.loads(json.dumps(change.to_json()))) == change


# --- the validation -----------------------------------------------------------------------------------------------


def test_the_validation_finds_big_steps_and_stays_quiet_on_flat_histories():
    noise = np.exp(np.random.default_rng(5).normal(0, 0.02, 300))
    rows = validation.run(noise, ["pelt"], histories=30, seed=1, cases=["flat", "step 20%", "transient 10%"])
    found = {r.case: r for r in rows}
    assert found["flat"].false_alarms == 0 and np.isnan(found["flat"].recall)
    assert found["step 20%"].recall == 1.0 and found["transient 10%"].recall >= 0.9
    again = validation.run(noise, ["pelt"], histories=30, seed=1, cases=["flat", "step 20%", "transient 10%"])
    assert [r.to_json() for r in again] == [r.to_json() for r in rows]  # seeded: the same histories, answer


def test_synthetic_histories_carry_their_truth():
    rng = np.random.default_rng(0)
    noise = np.ones(10)
    h = validation.history("step 10%", noise, rng)
    (k,) = h.truth
    assert 8 <= len(h.samples) <= 30 and all(len(s) == validation.SAMPLES for s in h.samples)
    assert {round(s[0] / h.samples[0][0], 6) for s in h.samples[k:]} in ({1.1}, {round(1 / 1.1, 6)})
    two = validation.history("two steps 10%", noise, rng)
    assert two.truth[1] - two.truth[0] > changepoints.DRIFT_GAP


def test_jaxmlp_sweep_validate_writes_its_document_and_table(tmp_path, capsys):
    out = tmp_path / "out"
    argv = [
        "sweep",
        "validate",
        str(SWEEP),
        "--histories",
        "5",
        "--detectors",
        "pelt",
        "binseg",
        "--peer",
        "5",
        "--held-out",
        "7",
        "--out",
        str(out),
    ]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    (path,) = out.glob("detector-*/validation.json")
    doc = parse(json.loads(path.read_text()))
    assert {r.detector for r in doc.rows} == {"pelt", "binseg"} and len(doc.rows) == 2 * len(validation.CASES)
    assert doc.settings["noise_cells"] == 10 and doc.settings["noise_samples"] == 100
    assert "pelt found" in printed and "binseg false alarms" in printed and f"Wrote {path}" in printed
    assert [r.detector for r in doc.peer] == ["jaxmlp", "otava"] * 2 and doc.peer[0].series == 22  # every 5th of 110
    assert [(r.seed, r.held_out) for r in doc.peer] == [(42, False), (42, False), (7, True), (7, True)]
    assert "On the held-out seeds it holds on" in printed and "Each seed, tuning and held out" in printed
    assert "On Otava's suite" in printed and "within 5 points" in printed
    results = load(ResultsStore(out))
    assert not results.skipped and len(results.validations) == 1


def test_validate_refuses_what_it_cannot_do(tmp_path, capsys):
    assert main(["sweep", "validate", str(tmp_path), "--detectors", "magic", "--out", str(tmp_path)]) == 2
    assert "choose among pelt, binseg, edivisive" in capsys.readouterr().err
    assert main(["sweep", "validate", str(tmp_path), "--peer", "-1", "--out", str(tmp_path)]) == 2
    assert "--peer" in capsys.readouterr().err
    assert main(["sweep", "validate", str(tmp_path), "--held-out", "42", "--out", str(tmp_path)]) == 2
    assert "the seed the detector was tuned on" in capsys.readouterr().err
    assert main(["sweep", "validate", str(tmp_path), "--out", str(tmp_path)]) == 2
    assert "no sweep cell of 4 or more processes" in capsys.readouterr().err


def test_the_detectors_bench_takes_its_detectors_space_separated(tmp_path, monkeypatch, capsys):
    """bench/validate_detectors.py (E-divisive's own environment) takes lists as the CLI does, a comma list refused;
    its main in this process (its arguments are the test, not a process start)."""
    import importlib.util

    script = Path(__file__).resolve().parents[1] / "bench" / "validate_detectors.py"
    spec = importlib.util.spec_from_file_location("validate_detectors", script)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    def bench(*detectors: str) -> int:
        argv = [str(script), str(SWEEP), "--detectors", *detectors, "--histories", "1", "--out", str(tmp_path)]
        monkeypatch.setattr(sys, "argv", argv)
        try:
            return module.main()
        except SystemExit as e:  # argparse's refusal
            return int(e.code or 0)

    assert bench("pelt,binseg") == 2 and "invalid choice: 'pelt,binseg'" in capsys.readouterr().err
    assert bench("pelt", "binseg") == 0, capsys.readouterr().err[-2000:]
    (path,) = tmp_path.glob("detector-*/validation.json")
    assert {r.detector for r in parse(json.loads(path.read_text())).rows} == {"pelt", "binseg"}


# --- the timeline's releases, budget and environments --------------------------------------------------------------


KNOWN = ["0.4.30", "0.4.31", "0.4.33", "0.4.34", "0.4.35", "0.4.36", "0.4.38", "0.5.0", "0.5.1", "0.5.3", "0.6.0"]


def test_the_releases_between_the_ends_every_patch_or_the_last_of_each_minor():
    assert timeline.releases(Timeline("0.4.33", "0.5.1"), KNOWN) == KNOWN[2:9]
    assert timeline.releases(Timeline("0.5.1", "0.4.33"), KNOWN) == KNOWN[2:9]  # either order
    assert timeline.releases(Timeline("0.4.30", "0.6.0", every="minor"), KNOWN) == [
        "0.4.30",
        "0.4.38",
        "0.5.3",
        "0.6.0",
    ]
    offline = Timeline("0.4.30", "0.4.34", versions=("0.4.31", "0.4.33"))
    assert timeline.releases(offline) == ["0.4.30", "0.4.31", "0.4.33", "0.4.34"]
    with pytest.raises(JaxmlpError, match="only 2 releases from 0.4.30 to 0.4.31"):
        timeline.releases(Timeline("0.4.30", "0.4.31"), KNOWN)


def test_the_budget_sets_the_processes_a_release():
    assert timeline.fitted_processes(18 * 60, 0, 8 * 5.0) == 27  # 8 releases of 5 s a process
    assert timeline.fitted_processes(60, 0, 40.0) == MIN_PROCESSES  # never fewer
    with pytest.raises(JaxmlpError, match="--budget"):
        Timeline("0.4.30", "0.5.0", budget=-1)


def test_the_size_cap_removes_the_least_recently_used_first(tmp_path, monkeypatch, capsys):
    assert env_disk.least_recent([("a", 1, 5), ("b", 2, 5), ("c", 3, 5)], {"a"}, 10) == ["b"]
    assert env_disk.least_recent([("a", 1, 5), ("b", 2, 5), ("c", 3, 5)], {"a"}, 8) == ["b", "c"]
    for age, version in enumerate(["0.4.30", "0.4.31", "0.4.33"]):
        env = envs.env_path(version, tmp_path)
        env.mkdir()
        (env / "lib.bin").write_bytes(b"x" * 1_000_000)
        (env / envs.COMPLETE).write_text("1.0\n")
        stamp = 1_000_000 + age
        os.utime(env / envs.COMPLETE, (stamp, stamp))
    monkeypatch.setenv(env_disk.MAX_GB, "0.0025")
    assert env_disk.prune(["0.4.30"], tmp_path) == [envs.env_path("0.4.31", tmp_path).name]
    assert "removed the least recently used, jax-0.4.31-py" in capsys.readouterr().out
    monkeypatch.setenv(env_disk.MAX_GB, "lots")
    with pytest.raises(JaxmlpError, match="not a number of GB"):
        env_disk.prune([], tmp_path)


# --- the command, end to end (worker processes replaced by their results) ------------------------------------------


TRUE = {
    "0.4.30": 1.0,
    "0.4.31": 1.0,
    "0.4.33": 1.3,
    "0.4.34": 1.0,
    "0.4.35": 1.0,
    "0.4.36": 1.2,
    "0.4.38": 1.2,
    "0.5.0": 1.2,
}


def fake_releases(root: Path, monkeypatch) -> None:
    """Each release's environment as made (this interpreter), and its workers' results: ``TRUE`` with 1% noise."""
    made_releases(root, *TRUE)
    rng = np.random.default_rng(7)

    def run_worker(runner, pythonpath=None, timeout=None):
        value = TRUE[runner.label] * float(np.exp(rng.normal(0, 0.01)))
        meta = {
            "jax": runner.label,
            "jaxlib": runner.label,
            "injected_slowdown": 0.0,
            "host": "here",
            "dataset": "synthetic",
            "samples": 256,
            "epochs": 2,
        }
        return ProcessResult(meta, {"batched": WorkloadTimes.of(0.1, [2 * value, value])})

    monkeypatch.setattr(matrix, "run_worker", run_worker)


def test_the_timeline_measures_every_release_and_ends_with_its_verdict(tmp_path, monkeypatch, capsys, explained):
    fake_releases(tmp_path / "envs", monkeypatch)
    out = tmp_path / "out"
    argv = [
        "sweep",
        "timeline",
        "0.4.30",
        "0.5.0",
        "--versions",
        *TRUE,
        "--processes",
        "8",
        "--envs",
        str(tmp_path / "envs"),
        "--out",
        str(out),
    ]
    assert main(argv) == 3  # the gate: a release slower beyond the threshold (errors.gate)
    printed = capsys.readouterr().out
    (folder,) = out.iterdir()
    assert folder.name.startswith("timeline-") and (folder / "jax-0.4.33.json").exists()
    assert printed.startswith(
        "Timeline 0.4.30 to 0.5.0: 8 releases (0.4.30, 0.4.31, 0.4.33, 0.4.34, 0.4.35, 0.4.36, "
        "0.4.38, 0.5.0), 1 column(s); every environment made"
    )
    assert "Cost: 8 cells x 8 processes = 64 processes; the probe's processes took" in printed
    verdict = printed[printed.index(f"Release timeline: {folder.name}") :]
    assert "0.4.33 slower than both neighbours, ×1.3" in verdict
    assert "0.4.36 slower than 0.4.35 and before, ×1.2" in verdict
    assert verdict.index("Wrote 8 cell files into") > verdict.index("0.4.36 slower")
    # `jaxmlp sweep explain` at each change point, into the timeline's folder
    assert "Explaining batched: 0.4.35 -> 0.4.36 (step)" in printed
    assert ("0.4.35", "0.4.36", "batched") in explained and "could not explain it: explain faked" in printed
    results = load(ResultsStore(out))
    (section,) = [s for s in build_sections(results) if s.anchor == ANCHOR.timeline]
    assert not [s for s in build_sections(results) if s.anchor == ANCHOR.matrix]  # a timeline is not a version matrix
    (plot,) = section.plots
    assert plot.kind == "timeline" and len(draw(plot)) > 1000
    (table,) = section.tables
    assert list(table.frame["kind"]) == ["transient", "step"] and list(table.frame["release"]) == ["0.4.33", "0.4.36"]
    answers = {a.question: a for a in findings(results)}
    assert answers["Where across releases"].answer.startswith("batched: 0.4.33 slower than both neighbours, ×1.3")
    assert section.answers == (answers["Where across releases"],)  # the section opens with the overview's answer
    assert main(["summary", str(folder)]) == 0
    assert "0.4.33 slower than both neighbours" in capsys.readouterr().out


def test_the_timeline_is_measured_from_its_settings_without_argparse(tmp_path, monkeypatch, explained):
    """`timeline.measure` as other code calls it: these exact releases, this folder; its outcome says what it found."""
    from jaxmlp.flows import timeline as command
    from jaxmlp.measure.sweep.settings import Matrix, Measuring

    fake_releases(tmp_path / "envs", monkeypatch)
    outcome = command.measure(
        timeline=Timeline("0.4.30", "0.5.0", tuple(TRUE)),  # these exact releases
        measuring=Measuring(),
        matrix=Matrix(processes=8, envs=tmp_path / "envs"),
        out=tmp_path,
    )
    assert outcome.code == 3 and outcome.unmeasured == "" and outcome.folder.parent == tmp_path  # a release slower
    assert (outcome.folder / "jax-0.5.0.json").exists()
    assert {(c.at, c.kind) for c in outcome.changes} >= {("0.4.33", "transient"), ("0.4.36", "step")}
    compared = outcome.verdicts()  # each release against the one before, as the folder files it
    assert list(compared["release"]) == list(TRUE) and compared.set_index("release")["verdict"]["0.4.36"] == "slower"


def test_bad_timelines_are_one_line_errors(tmp_path, capsys):
    assert main(["sweep", "timeline", "0.4.30", "0.4.30", "--out", str(tmp_path)]) == 2
    assert "A and B are the same release" in capsys.readouterr().err
    assert main(["sweep", "timeline", "0.4.30", "0.4.31", "--versions", "0.4.31", "--out", str(tmp_path)]) == 2
    assert "only 2 releases from 0.4.30 to 0.4.31" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


# --- bisect points to the timeline ---------------------------------------------------------------------------------


def test_a_bisection_with_no_change_between_its_ends_points_to_the_timeline():
    def measure(names):
        return {name: history([1.0], seed=i, samples=10)[0] for i, name in enumerate(names)}

    result = bisect(["0.4.30", "0.4.31", "0.4.33"], measure)
    assert result.status == "no change"
    assert "Bisection assumes a monotone history" in result.reason
    assert result.reason.endswith(
        "`jaxmlp sweep timeline 0.4.30 0.4.33` measures every release between and shows transients"
    )


def test_the_committed_timeline_reads_back_with_its_changes():
    folder = RUNS / "timeline-20261205T181756"
    (section,) = [s for s in build_sections(load(ResultsStore(folder))) if s.anchor == ANCHOR.timeline]
    assert len(section.plots) == 3  # batched, scan, step
    note = section.shown[0].note  # counts as whole numbers, a range whose ends are one said once
    assert "data mnist, 8 epochs of 2000 images; step 30 calls a process" in note
    assert "one fresh process (27 a release," in note


def test_a_column_without_a_change_says_its_ends_in_the_four_words():
    """Where the detector finds nothing, a column's verdict is its last release against its first: the same only
    where that interval lies within the threshold both ways, else inconclusive with what would settle it."""
    from jaxmlp.results.sweep.compared import TimelineColumn, column_said, column_verdicts

    rng = np.random.default_rng(0)
    quiet = tuple(tuple(1.0 + rng.normal(0, 0.005, 30)) for _ in range(3))
    noisy = tuple(tuple(np.exp(rng.normal(0, 0.2, 7))) for _ in range(3))
    releases = ("0.4.30", "0.4.31", "0.4.33")
    (same,) = column_verdicts(TimelineColumn("w", "", releases, quiet, ()))
    (unsure,) = column_verdicts(TimelineColumn("w", "", releases, noisy, ()))
    assert (same.word, unsure.word) == ("the same", "inconclusive")
    said = column_said(TimelineColumn("w", "", releases, noisy, ()))
    assert said.startswith("no change found; 0.4.33 against 0.4.30: inconclusive, ×") and "would settle it" in said
