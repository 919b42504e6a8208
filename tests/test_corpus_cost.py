"""What a corpus run costs and what it measures once (`jaxmlp sweep corpus`): the plan said before it starts, a
step an earlier case measured the same read from that case's folder, the trials' unslowed group taken from the
timeline, a bisection's answer the timeline explained not explained again; and a flag that must not undo a change.
The test corpus's fake releases and workers are tests/test_corpus.py's."""

import json
import os
from dataclasses import replace

import pytest
from test_corpus import MANIFEST, _case, _findings, fake_releases

from jaxmlp import changepoints
from jaxmlp.cli import main
from jaxmlp.errors import JaxmlpError
from jaxmlp.measure.sweep.corpus import read_manifest, shared_steps
from jaxmlp.results.schema import parse
from jaxmlp.results.sweep.compared import TimelineColumn
from jaxmlp.results.sweep.corpus import score
from jaxmlp.results.sweep.corpus_totals import corpus_table

FLAG = "--xla_cpu_use_thunk_runtime=false"


def _manifest(tmp_path, extra: str = "", edit=lambda text: text):
    """The test corpus with ``extra`` cases after its own, beside its workloads."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "cases").symlink_to(MANIFEST.parent / "cases")
    manifest = tmp_path / "corpus.toml"
    manifest.write_text(edit(MANIFEST.read_text()) + extra)
    return manifest


AGAIN = """
[[case]]
name = "fixture-step-again"
workload = "cases/product.py:step"
source = "tests/test_corpus_cost.py"
summary = "the same workload, releases and settings as fixture-step: its timeline and bisection read from there"
kind = "flag"
releases = ["0.4.30", "0.4.31", "0.4.33", "0.4.34", "0.4.35"]
bisect = ["0.4.30", "0.4.35"]
[case.expect]
release = "0.4.34"
direction = "slower"
ratio = [1.2, 1.5]
cause = "flag"
flag = "--xla_cpu_use_thunk_runtime=false"
from = ["measured: x1.3, the fake workers of tests/test_corpus.py"]
"""


def test_a_step_measured_the_same_is_read_from_the_earlier_case_and_the_plan_counts_what_runs(
    tmp_path, monkeypatch, capsys
):
    fake_releases(tmp_path / "envs", monkeypatch)
    _started_every_two_seconds(monkeypatch)
    manifest = _manifest(tmp_path / "m", AGAIN)
    cases = read_manifest(manifest)
    assert shared_steps(cases) == {"fixture-step-again": {"timeline": "fixture-step", "bisect": "fixture-step"}}
    out = tmp_path / "out"
    argv = ["sweep", "corpus", str(manifest), "--cases", "fixture-step", "fixture-step-again", "--processes", "7"]
    argv += ["--calls", "3"]  # as the fake workers time
    assert main([*argv, "--slowdown-trials", "1", "--envs", str(tmp_path / "envs"), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    # the plan, first: 5 releases x 2 columns x (7 + a probe); 4 releases between the bisection's ends: 3 probes of
    # 3 releases x (7 + 1); one change explained, 3 processes of each release; one trial of x1.10 and x1.25, 7 each
    plan = printed[printed.index("Plan (worker processes") : printed.index("Each case's runs go into")]
    assert (
        "fixture-step: 179 processes (timeline 80, bisection 72, explanations 6, injected-slowdown trials 21)" in plan
    )
    assert (
        "fixture-step-again: 27 processes (timeline read from an earlier case, bisection read from an earlier" in plan
    )
    assert "time unknown (no earlier run of it with these calls under the results folder)" in plan
    assert "In all: 206 worker processes; time unknown (estimated;" in plan
    (folder,) = out.iterdir()
    first, again = folder / "fixture-step", folder / "fixture-step-again"
    for step in ("timeline", "bisect"):
        (link,) = again.glob(f"{step}-*")
        (measured,) = first.glob(f"{step}-*")
        assert link.is_symlink() and os.readlink(link) == os.path.join("..", "fixture-step", measured.name)
        assert f"# the {step} of fixture-step, the same workload, releases and settings: read from" in printed
    doc = parse(json.loads((folder / "scorecard.json").read_text()))
    step, step_again = doc.scores
    assert (step_again.found, step_again.ratio, step_again.bisected) == (True, step.ratio, step.bisected)
    assert step_again.explained is True and step_again.folders == tuple(
        f.replace("fixture-step/", "fixture-step-again/") for f in step.folders
    )
    # the trials' unslowed group: measured with the slowed ones, interleaved, never the timeline's processes
    for s in (step, step_again):
        ((values),) = s.slowdown.values
        assert len(values["x1"]) == len(values["x1.1"]) == len(values["x1.25"]) == 7
        assert s.slowdown.unslowed_from == ""
    # scored again from the files through the link: the same scores
    assert main(["sweep", "corpus", str(manifest), "--rescore", str(folder)]) == 0
    (rescored,) = folder.glob("scorecard-rescored-*.json")
    assert [s.to_json() for s in parse(json.loads(rescored.read_text())).scores] == [s.to_json() for s in doc.scores]
    assert (
        main(["summary", str(folder)]) == 0
        and main(["report", "--results", str(out), "--out", str(tmp_path / "r")]) == 0
    )
    capsys.readouterr()
    # a second run under the same folder: its plan's times from the first's timeline, said as estimates
    assert main([*argv, "--slowdown-trials", "0", "--envs", str(tmp_path / "envs"), "--out", str(out)]) == 0
    plan = capsys.readouterr().out
    assert f"at 2.0 s a process ({folder.name}'s timeline of it)" in plan and "(estimated; environments" in plan


def _started_every_two_seconds(monkeypatch):
    """The fake workers' results each with the time it started, two seconds after the one before."""
    from datetime import datetime, timedelta

    from jaxmlp.measure.sweep import matrix

    fake, started = matrix.run_worker, [datetime(2026, 12, 7)]

    def run_worker(runner, pythonpath=None, timeout=None):
        result = fake(runner, pythonpath, timeout)
        started.append(started[-1] + timedelta(seconds=2))
        return replace(result, metadata={**result.metadata, "timestamp": started[-1].isoformat()})

    monkeypatch.setattr(matrix, "run_worker", run_worker)


