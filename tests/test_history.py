"""The history across runs: comparable runs only, its changes found by the change-point detector the release
timeline uses (`jaxmlp.changepoints`), and the overview's answers and the report's sections built from it."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from jaxmlp.cli import main
from jaxmlp.report.display import readable
from jaxmlp.report.sections import build_sections
from jaxmlp.results import history
from jaxmlp.results.findings import findings
from jaxmlp.results.findings.model import ANCHOR
from jaxmlp.results.store.frames import load
from jaxmlp.results.store.writing import ResultsStore

FIXTURES = Path(__file__).parent / "fixtures"
RUNS = Path(__file__).resolve().parent / "fixtures" / "history"  # three real CPU runs of one machine, copied


def write_run(folder: Path, stamp: str, commit: str, slower: dict[str, float], cpu: str = "Fixture CPU") -> None:
    """The fixture's benchmarks as one run at ``stamp``, 8 samples each around its median (``slower`` scales some)."""
    doc = json.loads((FIXTURES / "bench-cpu.json").read_text())
    doc["datetime"], doc["commit_info"] = f"2026-12-0{stamp[7]}T{stamp[9:11]}:00:00+00:00", {"id": commit}
    doc["machine_info"]["jaxmlp"].update(cpu_model=cpu, commit=commit)
    rng = np.random.default_rng(int(stamp[-6:]))
    for bench in doc["benchmarks"]:
        median = bench["stats"]["median"] * slower.get(bench["name"], 1.0)
        data = list(median * (1 + 0.01 * rng.standard_normal(8)))
        q1, q3 = np.percentile(data, [25, 75])
        bench["stats"].update(
            data=data, median=float(np.median(data)), q1=float(q1), q3=float(q3), iqr=float(q3 - q1), rounds=8
        )
    (folder / f"bench-{stamp}-cpu.json").write_text(json.dumps(doc))


@pytest.fixture
def three_runs(tmp_path):
    folder = tmp_path / "reports"
    folder.mkdir()
    write_run(folder, "20261201T100000", "aaaa", {})
    write_run(folder, "20261202T100000", "bbbb", {"test_update[cpu-128-jit]": 1.5})
    write_run(folder, "20261203T100000", "cccc", {"test_update[cpu-128-jit]": 1.5})
    write_run(folder, "20261204T100000", "dddd", {"test_update[cpu-128-jit]": 3.0}, cpu="Another CPU")  # not comparable
    return folder


def test_changes_are_found_by_the_change_point_detector_over_comparable_runs_only(three_runs):
    results = load(ResultsStore(three_runs))
    points = history.points(results.runs)
    assert points["setting"].nunique() == 1 and "Another CPU" not in points["setting"].iloc[0]
    assert points["file"].nunique() == 3
    changes = history.changes(points, results.samples)
    flagged = history.flagged(changes)
    (row,) = flagged.to_dict("records")  # one step: 1.5x slower from the first run to the second, then flat
    assert (row["benchmark"], row["kind"], row["verdict"]) == ("test_update[cpu-128-jit]", "step", "slower")
    assert row["ratio"] == pytest.approx(1.5, rel=0.03) and row["ci_low"] > 1.4 and row["p_slower"] < 0.001
    assert row["from"].startswith("12-01 10:00 aaaa") and row["to"].startswith("12-02 10:00 bbbb")


def test_each_machine_is_its_own_history(three_runs):
    """The machine (CPU model, cores, backend, device) is a key of every history: its lines, changes and counts."""
    write_run(three_runs, "20261205T100000", "eeee", {"test_update[cpu-128-jit]": 3.0}, cpu="Another CPU")
    results = load(ResultsStore(three_runs))
    points = history.points(results.runs)
    assert set(points["machine"]) == {"Fixture CPU, 2 cores", "Another CPU, 2 cores"}
    changes = history.flagged(history.changes(points, results.samples))
    assert set(changes["machine"]) == {"Fixture CPU, 2 cores"}  # the other machine is flat on its own line
    by_machine = {f.machine: f for f in findings(results) if f.question == "Changes across runs"}
    assert by_machine["Fixture CPU, 2 cores"].answer.startswith("1 change(s) over 3 comparable runs")
    assert by_machine["Another CPU, 2 cores"].answer.startswith("The change-point detector finds no change over 2")


