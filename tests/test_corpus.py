"""The corpus of known regressions run as a user works and scored (`jaxmlp sweep corpus`): the test corpus
(tests/fixtures/corpus) over releases whose environments are this interpreter and whose workers' results are faked,
as tests/test_timeline.py fakes them."""

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from conftest import made_releases

from jaxmlp.cli import main
from jaxmlp.errors import JaxmlpError
from jaxmlp.measure import workers
from jaxmlp.measure.environments import published
from jaxmlp.measure.records import ProcessResult, WorkloadTimes
from jaxmlp.measure.sweep import matrix
from jaxmlp.measure.sweep.corpus import read_manifest
from jaxmlp.report.sections import build_sections
from jaxmlp.results.findings.model import ANCHOR
from jaxmlp.results.schema import parse
from jaxmlp.results.store.frames import load
from jaxmlp.results.store.writing import ResultsStore

MANIFEST = Path(__file__).parent / "fixtures" / "corpus" / "corpus.toml"
RELEASES = ("0.4.30", "0.4.31", "0.4.33", "0.4.34", "0.4.35")
LISTED = ("0.4.30", "0.4.31", "0.4.32", "0.4.33", "0.4.34", "0.4.35")  # the source's: 0.4.32 in no case's list


def fake_releases(root: Path, monkeypatch) -> None:
    """Each release the source lists (`LISTED`) with its environment made (this interpreter); its workers' results:
    ``step`` x1.3 slower from 0.4.34 on (not with the XLA flag), ``control`` flat, ``fails`` failing in 0.4.33 (and
    0.4.32, which only a bisection measures); 1% noise, stretched by the injected slowdown."""
    monkeypatch.setattr(published, "available", lambda wheels: list(LISTED))
    made_releases(root, *LISTED)
    rng = np.random.default_rng(3)

    def run_worker(runner, pythonpath=None, timeout=None):
        (name,) = runner.measuring.names
        if name == "product.fails" and runner.label in ("0.4.32", "0.4.33"):
            raise workers.ChildFailed("fails: exited with 1: RuntimeError: no kernel", None, 1, "no kernel")
        slower = name == "product.step" and runner.label in ("0.4.34", "0.4.35") and not runner.xla_flags
        value = (1.3 if slower else 1.0) * float(np.exp(rng.normal(0, 0.01))) * (1 + runner.measuring.inject_slowdown)
        meta = {"jax": runner.label, "jaxlib": runner.label, "xla_flags": runner.xla_flags, "host": "here", "epochs": 2}
        return ProcessResult(meta, {name: WorkloadTimes.of(0.1, [2 * value, value, value])})

    monkeypatch.setattr(matrix, "run_worker", run_worker)


