"""`jaxmlp track`: what is new (newer than the last release tracked, a nightly by its build date), where a series
starts, the one line of a call with nothing new, the folders of runners appending to one history, the comparisons
and the gate. Its real stream of releases from a folder of wheels (0.7.0, then 0.7.1 beside it), measured by real
processes in real environments, is the nightly job's (tests/test_nightly.py, where ``JAXMLP_TEST_WHEELS`` is given)."""

from __future__ import annotations

import json
import math
import os
import shutil
import time
import types
from dataclasses import replace
from pathlib import Path

import pytest
from test_wheels import wheel_folder

from jaxmlp.cli import main
from jaxmlp.errors import JaxmlpError
from jaxmlp.measure.sweep import track as flow
from jaxmlp.results.schema.track import TrackDocument
from jaxmlp.results.store import layout
from jaxmlp.results.store.reading import read_document
from jaxmlp.results.sweep import settling, tracked
from jaxmlp.stats import compare

WHEELS = "JAXMLP_TEST_WHEELS"
"""A folder holding the jax and jaxlib wheels of 0.7.0 and 0.7.1 for this Python and what they need (`pip download
jax==0.7.0 jaxlib==0.7.0 jax==0.7.1 jaxlib==0.7.1 -d DIR`): the real stream's test runs from it, offline."""


# --- what a call measures (pure) ----------------------------------------------------------------------------------


def test_a_first_call_starts_the_series_at_the_pinned_release_and_measures_what_is_newer():
    step = flow.step(["0.6.2", "0.7.0", "0.7.1", "0.7.2"], None, "0.7.0")
    assert (step.last, step.new, step.pinned, step.start) == ("0.7.0", ("0.7.1", "0.7.2"), "0.7.0", "--pinned")
    assert step.cells == ("0.7.0", "0.7.1", "0.7.2")
    assert step.pairs == (("0.7.1", "0.7.0", "previous"), ("0.7.2", "0.7.1", "previous"), ("0.7.2", "0.7.0", "pinned"))


def test_without_pinned_a_series_starts_at_the_newest_and_measures_nothing():
    step = flow.step(["0.7.0", "0.7.1"], None, None)
    assert (step.last, step.new, step.start, step.cells, step.pairs) == ("0.7.1", (), "the newest release", (), ())
    line = flow.said(step, "the package index", "lab-1 (batched)")
    assert line.startswith("Started the series of lab-1 (batched) at jax 0.7.1 (the newest release)")


def test_only_the_releases_newer_than_the_last_tracked_are_new_a_nightly_by_build_date():
    known = ["0.7.0", "0.7.1", "0.7.2.dev20250801", "0.7.2.dev20250805", "0.7.2"]
    step = flow.step(known, "0.7.2.dev20250801", "0.7.0")
    assert step.new == ("0.7.2.dev20250805", "0.7.2") and step.last == "0.7.2.dev20250801"
    assert ("0.7.2.dev20250805", "0.7.0", "pinned") in step.pairs
    nothing = flow.step(known, "0.7.2", "0.6.0")  # nothing new: the pinned release is not needed
    assert nothing.new == () and nothing.cells == () and not nothing.start
    assert flow.step(known, "0.7.1", None, "0.7.0").pinned == "0.7.0"  # without --pinned: the series' start
    line = flow.said(nothing, "the wheels in w", "m (batched)")
    assert (
        line
        == "Nothing new to track: the wheels in w holds nothing newer than jax 0.7.2, the last tracked for m (batched)"
    )


def test_a_pinned_release_the_source_lacks_is_one_line():
    with pytest.raises(JaxmlpError, match="--pinned 0.6.0 is not among the releases"):
        flow.step(["0.7.0"], None, "0.6.0")
    with pytest.raises(JaxmlpError, match="no release to track"):
        flow.step([], None, None)
    with pytest.raises(JaxmlpError, match="--budget must be a positive"):
        flow.Track(budget=0)


