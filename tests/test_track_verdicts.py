"""`jaxmlp track` never compares on the wrong thing: a workload whose results differ between releases says so and
gets no verdict on time (anywhere: its lines, track.json, the site, the message, the summary, the exit code), a
workload whose ``make()`` raises is named in one line while the others are measured and judged, and a workload file
that is missing or defines no ``make`` is bad usage found before any environment is made. Real processes in fake
release environments (`conftest.made_releases`: this interpreter, a variable set per release)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import made_releases
from test_wheels import wheel_folder

from jaxmlp.cli import main
from jaxmlp.errors import EXIT_FAILED, EXIT_SLOWER, gate
from jaxmlp.measure.records import FAILED, ProcessResult, WorkloadTimes
from jaxmlp.measure.workload_names import check_spec
from jaxmlp.results.schema.sweep import SweepDocument
from jaxmlp.results.schema.track import TrackDocument
from jaxmlp.results.store import layout
from jaxmlp.results.store.reading import read_document
from jaxmlp.results.sweep import tracked
from jaxmlp.stats import RESULTS_DIFFER, compare

WORKLOADS = Path(__file__).parent / "workloads"
QUICK = ["--dataset", "synthetic", "--limit", "256", "--epochs", "2", "--calls", "3", "--processes", "2"]


def test_results_differ_is_no_verdict_on_time_and_fails_the_gate_unless_something_is_slower():
    """A pair either side of which differs is "results differ" without a ratio; the gate exits 1 for it, 3 where
    another comparison is slower."""
    samples = {"0.7.0": {"w": [1.0] * 6}, "0.7.1": {"w": [2.0] * 6}}
    differs = {"0.7.1": {"w": "results differ from 0.7.0: leaf 0 sums 24 against 8"}}
    (t,) = tracked.compared(samples, [("0.7.1", "0.7.0", "previous")], ["w"], differs=differs)
    assert t.verdict == RESULTS_DIFFER and t.differs.startswith("results differ from 0.7.0")
    assert t.comparison.n_new == 0 and t.settle == 0  # no time compared, no processes to settle it
    assert "not compared on time" in tracked.verdict_line(t) and "slower" not in tracked.verdict_line(t)
    (plain,) = tracked.compared(samples, [("0.7.1", "0.7.0", "previous")], ["w"])
    assert plain.verdict == "slower"
    assert gate([RESULTS_DIFFER, "the same"]) == EXIT_FAILED
    assert gate([RESULTS_DIFFER, "slower"]) == EXIT_SLOWER
    back = type(t).from_json(json.loads(json.dumps(t.to_json())))
    assert (back.verdict, back.differs, back.comparison.n_new) == (t.verdict, t.differs, 0)
    old = {k: v for k, v in t.to_json().items() if k != "differs"}  # a file from before the field
    assert type(t).from_json(old).differs == ""
    assert compare([], []).word == "inconclusive"


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (None, "no file"),
        ("def make(:\n", "cannot be imported (SyntaxError"),
        ("def build():\n    return None\n", "defines no function make"),
    ],
)
def test_a_bad_workload_file_is_bad_usage_before_any_environment(tmp_path, capsys, content, said):
    """No environment made (the folder of environments stays empty), one line, exit 2."""
    spec = tmp_path / "mine.py"
    if content is not None:
        spec.write_text(content)
    wheels = wheel_folder(tmp_path / "wheels", ["0.7.0", "0.7.1"])
    envs = tmp_path / "envs"
    argv = ["track", "--pinned", "0.7.0", "--wheels", str(wheels), "--envs", str(envs), "--out", str(tmp_path / "o")]
    assert main([*argv, "--workload", f"{spec}:make", *QUICK]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and said in err[0] and "mine.py" in err[0], err
    assert not envs.exists() and not (tmp_path / "o").exists()


@pytest.mark.xdist_group("processes")
def test_a_raising_workload_is_named_the_others_judged_and_results_differ_is_said(tmp_path, capsys, monkeypatch):
    """0.7.1 against the pinned 0.7.0: the MLP epoch measured and judged (a verdict or inconclusive), a workload
    whose make() raises in every release named in one line, one whose values differ in 0.7.1 "results differ" in
    the lines, track.json, the site, the message and the summary; exit 1. Then a --tolerance that accepts it."""
    wheels = wheel_folder(tmp_path / "wheels", ["0.7.0", "0.7.1"])
    env = made_releases(tmp_path / "envs", "0.7.0", "0.7.1", exported={"0.7.1": {"RELEASE_SCALE": "3"}}, wheels=wheels)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    broken = tmp_path / "broken.py"
    broken.write_text("def make():\n    raise RuntimeError('broken on purpose')\n")
    out, site, message = tmp_path / "reports", tmp_path / "site", tmp_path / "message.md"
    argv = ["track", "--pinned", "0.7.0", "--wheels", str(wheels), "--out", str(out), *QUICK, "--budget", "0.05"]
    argv += ["--workload", f"{broken}:make", f"{WORKLOADS / 'release_values.py'}:make"]
    argv += ["--site", str(site), "--message", str(message)]
    code = main(argv)
    said = capsys.readouterr().out
    assert code == EXIT_FAILED, said
    (folder,) = out.glob("track-*")
    doc = read_document(folder / layout.TRACK_FILE)
    assert isinstance(doc, TrackDocument)
    verdicts = {c.workload: c.verdict for c in doc.comparisons}
    assert verdicts["release_values"] == RESULTS_DIFFER
    assert verdicts["batched"] in ("slower", "faster", "the same", "inconclusive")  # measured and judged
    assert "broken" not in verdicts  # not measured: named, not compared
    assert (
        list(doc.unmeasured) == ["workload broken"]
        and "make() raised RuntimeError" in doc.unmeasured["workload broken"]
    )
    lines = said.strip().splitlines()
    assert sum("not measured: workload broken (" in line for line in lines) == 1
    differ = [line for line in lines if "on release_values" in line]
    assert differ and all("results differ" in line and "slower" not in line for line in differ)
    assert "results differ" in message.read_text() and "release_values" in message.read_text()
    shown = " ".join(p.read_text() for p in site.rglob("*.html"))
    assert "results differ" in shown
    assert main(["summary", str(out)]) == 0
    answer = next(line for line in capsys.readouterr().out.splitlines() if "Is the newest release safe" in line)
    assert "results differ" in answer and "slower than the pinned" not in answer
    # a --tolerance wide enough accepts the difference: the times are compared (and nothing failed: no exit 1)
    accepted = ["track", "--pinned", "0.7.0", "--wheels", str(wheels), "--out", str(tmp_path / "accepted"), *QUICK]
    accepted += ["--budget", "0.05", "--workload", f"{WORKLOADS / 'release_values.py'}:make", "--tolerance", "5"]
    assert main(accepted) in (0, 3)
    (folder,) = (tmp_path / "accepted").glob("track-*")
    doc = read_document(folder / layout.TRACK_FILE)
    assert isinstance(doc, TrackDocument) and RESULTS_DIFFER not in {c.verdict for c in doc.comparisons}


@pytest.mark.parametrize(
    "content",
    [
        "import sys\nif sys.version_info >= (3, 11):\n    def make():\n        return 1\nelse:\n    make = None\n",
        "try:\n    from jax import shard_map\nexcept ImportError:\n    def make():\n        return 1\n",
        "with open(__file__) as f:\n    make = len\n",
    ],
)
def test_a_workload_defined_under_a_condition_is_found(tmp_path, content):
    """A file that defines its function as the release allows (under an ``if``, a ``try``) is a workload: only the
    worker, in the release, runs it."""
    spec = tmp_path / "mine.py"
    spec.write_text(content)
    check_spec(f"{spec}:make")


def test_a_workload_that_failed_in_a_cells_first_process_only_keeps_its_rows():
    """The others measured it: the cell's rows (what the sweep's tables and verdicts read) still hold it."""
    step = WorkloadTimes.of(0.1, [0.2, 0.1])
    first = ProcessResult({"jax": "0.7.0", FAILED: {"mine": "raised once"}}, {"step": step})
    both = {"step": step, "mine": WorkloadTimes.of(0.1, [0.4, 0.3])}
    cell = SweepDocument("0.7.0", (first, ProcessResult({"jax": "0.7.0"}, both)), "t")
    assert {r.params["workload"] for r in cell.benchmark_rows()} == {"step", "mine"}