def test_the_corpus_runs_each_case_as_a_user_would_and_scores_it(tmp_path, monkeypatch, capsys):
    fake_releases(tmp_path / "envs", monkeypatch)
    out = tmp_path / "out"
    argv = ["sweep", "corpus", str(MANIFEST), "--processes", "7", "--envs", str(tmp_path / "envs"), "--out", str(out)]
    assert main([*argv, "--slowdown-trials", "1"]) == 0  # the failure case's failure is what it expects
    printed = capsys.readouterr().out
    (folder,) = out.iterdir()
    assert folder.name.startswith("corpus-")
    assert f"jaxmlp sweep timeline 0.4.30 0.4.35 --versions {' '.join(RELEASES)}" in printed
    assert "--xla-flags --xla_cpu_use_thunk_runtime=false" in printed
    assert "jaxmlp sweep bisect 0.4.30 0.4.35 --workload" in printed and "--processes 7 --calls 50" in printed
    assert "Bisecting 4 release(s) between 0.4.30 and 0.4.35 (0.4.31, 0.4.32, 0.4.33, 0.4.34)" in printed
    card = printed[printed.index(f"Known regressions: {folder.name}") :]
    total, _, flag, control, fails = card.splitlines()[1:6]  # the answers before the tables
    assert total.startswith("Corpus: 3 case(s) of 3 kind(s), measured on ") and "failed" not in total
    assert flag == (
        "slower, undone by an XLA flag (flag), 1 case(s): found 1 of 1; ratio in its band 1 of the 1 found (1 with a "
        "band); bisected 1 of 1; explained 1 of the 1 found that name a cause; injected slowdowns found: ×1.10 in 1 "
        "of 1, ×1.25 in 1 of 1 trials (1 of 1 cases trialled)"
    )
    assert (
        "Injected slowdowns, over the cases trialled: ×1.10 found in 3 of 3 trials over 3 case(s), 100% (95% "
        "interval 43.9%–100%); ×1.25 found in 3 of 3 trials" in card
    )
    assert "(the unslowed group measured with them, one process of each group a round)" in card
    assert "Controls: 1 of 1 shown the same\n" in card
    assert control.startswith("nothing should be found (control), 1 case(s): clean (shown the same) 1 of 1; injected")
    assert fails.startswith("a release fails on the workload (failure), 1 case(s): failed first at the expected ")
    assert (
        "Injected slowdowns at 0.4.33: ×1.10 found in 1 of 1 trials, ×1.25 found in 1 of 1 trials (7 processes"
        in printed
    )
    assert "Wrote " in printed and "environments: " in printed and "results " in printed
    doc = parse(json.loads((folder / "scorecard.json").read_text()))
    step, control, fails = doc.scores
    assert (step.found, step.direction, step.in_band, step.bisected, step.explained) == (
        True,
        "slower",
        True,
        "0.4.34",
        True,
    )
    assert step.explanation == "flag: --xla_cpu_use_thunk_runtime=false undoes it" and 1.25 < step.ratio < 1.35
    assert step.ci_low < step.ratio < step.ci_high
    assert step.injected == ((1.1, 1, 1), (1.25, 1, 1)) and step.slowdown.release == "0.4.33"
    assert (step.case.runs.processes, step.case.runs.calls, step.case.runs.slowdown_trials) == (7, 50, 1)
    assert step.case.expect.said_by == "this machine"
    assert control.clean is True and not control.flagged and control.found is None and control.verdict == "the same"
    assert fails.found is True and fails.failures[0].startswith("0.4.33: failed at its probe") and not fails.failed
    assert fails.slowdown.release == "0.4.31"  # the release before the one expected to fail
    # the source's 0.4.32, in no case's list, fails first: the bisection checks the timeline with a release it lacks
    assert (fails.bisected, fails.bisect_found) == ("0.4.32", False)
    assert "jaxmlp sweep bisect 0.4.30 0.4.33" in printed and "first release that fails: 0.4.32 (" in printed
    assert doc.settings["detector"]["penalty"] == 3.0 and doc.disk["envs"] == 5
    assert all((folder / f).is_dir() for s in doc.scores for f in s.folders)
    assert [f.split("/")[-1].split("-")[0] for f in step.folders] == ["bisect", "timeline"]
    results = load(ResultsStore(out))
    assert len(results.corpora) == 1
    (section,) = [s for s in build_sections(results) if s.anchor == ANCHOR.known_regressions]  # `jaxmlp report`'s
    assert "Corpus: 3 case(s) of 3 kind(s)" in section.shown[0].note
    kinds, cases = section.shown[0].tables
    assert list(cases.frame["case"]) == ["fixture-step", "fixture-control", "fixture-fails"]
    assert list(kinds.frame["kind"]) == ["flag", "control", "failure"]
    assert main(["summary", str(folder)]) == 0
    assert "1 known regressions" in capsys.readouterr().out  # a folder's summary names it
    assert main(["summary", str(folder / "scorecard.json")]) == 0
    assert "Corpus: 3 case(s) of 3 kind(s)" in capsys.readouterr().out
    # scored again from its files, nothing measured: the same scores, the run's machine, the re-scoring's commit
    assert main(["sweep", "corpus", str(MANIFEST), "--rescore", str(folder)]) == 0
    (again,) = folder.glob("scorecard-rescored-*.json")
    rescored = parse(json.loads(again.read_text()))
    assert [s.to_json() for s in rescored.scores] == [s.to_json() for s in doc.scores]
    assert rescored.metadata["cpu_model"] == doc.metadata["cpu_model"] and "commit" in rescored.metadata["rescored"]