def test_the_pinned_release_as_the_previous_one_is_compared_once_and_shown_under_both():
    step = flow.step(["0.7.0", "0.7.1"], "0.7.0", "0.7.0")
    assert step.pairs == (("0.7.1", "0.7.0", "previous"),)


# --- the history, the folders and the comparisons -----------------------------------------------------------------


def _document(machine: str, workloads, tracked_: tuple[str, ...], comparisons=(), pinned="0.7.0") -> TrackDocument:
    return TrackDocument(
        {"timestamp": "2026-12-06T23:00:00+00:00"},
        {"machine": machine, "workloads": list(workloads)},
        {"pythons": {"0.7.1": "3.11.7"}},
        "",
        "0.7.0",
        pinned,
        ("0.7.0", "0.7.1"),
        tracked_,
        tuple(comparisons),
        {},
        1.0,
    )


def _write(folder: Path, name: str, doc: TrackDocument) -> Path:
    (folder / name).mkdir(parents=True)
    path = folder / name / layout.TRACK_FILE
    path.write_text(json.dumps(doc.to_json()))
    return path


def test_the_last_release_tracked_is_per_machine_and_workload_set(tmp_path):
    _write(tmp_path, "track-20261206T220000-lab-1-10", _document("lab-1", ["batched", "mine"], ("0.7.0", "0.7.1")))
    _write(tmp_path, "track-20261206T220000-lab-2-11", _document("lab-2", ["batched"], ("0.7.2",)))
    (tmp_path / "track-20261206T230000-lab-1-12").mkdir()
    (tmp_path / "track-20261206T230000-lab-1-12" / layout.TRACK_FILE).write_text("{not json")
    documents, skipped = tracked.history(tmp_path)
    assert len(documents) == 2 and len(skipped) == 1 and "not readable as JSON" in skipped[0].why
    docs = [d for _, d in documents]
    assert tracked.last_tracked(docs, "lab-1", ["mine", "batched"]) == "0.7.1"
    assert tracked.last_tracked(docs, "lab-1", ["batched"]) is None
    assert tracked.last_tracked(docs, "lab-2", ["batched"]) == "0.7.2"
    assert tracked.series_start(docs, "lab-1", ["batched", "mine"]) is None  # its start is not among these files


def test_runners_appending_to_one_history_never_take_one_another_s_folder():
    fields = {"machine_cpu": "AMD EPYC 7B13", "machine_cores": 2, "machine_name": None}
    names = {tracked.folder_name(fields, pid, "2026-12-06T23:00:00") for pid in (10, 11)}
    assert names == {"track-20261206T230000-amd-epyc-7b13-2c-10", "track-20261206T230000-amd-epyc-7b13-2c-11"}
    named = tracked.folder_name({**fields, "machine_name": "CI runner #3"}, 7, "2026-12-06T23:00:00")
    assert named == "track-20261206T230000-ci-runner-3-7"


def test_each_comparison_says_one_of_the_four_words_the_last_lines_the_slower():
    fast, slow = [1.0, 1.01, 0.99, 1.0, 1.02, 0.98], [2.0, 2.02, 1.98, 2.0, 2.01, 1.99]
    samples = {"0.7.0": {"w": fast}, "0.7.1": {"w": slow}, "0.7.2": {"w": fast}}
    pairs = [("0.7.1", "0.7.0", "previous"), ("0.7.2", "0.7.1", "previous"), ("0.7.2", "0.7.0", "pinned")]
    found = tracked.compared(samples, pairs, ["w"])
    assert [c.verdict for c in found] == ["slower", "faster", "the same"]
    lines = tracked.closing_lines(found, "0.7.0")
    assert lines[-1].startswith("jax 0.7.1 is slower than 0.7.0 (the previous and pinned release) on w: x2")
    assert lines[0].startswith("jax 0.7.2 is the same as 0.7.0 (the pinned release) on w: x1")
    few = tracked.compared({"a": {"w": [1.0, 1.1]}, "b": {"w": [1.0, 1.2]}}, [("b", "a", "previous")], ["w"])
    assert few[0].verdict == "inconclusive" and settling.more_processes(few[0].comparison) == 3