def test_the_overview_and_the_history_section(three_runs, capsys):
    results = load(ResultsStore(three_runs))
    answers = {f.question: f for f in reversed(findings(results))}  # the first of each question
    assert answers["What jit buys"].machine == "Another CPU, 2 cores"  # the newest run of the backend answers
    assert answers["Changes across runs"].answer.startswith(
        "1 change(s) over 3 comparable runs; the biggest: test_update[cpu-128-jit] ×1.5"
    )
    assert answers["What jit buys"].answer.startswith("jit makes the update step faster than eager by ×")
    assert (
        not answers["Which release got slower"].answered
        and "`jaxmlp sweep`" in answers["Which release got slower"].answer
    )
    (section,) = [s for s in build_sections(results) if s.anchor == ANCHOR.history]
    (table,) = section.tables
    assert list(readable(table.frame).columns) == [
        "benchmark",
        "machine and settings",
        "kind",
        "from",
        "to",
        "ratio",
        "95% interval",
        "p",
        "verdict",
    ]
    (plot,) = section.plots  # one plot: the biggest changes of the newest machine with a history
    assert plot.kind == "history" and "Fixture CPU, 2 cores" in plot.alt
    (bench,) = [s for s in build_sections(results) if s.anchor == "benchmarks"]
    assert len(bench.shown) == 1 and len(bench.earlier) == 3  # the newest in full, the others as labels
    assert bench.shown[0].stamp == "20261204T100000" and not any(run.tables or run.plots for run in bench.earlier)
    out = three_runs / "report"
    assert main(["report", "--results", str(three_runs), "--out", str(out)]) == 0
    page = (out / "index.html").read_text()
    assert "History on Fixture CPU, 2 cores" in page


def test_a_change_point_is_found_on_the_committed_runs(tmp_path):
    """The committed runs of 2026-12-03 on one Intel machine: the grain loader's epoch got faster at 3600a678."""
    folder = tmp_path / "reports"
    folder.mkdir()
    for path in RUNS.glob("bench-*-cpu.json"):
        shutil.copy(path, folder)
    results = load(ResultsStore(folder))
    flagged = history.flagged(history.changes(history.points(results.runs), results.samples))
    grain = flagged[flagged["benchmark"] == "test_loader[grain-4]"]
    assert list(grain["verdict"]) == ["faster"] and grain["to"].iloc[0].startswith("12-03 08:42 3600a678")
    assert grain["ci_high"].iloc[0] < 0.5


def test_each_machine_with_changes_has_its_plot_and_the_note_says_what_is_drawn(three_runs):
    """The newest run's machine has a history without a change, an older machine one change: the plot is the older
    machine's, the note counts what it shows and says the other has none."""
    write_run(three_runs, "20261205T100000", "eeee", {"test_update[cpu-128-jit]": 3.0}, cpu="Another CPU")
    results = load(ResultsStore(three_runs))
    (section,) = [s for s in build_sections(results) if s.anchor == ANCHOR.history]
    (plot,) = section.plots
    assert plot.kind == "history" and plot.alt.startswith("History on Fixture CPU, 2 cores")
    points, changes = plot.data
    assert set(points["machine"]) == {"Fixture CPU, 2 cores"} and list(changes["benchmark"]) == [
        "test_update[cpu-128-jit]"
    ]
    assert "Fixture CPU, 2 cores: the plot shows its 1 benchmark with a change." in section.note
    assert "Another CPU, 2 cores: no change, so no plot." in section.note
    assert "the 0 benchmarks" not in section.note
    (run,) = [r for r in section.shown if r.plots]
    assert run.label.startswith("Fixture CPU, 2 cores") and run.tables  # the plot beside its machine's changes