def test_a_case_whose_release_fails_unexpectedly_fails_the_corpus_named(tmp_path, monkeypatch, capsys):
    fake_releases(tmp_path / "envs", monkeypatch)
    manifest = tmp_path / "corpus.toml"
    text = MANIFEST.read_text().replace('direction = "fails"\ncause = "unknown"', 'direction = "fails"')
    text = text.replace('release = "0.4.33"\ndirection = "fails"', 'release = "0.4.33"\ndirection = "fails"')
    manifest.write_text(text.replace("cases/", f"{MANIFEST.parent}/cases/"))
    # the failing workload in a control: its failure is not what the case expects
    control = manifest.read_text().replace(
        f'workload = "{MANIFEST.parent}/cases/product.py:control"',
        f'workload = "{MANIFEST.parent}/cases/product.py:fails"',
    )
    manifest.write_text(control)
    argv = ["sweep", "corpus", str(manifest), "--cases", "fixture-control", "--processes", "4"]
    assert main([*argv, "--envs", str(tmp_path / "envs"), "--out", str(tmp_path / "out")]) == 1
    captured = capsys.readouterr()
    assert "clean (shown the same) 0 of 1; no injected-slowdown trials; failed: fixture-control" in captured.out
    assert (
        captured.err.strip()
        .splitlines()[-1]
        .startswith(
            "jaxmlp sweep corpus: cases that could not be measured: fixture-control (0.4.33: failed at its probe"
        )
    )


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (('kind = "control"', 'kind = "regression"'), "kind 'regression': choose one of step"),
        (
            (
                'releases = ["0.4.30", "0.4.31", "0.4.33"]\n[case.expect]\ndirection = "none"',
                'releases = ["0.4.31", "0.4.30", "0.4.33"]\n[case.expect]\ndirection = "none"',
            ),
            "oldest first",
        ),
        (("ratio = [1.2, 1.5]", "ratio = [1.5, 1.2]"), "give the band of new over old time"),
        (("cases/product.py:step", "cases/nothing.py:step"), "does not exist"),
        (('name = "fixture-fails"', 'name = "fixture-step"'), "fixture-step given twice"),
    ],
)
def test_a_wrong_manifest_is_one_line_naming_the_case_and_field(tmp_path, edit, said):
    manifest = tmp_path / "corpus.toml"
    manifest.write_text(MANIFEST.read_text().replace(*edit))
    (tmp_path / "cases").symlink_to(MANIFEST.parent / "cases")
    with pytest.raises(JaxmlpError, match=said):
        read_manifest(manifest)


def test_a_case_not_in_the_manifest_is_refused_before_anything_runs(tmp_path, capsys):
    argv = ["sweep", "corpus", str(MANIFEST), "--cases", "nothing", "--out", str(tmp_path)]
    assert main(argv) == 2
    assert "--cases nothing: no such case" in capsys.readouterr().err and not list(tmp_path.iterdir())