def test_the_tidy_frame_holds_every_comparison_the_pinned_one_under_both(tmp_path):
    comparison = compare([1.0, 1.01, 0.99, 1.0, 1.02], [2.0, 2.02, 1.98, 2.0, 2.01])
    slower = tracked.Tracked("w", "0.7.1", "0.7.0", "previous", comparison, comparison.word)
    _write(tmp_path, "track-20261206T230000-m-1", _document("m", ["w"], ("0.7.1",), [slower]))
    frame = tracked.tracked_frame(tmp_path)
    assert list(frame.columns) == list(tracked.FRAME_COLUMNS)
    assert list(frame["against"]) == ["previous", "pinned"] and set(frame["verdict"]) == {"slower"}
    row = frame.iloc[0]
    assert (row["python"], row["folder"], row["baseline"]) == ("3.11.7", "track-20261206T230000-m-1", "0.7.0")
    assert math.isclose(row["median_s"], 2.0) and math.isclose(row["baseline_median_s"], 1.0)
    assert read_document(tmp_path / "track-20261206T230000-m-1" / layout.TRACK_FILE) == _document(
        "m", ["w"], ("0.7.1",), [slower]
    )


def test_the_threshold_is_the_band_of_the_four_words_in_the_lines_the_file_and_the_sentences(tmp_path):
    """``--threshold``: a 10% change is slower within ±5% and the same within ±20%; the call's band is recorded in
    its ``track.json`` and every sentence drawn from it (site, message, summary) says that band."""
    from jaxmlp.results.sweep.track_answers import bands, sentence

    base = [1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.0, 1.01]
    samples = {"0.7.0": {"w": base}, "0.7.1": {"w": [1.1 * x for x in base]}}
    pairs = [("0.7.1", "0.7.0", "previous")]
    assert tracked.compared(samples, pairs, ["w"])[0].verdict == "slower"
    (same,) = tracked.compared(samples, pairs, ["w"], threshold=0.2)
    assert same.verdict == "the same"
    assert tracked.closing_lines([same], "0.7.0", 0.2)[0].startswith("jax 0.7.1 is the same as 0.7.0")
    doc = _document("m", ["w"], ("0.7.1",), [same])
    _write(tmp_path, "track-20261206T230000-m-1", replace(doc, settings={**doc.settings, "threshold": 0.2}))
    frame = tracked.tracked_frame(tmp_path)
    assert set(frame["threshold"]) == {0.2} and bands(frame) == "±20%"
    assert "is the same as 0.7.0 (tracked before it) within ±20%: ×1.1" in sentence(frame.iloc[0].to_dict())
    with pytest.raises(JaxmlpError, match="--threshold must be a positive finite number"):
        flow.Track(threshold=-0.1)