def test_a_bisection_whose_answer_the_timeline_explained_does_not_explain_it_again(
    tmp_path, monkeypatch, capsys, explained
):
    from jaxmlp.flows import corpus

    monkeypatch.setattr(corpus, "explained_pairs", lambda folder: {("0.4.33", "0.4.34"): "timeline-x/explain-1"})
    fake_releases(tmp_path / "envs", monkeypatch)
    argv = ["sweep", "corpus", str(MANIFEST), "--cases", "fixture-step", "--processes", "7"]
    assert main([*argv, "--envs", str(tmp_path / "envs"), "--out", str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out
    assert "The answer 0.4.33 -> 0.4.34 is explained already, in timeline-x/explain-1: not again" in printed
    assert [(a, b) for a, b, _ in explained] == [("0.4.33", "0.4.34")]  # the timeline's only


def test_a_bisection_over_the_timeline_s_releases_reads_their_samples(tmp_path, monkeypatch, capsys):
    fake_releases(tmp_path / "envs", monkeypatch)
    manifest = _manifest(
        tmp_path / "m", edit=lambda t: t.replace('bisect = ["0.4.30", "0.4.35"]', 'bisect = ["0.4.33", "0.4.35"]')
    )
    argv = ["sweep", "corpus", str(manifest), "--cases", "fixture-step", "--processes", "7"]
    assert main([*argv, "--envs", str(tmp_path / "envs"), "--out", str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out
    assert "bisection read from the timeline (no release between its ends that the timeline lacks)" in printed
    (folder,) = (tmp_path / "out").iterdir()
    (timeline,) = (folder / "fixture-step").glob("timeline-*")
    (bisect,) = (folder / "fixture-step").glob("bisect-*")
    read = f"{timeline.name}: its samples of 0.4.33, 0.4.34, 0.4.35"
    assert f"Probe 1: 0.4.33, 0.4.34, 0.4.35 read from {read}" in printed
    assert not list(bisect.glob("probe-*"))  # nothing measured again
    doc = json.loads((bisect / "bisect.json").read_text())
    assert doc["settings"]["probes_read"] == {"1": read}
    (scored,) = parse(json.loads((folder / "scorecard.json").read_text())).scores
    assert (scored.bisected, scored.bisect_found, scored.found) == ("0.4.34", None, True)  # it checks nothing new
    assert scored.why == (
        "the bisection: 0.4.34, from the timeline's samples alone (no release between its ends that "
        "the timeline did not measure): not scored",
    )


def _with_flag_column(levels_with_flag):
    """The step's findings (x1.3 at 0.4.34) with a column of the flag at ``levels_with_flag``."""
    import numpy as np

    step = _findings([1.0, 1.0, 1.0, 1.3, 1.3])
    rng = np.random.default_rng(5)
    labels = step.columns[0].releases
    samples = [tuple(level * np.exp(rng.normal(0, 0.01, 8))) for level in levels_with_flag]
    column = TimelineColumn("product.step", FLAG, labels, tuple(samples), tuple(changepoints.detect(labels, samples)))
    return replace(step, columns=(*step.columns, column))


def test_a_change_the_flag_must_not_undo_is_found_only_where_its_column_shows_it_too():
    kept = _case(cause="unknown", flag=FLAG, flag_undoes=False)
    still = score(kept, _with_flag_column([1.0, 1.0, 1.0, 1.6, 1.6]))  # worse with the flag, as jax#26021 says
    assert (still.found, still.in_band, still.why) == (True, True, ("no explanation filed for 0.4.33 -> 0.4.34",))
    undone = score(kept, _with_flag_column([1.0] * 5))
    assert undone.found is False and undone.in_band is True
    assert undone.why == (f"with {FLAG} (which must not undo it) 0.4.34 is not slower; flagged nothing",)
    unmeasured = score(kept, _findings([1.0, 1.0, 1.0, 1.3, 1.3]))
    assert unmeasured.found is False and unmeasured.why == (
        f"no column ran with {FLAG}: the change must be found with it too",
    )
    assert corpus_table([still])["expected"][0] == f"0.4.34 slower ×1.20-×1.50, still with {FLAG}"
    undoes = score(_case(cause="flag", flag=FLAG), _with_flag_column([1.0] * 5))  # a flag case: undone is right
    assert (undoes.found, undoes.explained) == (True, True)


def test_the_manifest_says_a_flag_that_must_not_undo_it_and_the_corpus_runs_its_column(tmp_path, monkeypatch, capsys):
    def edit(text):
        return text.replace('cause = "flag"\nflag =', 'cause = "unknown"\nflag_undoes = false\nflag =', 1)

    manifest = _manifest(tmp_path / "m", edit=edit)
    step = read_manifest(manifest, ("fixture-step",))[0]
    assert (step.expect.flag_kept, step.expect.flag_undoes, step.expect.cause) == (FLAG, False, "unknown")
    fake_releases(tmp_path / "envs", monkeypatch)  # the fake's flag undoes the step: so not found
    argv = ["sweep", "corpus", str(manifest), "--cases", "fixture-step", "--processes", "7"]
    assert main([*argv, "--envs", str(tmp_path / "envs"), "--out", str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out
    assert f"--xla-flags {FLAG}" in printed
    (folder,) = (tmp_path / "out").iterdir()
    (scored,) = parse(json.loads((folder / "scorecard.json").read_text())).scores
    assert scored.found is False and scored.case.expect.flag_undoes is False
    assert scored.why[0].startswith(f"with {FLAG} (which must not undo it) 0.4.34 is not slower")
    for wrong, said in (
        ('cause = "flag"\nflag_undoes = false\n', 'cause "flag" is a flag that undoes it'),
        ('cause = "unknown"\nflag_undoes = "no"\n', "expect.flag_undoes 'no': give true or false"),
    ):
        manifest.write_text(MANIFEST.read_text().replace('cause = "flag"\n', wrong, 1))
        with pytest.raises(JaxmlpError, match=said):
            read_manifest(manifest)
    manifest.write_text(
        MANIFEST.read_text().replace(
            'cause = "flag"\nflag = "--xla_cpu_use_thunk_runtime=false"\n',
            'cause = "unknown"\nflag_undoes = false\n',
            1,
        )
    )
    with pytest.raises(JaxmlpError, match="give the XLA flag that must not undo it"):
        read_manifest(manifest)


def test_the_real_manifest_sets_the_flag_that_must_not_undo_small_qp():
    from pathlib import Path

    real = Path(__file__).parent.parent / "bench" / "corpus" / "corpus.toml"
    (qp,) = read_manifest(real, ("small-qp-0.4.33",))
    assert qp.expect.flag_kept == FLAG and qp.kind == "step"
    shared = shared_steps(read_manifest(real))
    assert shared.get("diff-square-compile-0.5.1") == {"timeline": "diff-square-0.5.1", "bisect": "diff-square-0.5.1"}