@pytest.mark.xdist_group("processes")
def test_one_small_case_with_real_processes_is_scored(tmp_path, capsys, monkeypatch):
    """The control case end to end with real worker processes: three releases whose environments are this
    interpreter (so the same jax: nothing to find), two processes a release: CI's one small real case. Nothing is
    flagged, but two processes cannot show the same time (no test, no interval): the control is not clean."""
    monkeypatch.chdir(MANIFEST.parent.parent.parent.parent)  # the repository: its cells record the case's file in it
    root = tmp_path / "envs"
    made_releases(root, "0.4.30", "0.4.31", "0.4.33")
    argv = ["sweep", "corpus", str(MANIFEST), "--cases", "fixture-control", "--processes", "2", "--calls", "3"]
    argv += ["--dataset", "synthetic", "--limit", "256", "--epochs", "2"]
    assert main([*argv, "--envs", str(root), "--out", str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out
    assert "nothing should be found (control), 1 case(s): clean (shown the same) 0 of 1" in printed
    (folder,) = (tmp_path / "out").iterdir()
    (score,) = parse(json.loads((folder / "scorecard.json").read_text())).scores
    assert score.clean is False and not score.flagged and not score.failures and score.seconds > 0
    assert "a control is clean only where it shows the same time: 0.4.33 against 0.4.30: inconclusive" in score.why[0]
    assert "(2 and 2 processes: too few to test)" in score.why[0] and score.verdict == "inconclusive"
    assert "Controls: 0 of 1 shown the same (1 inconclusive)" in printed
    cells = next(folder.glob("fixture-control/timeline-*/jax-0.4.30.json")).read_text()
    assert '"workload_source": "tests/fixtures/corpus/cases/product.py:control"' in cells  # not the absolute path


def test_a_workload_outside_the_current_folder_is_recorded_by_its_absolute_path(tmp_path, monkeypatch):
    from jaxmlp.measure.sweep.settings import Measuring

    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    measuring = Measuring(workloads=("mine.py:make", f"{tmp_path / 'there.py'}:run", "batched", "pkg.mod:make"))
    assert measuring.workload_source == f"mine.py:make,{tmp_path / 'there.py'}:run,batched,pkg.mod:make"


# --- the scoring, pure: from what the commands found -------------------------------------------------------------


def _findings(levels, explained_same_hlo=None, bisected=None, instructions=False):
    """A timeline column of ``levels`` (one a release, 8 samples each, 1% noise) and its change points; an
    explanation of 0.4.33 -> 0.4.34 whose HLO is the same or not (None: no explanation), and where it is not,
    whose instructions are the same or not (``instructions``; None: not compared)."""
    from jaxmlp import changepoints
    from jaxmlp.results.schema.explain import ExplainDocument
    from jaxmlp.results.sweep.compared import TimelineColumn
    from jaxmlp.results.sweep.corpus import CaseFound

    rng = np.random.default_rng(0)
    samples = [tuple(level * np.exp(rng.normal(0, 0.01, 8))) for level in levels]
    labels = RELEASES[: len(levels)]
    column = TimelineColumn("product.step", "", labels, tuple(samples), tuple(changepoints.detect(labels, samples)))
    docs = ()
    if explained_same_hlo is not None:
        prints = {"0.4.33": "a", "0.4.34": "a" if explained_same_hlo else "b"}
        steady = {"0.4.33": (1.0,), "0.4.34": (1.3,)}
        docs = (
            ExplainDocument({}, "product.step", "0.4.33", "0.4.34", prints, steady, same_instructions=instructions),
        )
    return CaseFound((column,), explanations=docs)


def _case(**expect):
    (case,) = read_manifest(MANIFEST, ("fixture-step",))
    return replace(case, bisect=None, expect=replace(case.expect, **expect))


def test_a_program_change_explains_a_case_whose_cause_is_the_program():
    from jaxmlp.results.sweep.corpus import score

    step = [1.0, 1.0, 1.0, 1.3, 1.3]
    right = score(_case(cause="program", flag=""), _findings(step, explained_same_hlo=False))
    assert (right.found, right.explanation, right.explained, right.why) == (True, "program", True, ())
    below = score(_case(cause="program", flag=""), _findings(step, explained_same_hlo=True))
    assert below.explained is False and below.why == ("expected a program change; below HLO",)
    unknown = score(_case(cause="unknown", flag=""), _findings(step, explained_same_hlo=True))
    assert unknown.explained is None and unknown.explanation == "below HLO"  # shown, not scored
    # the HLO differs only in the order, names or annotations of the same instructions: no program change
    moved = score(_case(cause="program", flag=""), _findings(step, explained_same_hlo=False, instructions=True))
    assert moved.explained is False and moved.why == ("expected a program change; the same instructions",)
    # an older explanation, its instructions not compared and no operation's count changed: not scored
    older = score(_case(cause="program", flag=""), _findings(step, explained_same_hlo=False, instructions=None))
    assert older.explained is None and older.explanation == "program (instructions not compared)"
    assert older.why == (
        "the optimized HLO differs, but its instructions were not compared (an older explanation): not scored",
    )
    ops = replace(older.case, name="ops")  # an operation's count changed: the instructions differ
    found = _findings(step, explained_same_hlo=False, instructions=None)
    found = replace(found, explanations=(replace(found.explanations[0], operations=(("while", 0, 1),)),))
    assert (score(ops, found).explained, score(ops, found).explanation) == (True, "program")


def test_a_miss_says_what_was_flagged_instead_and_a_ratio_out_of_band_says_so():
    from jaxmlp.results.sweep.corpus import score

    missed = score(_case(cause="unknown", flag=""), _findings([1.0, 1.0, 1.3, 1.3, 1.3]))
    assert missed.found is False and missed.why[0].startswith("expected 0.4.34 slower; flagged 0.4.33 slower than")
    wide = score(_case(cause="unknown", flag="", ratio=(1.5, 2.0)), _findings([1.0, 1.0, 1.0, 1.3, 1.3]))
    assert wide.found and wide.in_band is False and "outside the band ×1.50-×2.00" in wide.why[0]
    compile_case = replace(_case(cause="unknown", flag=""), metric="compile")
    run_time = _findings([1.0, 1.0, 1.0, 1.3, 1.3])
    compiled = score(compile_case, replace(run_time, columns=(), compile_columns=run_time.columns))
    assert compiled.found and compiled.flagged[0].startswith("compile time: 0.4.34 slower than 0.4.33")
    assert score(compile_case, run_time).found is False  # a change of run time is not one of compile time


def test_a_control_with_nothing_measured_is_not_clean_and_a_flag_not_measured_explains_nothing():
    from jaxmlp import changepoints
    from jaxmlp.results.sweep.compared import TimelineColumn
    from jaxmlp.results.sweep.corpus import CaseFound, score

    control = replace(_case(), kind="control", expect=replace(_case().expect, direction="none", release=None))
    nothing = score(control, CaseFound(()))
    assert nothing.clean is False and "nothing was measured" in nothing.why[0]
    step = _findings([1.0, 1.0, 1.0, 1.3, 1.3])
    flag = "--xla_cpu_use_thunk_runtime=false"
    labels, samples = RELEASES[:3], [(1.0,) * 8] * 3  # the flag's column stops before 0.4.34: it failed there
    column = TimelineColumn("product.step", flag, labels, tuple(samples), tuple(changepoints.detect(labels, samples)))
    unmeasured = score(_case(cause="flag", flag=flag), replace(step, columns=(*step.columns, column)))
    assert unmeasured.found and unmeasured.explained is None and "not measured at 0.4.34" in unmeasured.why[-1]


def _stopped_corpus(tmp_path, monkeypatch, capsys, at):
    """`jaxmlp sweep corpus` over two cases, each case scored at once (nothing measured), a stop raised where ``at``
    says: ("case", n) as case n starts, ("disk", 0) as the environments are walked, ("summary", 0) once the
    scorecard is written. Returns its exit status, its last line and its folder."""
    from jaxmlp.errors import Interrupted
    from jaxmlp.flows import corpus
    from jaxmlp.results.sweep.corpus import case_found, score

    def case(case, number, total, args, folder, shared):
        (folder / case.name).mkdir()
        if at == ("case", number):
            raise Interrupted()
        return score(case, case_found(folder / case.name), [], 0.0)

    def stop(*args, **kwargs):
        raise Interrupted()

    monkeypatch.setattr(corpus, "_case", case)
    monkeypatch.setattr(corpus, "disk_taken", stop if at[0] == "disk" else lambda *a: {"envs": 0})
    if at[0] == "summary":
        monkeypatch.setattr(corpus, "corpus_summary", stop)
    fake_releases(tmp_path / "envs", monkeypatch)
    argv = ["sweep", "corpus", str(MANIFEST), "--cases", "fixture-control", "fixture-step"]
    code = main([*argv, "--envs", str(tmp_path / "envs"), "--out", str(tmp_path / "out")])
    line = capsys.readouterr().err.strip().splitlines()[-1]
    return code, line, tmp_path / "out"


def test_a_corpus_stopped_as_its_environments_are_walked_keeps_its_whole_scorecard(tmp_path, monkeypatch, capsys):
    """Every case ended: the scorecard is whole (not partial), written without the disk the stop cut short."""
    code, line, out = _stopped_corpus(tmp_path, monkeypatch, capsys, ("disk", 0))
    (folder,) = out.iterdir()
    card = folder / "scorecard.json"
    assert code == 130 and line == f"jaxmlp sweep corpus: stopped by SIGINT; kept 2 of 2 cases in {card}", line
    doc = parse(json.loads(card.read_text()))
    assert len(doc.scores) == 2 and "partial" not in doc.metadata and doc.disk == {}
    assert main(["summary", str(card)]) == 0 and "Corpus: 2 case(s) of 2 kind(s)" in capsys.readouterr().out


def test_a_corpus_stopped_after_its_scorecard_was_written_says_where_it_is(tmp_path, monkeypatch, capsys):
    code, line, out = _stopped_corpus(tmp_path, monkeypatch, capsys, ("summary", 0))
    (folder,) = out.iterdir()
    assert code == 130 and line == f"jaxmlp sweep corpus: stopped by SIGINT; wrote {folder / 'scorecard.json'}"
    assert len(parse(json.loads((folder / "scorecard.json").read_text())).scores) == 2


def test_a_corpus_stopped_before_any_case_ended_has_no_scorecard_and_leaves_no_empty_folder(
    tmp_path, monkeypatch, capsys
):
    code, line, out = _stopped_corpus(tmp_path, monkeypatch, capsys, ("case", 1))
    assert code == 130 and "stopped by SIGINT; no case ended, so there is no scorecard; the rest: `jaxmlp" in line
    assert not list(out.iterdir())  # the stopped case's folder was empty, and so the corpus's
    code, line, out = _stopped_corpus(tmp_path / "second", monkeypatch, capsys, ("case", 2))
    (folder,) = out.iterdir()
    assert "kept 1 of 2 cases in" in line  # the manifest's order: fixture-step, then the stopped fixture-control
    assert sorted(p.name for p in folder.iterdir()) == ["fixture-step", "scorecard.json"]


def test_a_bisection_that_met_a_failure_in_a_slowdown_case_says_so_and_explains_nothing():
    from jaxmlp.measure.bisection import RUNS, Bisection
    from jaxmlp.results.schema.bisect import BisectDocument
    from jaxmlp.results.sweep.corpus import score

    failed = "failed at its probe: the worker failed: gone"
    result = Bisection(RELEASES, "fails", None, (), "", "0.4.34", "0.4.33", None, failed, {"0.4.33": RUNS})
    findings = replace(_findings([1.0] * 5), bisection=BisectDocument({}, {}, result, "", 1.0))  # no change seen
    case = replace(_case(cause="program", flag=""), bisect=("0.4.30", "0.4.35"))
    scored = score(case, findings)
    assert scored.bisected == "0.4.34 (fails)" and scored.bisect_found is False
    assert "the bisection answered 0.4.34 (fails)" in scored.why
    assert scored.explained is None and scored.why[-1] == "the bisection answered 0.4.34 (fails)"  # not found


def test_what_was_not_found_is_not_explained_and_each_kind_counts_over_what_it_applies_to():
    from jaxmlp.results.sweep.corpus import score
    from jaxmlp.results.sweep.corpus_totals import kind_line, totals

    flat = _findings([1.0] * 5, explained_same_hlo=False)  # an explanation filed, of a change not found
    missed = score(
        _case(cause="program", flag=""), replace(flat, explanations=_findings([1.0] * 4 + [1.3], False).explanations)
    )
    assert missed.found is False and missed.explained is None  # not "explained 1 of 1"
    found = score(_case(cause="program", flag=""), _findings([1.0, 1.0, 1.0, 1.3, 1.3], explained_same_hlo=False))
    (kind,) = totals([missed, found])["kinds"].items()
    assert kind_line(*kind) == (
        "slower, undone by an XLA flag (flag), 2 case(s): found 1 of 2; ratio in its band 1 of the 1 found (2 with a "
        "band); explained 1 of the 1 found that name a cause; no injected-slowdown trials"
    )


def test_an_injected_slowdown_is_counted_found_only_where_the_timeline_detector_flags_it():
    from jaxmlp.measure.sweep.slowdown import SlowdownTrials
    from jaxmlp.results.sweep.corpus import injected_found

    rng = np.random.default_rng(1)

    def noisy(level, n=7, spread=0.01):
        return tuple(level * np.exp(rng.normal(0, spread, n)))

    clear = {"x1": noisy(1.0), "x1.25": noisy(1.25), "x1.5": noisy(1.5)}
    lost = {"x1": noisy(1.0, spread=0.6), "x1.25": noisy(1.25, spread=0.6), "x1.5": noisy(1.5, spread=0.6)}
    short = {"x1": noisy(1.0, 1), "x1.25": noisy(1.25, 1), "x1.5": noisy(1.5)}  # a group of one: not counted
    trials = SlowdownTrials("0.4.33", 7, 50, (1.25, 1.5), (clear, lost, short))
    assert injected_found(trials) == ((1.25, 1, 2), (1.5, 1, 2))
    assert SlowdownTrials.from_json(trials.to_json()) == trials


def test_an_older_scorecard_reads_with_each_controls_verdict_from_its_lines():
    from jaxmlp.results.schema.corpus import CaseScore, CorpusDocument
    from jaxmlp.results.sweep.corpus_totals import controls_line, injected_line

    (control,) = read_manifest(MANIFEST, ("fixture-control",))
    said = "a control is clean only where it shows the same time: 0.4.35 against 0.4.33: inconclusive, ×1.01 (95%"
    flagged = ("0.4.34 slower than 0.4.33 and before, ×1.2 (95% interval ×1.1–×1.3, p <0.001)",)
    scores = (
        CaseScore(control, clean=False, why=(said,)),
        CaseScore(control, clean=True),
        CaseScore(control, flagged, clean=False),
        CaseScore(control, clean=False),
    )
    doc = CorpusDocument({}, {"cases": [], "detector": {}}, scores, 1.0).to_json()
    doc["schema_version"] = 9  # written before the controls kept their verdict
    for score in doc["scores"]:
        del score["verdict"]
    old = parse(doc)
    assert [s.verdict for s in old.scores] == ["inconclusive", "the same", "slower", None]
    assert controls_line(old.scores) == "Controls: 1 of 4 shown the same (1 inconclusive, 1 slower, 1 no verdict)"
    assert injected_line(old.scores) == "Injected slowdowns: no case was trialled"


def test_a_band_must_say_where_it_comes_from_and_a_case_may_set_what_it_runs_with(tmp_path):
    manifest = tmp_path / "corpus.toml"
    (tmp_path / "cases").symlink_to(MANIFEST.parent / "cases")
    text = MANIFEST.read_text()
    manifest.write_text(text.replace('from = ["measured: x1.3, the fake workers of tests/test_corpus.py"]\n', ""))
    with pytest.raises(JaxmlpError, match="expect.from: say where its band comes from"):
        read_manifest(manifest)
    manifest.write_text(text.replace('from = ["measured:', 'from = ["a blog:'))
    with pytest.raises(JaxmlpError, match="each entry starting with https:// or measured:"):
        read_manifest(manifest)
    own = text.replace('name = "fixture-control"\n', 'name = "fixture-control"\nprocesses = 9\n')
    manifest.write_text("processes = 5\ncalls = 20\n" + own)
    step, control, _ = read_manifest(manifest)
    assert (step.runs.processes, step.runs.calls, step.runs.slowdown_trials) == (5, 20, 0)
    assert (control.runs.processes, control.runs.calls) == (9, 20)


def test_a_compile_time_case_explains_the_change_in_its_own_metric(tmp_path, monkeypatch, capsys):
    from jaxmlp.flows import corpus_steps

    fake_releases(tmp_path / "envs", monkeypatch)

    def compiles_slower(runner, pythonpath=None, timeout=None):  # compile x1.5 from 0.4.34, the calls alike
        (name,) = runner.measuring.names
        compile_seconds = 0.15 if runner.label in ("0.4.34", "0.4.35") else 0.1
        meta = {"jax": runner.label, "jaxlib": runner.label, "xla_flags": runner.xla_flags, "host": "here", "epochs": 2}
        return ProcessResult(meta, {name: WorkloadTimes.of(compile_seconds, [0.02, 0.01, 0.01])})

    monkeypatch.setattr(matrix, "run_worker", compiles_slower)
    asked: list[tuple[str, str, str]] = []
    monkeypatch.setattr(corpus_steps, "explained", lambda head, m, a, b, spec, out, mx: asked.append((head, a, b)))
    manifest = tmp_path / "corpus.toml"
    (tmp_path / "cases").symlink_to(MANIFEST.parent / "cases")
    text = MANIFEST.read_text().split("[[case]]")[1].replace('metric = "run"', 'metric = "compile"')
    manifest.write_text(
        "slowdown_trials = 0\n[[case]]"
        + text.replace('flag = "--xla_cpu_use_thunk_runtime=false"\n', "")
        .replace('cause = "flag"', 'cause = "program"')
        .replace('kind = "flag"', 'kind = "compile"')
        .replace('bisect = ["0.4.30", "0.4.35"]\n', "")
    )
    argv = ["sweep", "corpus", str(manifest), "--processes", "7", "--envs", str(tmp_path / "envs")]
    main([*argv, "--out", str(tmp_path / "out")])
    printed = capsys.readouterr().out
    assert "# each change the timeline found in compile time that its explanations" in printed
    assert asked == [("Explaining product.step's compile time: 0.4.33 -> 0.4.34", "0.4.33", "0.4.34")]