def test_a_dry_run_lists_each_release_its_python_and_environment_and_an_estimate_and_measures_nothing(tmp_path, capsys):
    """``--dry-run``: the releases the call would measure side by side, the Python each environment is made with and
    whether it is made already (one is, here: its marker, with the seconds its install took, the estimate's source),
    the minutes expected labelled an estimate; no environment made, no folder written (not even ``--out``), exit 0."""
    from jaxmlp.measure.environments import envs

    wheels = wheel_folder(tmp_path / "wheels", ["0.7.0", "0.7.1"])
    made = envs.env_path("0.7.0", tmp_path / "e", envs.Source(wheels))
    made.mkdir(parents=True)
    (made / envs.COMPLETE).write_text("600")
    out = tmp_path / "reports"
    argv = ["track", "--wheels", str(wheels), "--pinned", "0.7.0", "--out", str(out), "--envs", str(tmp_path / "e")]
    assert main([*argv, "--dry-run", "--budget", "5"]) == 0
    said = capsys.readouterr().out.strip().splitlines()
    assert said[0].startswith("Started the series of ") and "measuring 0.7.0, 0.7.1 side by side" in said[0]
    assert said[1] == "Dry run: nothing is measured or written."
    assert said[2].startswith("  jax 0.7.0: Python ") and "its environment made (" in said[2]
    assert said[3].startswith("  jax 0.7.1: Python ") and "its environment to make (" in said[3]
    assert said[4].startswith("  workloads: batched; 1 probe and ")
    assert said[5].startswith("Expected: about 10.0 min (an estimate, not a measurement: --budget 5 min holds")
    assert "1 environment to make, about 10.0 min as those made here took" in said[5]
    assert said[5].endswith("the first rounds not estimated: no earlier call of this series)")
    assert not out.exists() and sorted(p.name for p in (tmp_path / "e").iterdir()) == [made.name]
    out.write_text("")  # --out a file: still one line, bad usage
    assert main([*argv, "--dry-run"]) == 2 and "is a file, not a folder" in capsys.readouterr().err


# --- calls that make no environment (in process) ------------------------------------------------------------------


def test_a_first_call_starts_the_series_then_nothing_new_is_one_line_in_seconds(tmp_path, capsys):
    """The first call's message says the series started; a call with nothing new leaves the last message as it was
    (a nightly job posts nothing again) and says so."""
    wheels = wheel_folder(tmp_path / "wheels", ["0.7.0"])
    out, message = tmp_path / "reports", tmp_path / "message.md"
    argv = ["track", "--wheels", str(wheels), "--pinned", "0.7.0", "--out", str(out), "--envs", str(tmp_path / "e")]
    assert main([*argv, "--message", str(message)]) == 0
    said = capsys.readouterr().out.strip().splitlines()
    assert said[0].startswith("Started the series of ") and "at jax 0.7.0 (--pinned)" in said[0]
    assert said[1:] == [f"Wrote what changed into {message}"]
    first = message.read_text()
    assert first.startswith("jaxmlp track: Started the series of ") and first.count("\n") == 1
    (folder,) = out.glob("track-*")
    assert folder.name.endswith(f"-{os.getpid()}") and [p.name for p in folder.iterdir()] == [layout.TRACK_FILE]
    start = time.monotonic()
    assert main([*argv, "--message", str(message)]) == 0
    said = capsys.readouterr().out.strip().splitlines()
    assert said[0].startswith("Nothing new to track: the wheels in ") and "than jax 0.7.0" in said[0]
    assert said[1] == f"Nothing new: {message} is left as the last call wrote it"
    assert time.monotonic() - start < 30 and len(list(out.glob("track-*"))) == 1
    assert message.read_text() == first
    assert not (tmp_path / "e").exists()  # no environment made
    assert main([*argv, "--site-url", "example.org/site"]) == 2
    assert "--site-url example.org/site: give the address the site is published at" in capsys.readouterr().err


def test_outputs_are_checked_before_anything_is_measured(tmp_path, capsys):
    wheels = wheel_folder(tmp_path / "wheels", ["0.7.0", "0.7.1"])
    argv = ["track", "--wheels", str(wheels), "--out", str(tmp_path / "reports"), "--envs", str(tmp_path / "e")]
    assert main([*argv, "--message", str(tmp_path / "no" / "message.md")]) == 2
    assert "--message " in capsys.readouterr().err and not (tmp_path / "e").exists()
    (tmp_path / "site").write_text("")
    assert main([*argv, "--site", str(tmp_path / "site")]) == 2
    assert "is a file: give the folder the site goes into" in capsys.readouterr().err


def test_a_history_cloned_elsewhere_goes_on_from_its_files_alone(tmp_path, capsys):
    """A results folder that travelled through git: its files only, new times, a damaged index beside them."""
    wheels = wheel_folder(tmp_path / "wheels", ["0.7.0"])
    argv = ["track", "--wheels", str(wheels)]
    assert main([*argv, "--out", str(tmp_path / "reports")]) == 0
    clone = tmp_path / "clone"
    shutil.copytree(tmp_path / "reports", clone, copy_function=shutil.copyfile)
    (clone / ".jaxmlp-index.sqlite").write_bytes(b"not a database")
    capsys.readouterr()
    assert main([*argv, "--out", str(clone)]) == 0
    assert capsys.readouterr().out.startswith("Nothing new to track")


def _explained_within_the_budget(folder: Path, doc: TrackDocument) -> None:
    """A change of a real call's folder explained as `jaxmlp track` explains one (the sweep's `explain_change`, with
    the folder's own settings; faked in the tests, so it fails in one line): without the budget, not explained and
    why; within it, explained or the explanation's one-line failure. A comparison that is not a change is left."""
    from dataclasses import replace

    from jaxmlp.flows import track_measure
    from jaxmlp.measure.sweep.settings import Matrix
    from jaxmlp.results.sweep.files import RunLog

    plan, _ = RunLog(folder).read()
    slower = replace(doc.comparisons[0], verdict="slower")
    same = replace(doc.comparisons[0], verdict="the same")
    matrix = Matrix(processes=3)
    spent = track_measure.explain([slower, same], matrix, folder, plan.probed, time.monotonic(), print)
    assert spent[0].explanation == "" and spent[0].unexplained.startswith("not explained: the budget is spent (about ")
    assert spent[1] == same
    tried = track_measure.explain([slower], matrix, folder, plan.probed, time.monotonic() + 3600, print)
    assert tried[0].unexplained == "could not explain it: explain faked in tests"  # tests/conftest.py's stand-in
    assert settling.explain_cost([slower, slower], plan.probed) > 0  # one explanation a change, its cost known


# --- a real stream of releases (the nightly job's own nights: tests/test_nightly.py; here what a call files, its
# explanation within the budget, the summary's answer and the report's section) -----------------------------------


def _first(given: Path, into: Path) -> Path:
    """A folder holding 0.7.0's jax and jaxlib wheels (links into ``given``): the stream's first night."""
    into.mkdir(parents=True, exist_ok=True)
    for wheel in given.glob("*-0.7.0-*.whl"):
        (into / wheel.name).symlink_to(wheel.resolve())
    return into


@pytest.mark.xdist_group("processes")
def test_a_stream_of_releases_is_tracked_each_new_one_once(tmp_path, capsys):
    """The first night's folder holds 0.7.0 only: the series starts there, no environment made. The next night's is
    the given folder (0.7.1 beside 0.7.0; its environments are kept between runs, the folder being the same): each
    newer release measured side by side with 0.7.0, two processes each. The night after: nothing new."""
    given = os.environ.get(WHEELS)
    if not given or not Path(given).is_dir():
        pytest.skip(f"set {WHEELS} to a folder of jax and jaxlib 0.7.0 and 0.7.1 wheels (pip download) to run it")
    workload = Path(__file__).parent / "workloads" / "while_loop.py"
    out = tmp_path / "reports"
    argv = ["track", "--pinned", "0.7.0", "--workload", f"{workload}:make", "--out", str(out), "--processes", "2"]
    argv += ["--dataset", "synthetic", "--limit", "512", "--epochs", "2", "--calls", "3", "--budget", "0.1"]
    assert main([*argv, "--wheels", str(_first(Path(given), tmp_path / "first"))]) == 0
    assert "at jax 0.7.0 (--pinned)" in capsys.readouterr().out
    code = main([*argv, "--wheels", given])
    said = capsys.readouterr().out
    assert code in (0, 3), said
    assert "New in the wheels in " in said and "jax 0.7.1" in said and "measuring 0.7.0, 0.7.1" in said
    (_, second) = sorted(out.glob("track-*"))
    doc = read_document(second / layout.TRACK_FILE)
    assert isinstance(doc, TrackDocument) and doc.tracked[0] == "0.7.1" and doc.measured[:2] == ("0.7.0", "0.7.1")
    assert {c.verdict for c in doc.comparisons} <= {"slower", "faster", "the same", "inconclusive"}
    assert {"jax-0.7.0.json", "jax-0.7.1.json"} <= {p.name for p in second.glob("jax-*.json")}
    assert said.strip().splitlines()[-1].startswith("jax 0.7.")  # the last lines: the verdicts
    _explained_within_the_budget(second, doc)
    capsys.readouterr()
    assert main([*argv, "--wheels", given]) == 0
    assert capsys.readouterr().out.startswith("Nothing new to track")
    # the results folder answers "is the newest release safe to take?" in the summary and the report
    assert main(["summary", str(out)]) == 0
    answer = next(line for line in capsys.readouterr().out.splitlines() if "Is the newest release safe to take" in line)
    assert any(f": {w}: jax 0.7." in answer for w in ("No", "Yes", "Not shown yet")), answer
    assert "against 0.7.0 (pinned)" in answer or "than 0.7.0 (pinned)" in answer or "as 0.7.0 (pinned)" in answer
    assert main(["report", "--results", str(out), "--out", str(tmp_path / "report")]) == 0
    assert "Tracked releases: is the newest safe to take?" in (tmp_path / "report" / "index.html").read_text()


@pytest.mark.xdist_group("processes")
def test_a_workload_that_raises_is_named_and_the_mlp_epoch_still_judged(tmp_path, capsys):
    """A workload whose ``make()`` raises in every release, beside the MLP epoch, from real wheels: it is named as
    not measured (something could not be measured, exit 1, not 2, bad usage), while the epoch is measured and
    compared, and the call's ``track.json`` filed."""
    given = os.environ.get(WHEELS)
    if not given or not Path(given).is_dir():
        pytest.skip(f"set {WHEELS} to a folder of jax and jaxlib 0.7.0 and 0.7.1 wheels (pip download) to run it")
    broken = tmp_path / "broken.py"
    broken.write_text("def make():\n    raise RuntimeError('broken on purpose')\n")
    out = tmp_path / "reports"
    argv = ["track", "--pinned", "0.7.0", "--workload", f"{broken}:make", "--out", str(out), "--processes", "2"]
    argv += ["--dataset", "synthetic", "--limit", "512", "--epochs", "2", "--budget", "0.1"]
    assert main([*argv, "--wheels", str(_first(Path(given), tmp_path / "first"))]) == 0
    capsys.readouterr()
    assert main([*argv, "--wheels", given]) == 1
    printed = capsys.readouterr().out
    assert "not measured: workload broken (" in printed and "broken on purpose" in printed, printed[-1500:]
    assert "on batched: " in printed  # the epoch compared all the same
    first, second = sorted(f for f in out.glob("track-*") if (f / "track.json").is_file())
    assert (
        '"verdict"' in (second / "track.json").read_text()
        and "broken on purpose" in (second / "track.json").read_text()
    )


def test_a_call_going_on_from_a_stopped_one_settles_from_every_round_its_folder_holds(tmp_path):
    """A stopped call that had added settling rounds past the processes it planned (3 planned, 8 held): the call
    going on from its folder settles from every sample the folder holds and counts them, so that its first settling
    round is planned past those 8, never over rounds it has (here the budget is spent: its line names the 8)."""
    import sys

    from jaxmlp.flows import track_measure
    from jaxmlp.measure.records import ProcessResult, WorkloadTimes
    from jaxmlp.measure.sweep.matrix import Outcome, Probed, Runner
    from jaxmlp.measure.sweep.settings import Matrix, Measuring
    from jaxmlp.results.sweep.files import Plan, RunLog

    cells = [Runner(v, sys.executable, Measuring(("batched",))) for v in ("0.7.0", "0.7.1")]
    probed = Probed(
        {r.name: r for r in cells}, {r.name: Outcome("ok") for r in cells}, {r.name: 1.0 for r in cells}, {}
    )
    log = RunLog(tmp_path)
    log.start(Plan(tuple(cells), probed, {}, Matrix(processes=3), 60.0))
    seconds = (1.0, 1.4, 0.8, 1.3, 0.9, 1.2, 1.1, 0.7)
    for round_, (a, b) in enumerate(zip(seconds, reversed(seconds))):
        for r, s in zip(cells, (a, b)):
            log.record(r.name, round_, ProcessResult({"jax": r.label}, {"batched": WorkloadTimes.of(0.1, [s, s])}))
    said: list[str] = []
    settle = settling.Settle((("0.7.1", "0.7.0", "previous"),), ("batched",), budget=0.001, threshold=0.05)
    measured = track_measure.settled(log, Matrix(processes=3), settle, time.monotonic(), said.append)
    assert {cell: len(done) for cell, done in measured.processes.items()} == {"0.7.0": 8, "0.7.1": 8}
    assert len(said) == 1 and "still inconclusive after 8 processes a release: the budget is spent" in said[0]
    assert settling.rounds_held({("0.7.0", 0): None, ("0.7.1", 7): None}, 3) == 8
    assert settling.rounds_held({("0.7.0", 0): None}, 3) == 3


def test_settling_rounds_are_planned_at_the_slowest_process_so_far_and_stay_within_the_budget(tmp_path, monkeypatch):
    """Probes of 1 s, then processes of 3 s (the first rounds, timed, and every settling round): each settling call
    is planned at 3 s a process, not at the probes' 1 s, so the rounds end within the half-minute budget (planned at
    the probes, they ran to 36 s)."""
    import sys

    from jaxmlp.flows import track_measure
    from jaxmlp.measure.records import ProcessResult, WorkloadTimes
    from jaxmlp.measure.sweep.budget import Stopwatch
    from jaxmlp.measure.sweep.matrix import Outcome, Probed, Runner
    from jaxmlp.measure.sweep.settings import Matrix, Measuring
    from jaxmlp.results.sweep.files import Plan, RunLog

    clock = types.SimpleNamespace(now=0.0)
    clock.monotonic = lambda: clock.now
    cells = [Runner(v, sys.executable, Measuring(("batched",))) for v in ("0.7.0", "0.7.1")]
    probed = Probed(
        {r.name: r for r in cells}, {r.name: Outcome("ok") for r in cells}, {r.name: 1.0 for r in cells}, {}
    )
    log = RunLog(tmp_path)
    log.start(Plan(tuple(cells), probed, {}, Matrix(processes=3), 60.0))

    def rounds(probed, differs, matrix, limit, path, say, progress, record, done=None):  # 3 s a process
        for round_ in range(matrix.processes):
            for name in probed.runners:
                if (name, round_) not in (done or {}):
                    clock.now += 3.0
                    s = (1.0, 1.4)[(round_ + len(name)) % 2]  # wide: inconclusive however many
                    record(name, round_, ProcessResult({"jax": name}, {"batched": WorkloadTimes.of(0.1, [s, s])}))

    first = Stopwatch(clock.monotonic)
    rounds(probed, {}, Matrix(processes=3), 60.0, None, None, None, first.recording(log.record))
    monkeypatch.setattr(track_measure, "rounds", rounds)
    monkeypatch.setattr(track_measure, "time", clock)
    said: list[str] = []
    settle = settling.Settle((("0.7.1", "0.7.0", "previous"),), ("batched",), budget=0.5, threshold=0.05)
    measured = track_measure.settled(log, Matrix(processes=3), settle, 0.0, said.append, first)
    assert clock.now <= 30 and len(measured.processes["0.7.0"]) > 3, said
    assert "the budget is spent" in said[-1]
