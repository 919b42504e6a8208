"""A results folder's index (`jaxmlp.results.store.index`): a folder read again parses only what changed, two commands
may update it at once, a damaged index is set aside in one line and rebuilt, a deleted one rebuilt, a folder that cannot
be written still read; the runs it summarises give the history the files give."""

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from jaxmlp.cli import main
from jaxmlp.report import summaries
from jaxmlp.results import history
from jaxmlp.results.findings import sweeps as sweep_findings
from jaxmlp.results.findings.model import ANCHOR
from jaxmlp.results.store import index, reading
from jaxmlp.results.store.frames import Results, load, results, sweep_rows
from jaxmlp.results.store.memo import IndexMemo
from jaxmlp.results.store.writing import ResultsStore
from jaxmlp.results.sweep import compared
from jaxmlp.results.sweep.views import sweep_steps, sweeps

ROOT = Path(__file__).parent.parent
SCRIPT = ROOT / "bench" / "make_scale_folder.py"
SOURCE = Path(__file__).parent / "fixtures" / "scale"


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A generated folder of 8 runs, a sweep and a timeline, and two corrupt files, never indexed."""
    out = tmp_path_factory.mktemp("index") / "results"
    args = ["--runs", "8", "--sweeps", "1", "--timelines", "1", "--corrupt", "2", "--every", "1"]
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(SOURCE), str(out), *args], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture
def folder(made, tmp_path, monkeypatch):
    """A fresh copy of the generated folder, the user's cache folder under tmp_path."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    copy = tmp_path / "results"
    subprocess.run(["cp", "-a", str(made), str(copy)], check=True)
    return copy


def _parsed(monkeypatch) -> list[Path]:
    """The files `reading.read_document` parses from now on."""
    seen: list[Path] = []
    real = reading.read_document

    def counting(path):
        seen.append(Path(path))
        return real(path)

    monkeypatch.setattr(reading, "read_document", counting)
    return seen


def _same(a: reading.Scan, b: reading.Scan) -> None:
    assert [f.path for f in a.documents] == [f.path for f in b.documents]
    assert [(s.path, s.why) for s in a.skipped] == [(s.path, s.why) for s in b.skipped]
    assert [s.path for s in a.summarised] == [s.path for s in b.summarised]


def test_a_folder_read_again_parses_only_what_changed_and_drops_what_was_removed(folder, monkeypatch):
    lines: list[str] = []
    first = index.scan(folder, "jaxmlp summary", lines.append)
    assert (folder / index.INDEX_NAME).is_file() and not lines
    assert len(first.skipped) == 2  # each damaged file skipped with why, as without an index
    parsed = _parsed(monkeypatch)
    again = index.scan(folder, "jaxmlp summary", lines.append)
    _same(first, again)
    read_in_full = {f.path for f in again.documents}
    assert set(parsed) == read_in_full  # the damaged files remembered, not parsed again; the rest from the files
    runs = sorted(folder.glob("bench-2026*.json"))
    changed, removed = runs[-1], runs[-2]
    doc = json.loads(changed.read_text())
    doc["benchmarks"] = doc["benchmarks"][:3]
    changed.write_text(json.dumps(doc))
    removed.unlink()
    parsed.clear()
    later = index.scan(folder, "jaxmlp summary", lines.append)
    assert changed in parsed and removed not in {f.path for f in later.documents}
    with sqlite3.connect(folder / index.INDEX_NAME) as db:
        paths = {p for (p,) in db.execute("SELECT path FROM files")}
        (points,) = db.execute("SELECT points FROM files WHERE path = ?", (changed.name,)).fetchone()
    assert removed.name not in paths and changed.name in paths
    assert json.loads(points)["n"] == 3  # the changed file's rows, as it holds them now
    assert not lines


def _plain(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.astype(object).where(frame.notna(), None).reset_index(drop=True)


def test_the_older_runs_summarised_give_the_history_the_files_give(folder):
    every = load(ResultsStore(folder))
    indexed = results(index.scan(folder, "jaxmlp report", keep=3))
    assert len(indexed.older) and indexed.older["file"].nunique() < every.runs["file"].nunique()
    want = history.points(every.runs)
    got = history.found(indexed.runs, indexed.samples, indexed.older)
    pd.testing.assert_frame_equal(_plain(want), _plain(got.every))
    assert all(pd.api.types.is_float_dtype(got.every[c]) for c in ("median", "q1", "q3"))  # numbers, to be drawn
    shown, older = history.recent(want, keep=3)
    assert set(shown["file"]) <= set(indexed.runs["file"])  # the runs drawn are read in full, samples and all
    assert len(older) and _plain(older).equals(_plain(history.recent(got.every, keep=3)[1]))


def test_a_damaged_index_is_set_aside_in_one_line_and_rebuilt(folder):
    clean = index.scan(folder, "jaxmlp summary", lambda line: None)
    (folder / index.INDEX_NAME).write_bytes(b"not a database, garbage " * 100)
    lines: list[str] = []
    rebuilt = index.scan(folder, "jaxmlp summary", lines.append)
    _same(clean, rebuilt)
    (aside,) = folder.glob(f"{index.INDEX_NAME}.damaged-*")
    assert lines == [
        f"jaxmlp summary: warning: the results index {folder / index.INDEX_NAME} was damaged (file is not a "
        f"database); moved to {aside.name} and rebuilt"
    ]
    assert aside.read_bytes().startswith(b"not a database")
    lines.clear()
    (folder / index.INDEX_NAME).unlink()  # deleted: made again, quietly
    _same(clean, index.scan(folder, "jaxmlp summary", lines.append))
    assert (folder / index.INDEX_NAME).is_file() and not lines


def test_a_damaged_index_through_the_command_is_one_line_and_the_answer_is_the_same(folder, capsys):
    assert main(["summary", str(folder)]) == 0
    before = capsys.readouterr()
    (folder / index.INDEX_NAME).write_bytes(os.urandom(8192))
    assert main(["summary", str(folder)]) == 0
    after = capsys.readouterr()
    assert after.out == before.out
    extra = [line for line in after.err.splitlines() if line not in before.err.splitlines()]
    assert len(extra) == 1 and "the results index" in extra[0] and "moved to" in extra[0], after.err
    assert "Traceback" not in after.err


def test_a_folder_that_cannot_be_written_is_read_with_its_index_in_the_user_s_cache(folder, tmp_path, monkeypatch):
    clean = index.scan(folder, "jaxmlp summary", lambda line: None)
    (folder / index.INDEX_NAME).unlink()
    if os.geteuid() == 0:  # root writes anywhere: the folder said unwritable instead
        monkeypatch.setattr(index, "_writable", lambda folder: False)
    os.chmod(folder, 0o555)
    try:
        lines: list[str] = []
        _same(clean, index.scan(folder, "jaxmlp summary", lines.append))
        assert not lines and not (folder / index.INDEX_NAME).exists()
        assert index.cache_path(folder).is_file()
        monkeypatch.setenv("XDG_CACHE_HOME", "/proc/no-cache-here")  # no cache folder either: in memory
        _same(clean, index.scan(folder, "jaxmlp summary", lines.append))
        assert not lines
    finally:
        os.chmod(folder, 0o755)


WRITER = """
import sys, time
from pathlib import Path
from jaxmlp.results.store import index
folder, start = Path(sys.argv[1]), Path(sys.argv[2])
while not start.exists():
    time.sleep(0.001)
index.BATCH = 2  # many short transactions, interleaved with the other writer's
scan = index.scan(folder, "jaxmlp report")
print(len(scan.documents), len(scan.skipped), len(scan.summarised))
"""


@pytest.mark.xdist_group("processes")
def test_two_commands_building_one_index_at_once_agree(folder, tmp_path):
    start = tmp_path / "start"
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(folder), str(start)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    time.sleep(1.0)  # both imported and waiting
    start.touch()
    outs = []
    for run in runs:
        out, err = run.communicate(timeout=240)
        assert run.returncode == 0 and not err, err
        outs.append(out)
    assert outs[0] == outs[1]
    with sqlite3.connect(folder / index.INDEX_NAME) as db:
        rows = db.execute("SELECT path FROM files").fetchall()
    assert len(rows) == len({p for (p,) in rows}) == len(list(folder.rglob("*.json")))


def test_sweeps_and_timelines_older_than_the_newest_are_named_from_the_index(folder):
    every = load(ResultsStore(folder))
    indexed = results(index.scan(folder, "jaxmlp summary", keep_sweeps=0))
    assert not len(sweep_rows(indexed.runs)) and len(sweep_rows(every.runs))  # no cell read in full
    sweeps = {s.folder.name.split("-")[0]: s for s in indexed.older_sweeps}
    assert set(sweeps) == {"sweep", "timeline"}  # make_scale_folder names its copies as new sweeps are named
    for sweep in sweeps.values():
        rows = sweep_rows(every.runs)
        mine = rows[rows["file"].str.startswith(f"{sweep.folder}/")]
        assert set(sweep.releases) == set(mine["release"])  # the releases its files hold (one cut file's less)
    found = {f.kind: f for f in summaries.summaries(indexed, folder)}
    assert {"sweep", "timeline"} <= set(found)
    full = {f.kind: f for f in summaries.summaries(every, folder)}
    assert found["timeline"].summary.lines == full["timeline"].summary.lines  # read from its folder when asked


def _searched(monkeypatch) -> list[tuple[str, ...]]:
    """The labels of each series `changepoints.detect` searches from now on."""
    from jaxmlp import changepoints

    seen: list[tuple[str, ...]] = []
    real = changepoints.detect

    def counting(labels, samples, **kwargs):
        seen.append(tuple(labels))
        return real(labels, samples, **kwargs)

    monkeypatch.setattr(changepoints, "detect", counting)
    return seen


def test_a_folder_read_again_keeps_its_changes_and_searches_only_the_series_a_new_run_changed(folder, monkeypatch):
    def past() -> history.RunHistory:
        return history.of(results(index.scan(folder, "jaxmlp summary")), IndexMemo(folder, "jaxmlp summary"))

    searched = _searched(monkeypatch)
    first = past()
    assert len(searched) == first.points.groupby(["benchmark", "setting"]).ngroups > 3 and len(first.changes)
    searched.clear()
    again = past()
    assert not searched  # every series' changes kept in the index
    pd.testing.assert_frame_equal(first.changes, again.changes)

    newest = max(folder.glob("bench-2026*.json"), key=lambda p: p.name)
    doc = json.loads(newest.read_text())
    when, commit = "2030-01-01T00:00:00+00:00", "f" * 40
    doc["datetime"] = when
    doc["commit_info"].update(id=commit, time=when, author_time=when)
    doc["machine_info"]["jaxmlp"].update(timestamp=when, commit=commit)
    doc["benchmarks"] = doc["benchmarks"][:3]  # a new run of three benchmarks: three series change
    (folder / "bench-20300101T000000-cpu.json").write_text(json.dumps(doc))
    later = past()
    assert len(searched) == 3 and all(labels[-1].startswith("01-01 00:00 ffffffff") for labels in searched)
    fresh = history.of(results(index.scan(folder, "jaxmlp summary")))  # no memo: every series searched
    pd.testing.assert_frame_equal(later.changes, fresh.changes)
    with sqlite3.connect(folder / index.INDEX_NAME) as db:
        (kept,) = db.execute("SELECT count(*) FROM memo WHERE kind = ?", (history.MEMO_KIND,)).fetchone()
    assert kept == later.points.groupby(["benchmark", "setting"]).ngroups  # the replaced series' changes dropped


SWEEP = Path(__file__).parent / "fixtures" / "runs" / "jaxlib-20261203T055619"  # 10 processes a cell: decided


def _compared(monkeypatch) -> list[int]:
    """The sides' sizes of each pair `compared` compares from now on."""
    seen: list[int] = []
    real = compared.compare_within

    def counting(a, b, *args, **kwargs):
        seen.append(len(a) + len(b))
        return real(a, b, *args, **kwargs)

    monkeypatch.setattr(compared, "compare_within", counting)
    return seen


def test_a_folder_read_again_keeps_its_sweep_s_comparisons_and_compares_only_a_changed_cell_s(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = tmp_path / "results"
    folder.mkdir()
    undecided = SOURCE / "jaxlib-20261205T181153"  # newer, one process a release: the matrix reads both
    for sweep in (SWEEP, undecided):
        subprocess.run(["cp", "-a", str(sweep), str(folder / sweep.name)], check=True)

    def answer() -> tuple[str, Results]:
        found = results(index.scan(folder, "jaxmlp summary"))
        matrix, _, _ = sweep_findings.answers(found, folder, IndexMemo(folder, "jaxmlp summary"))
        return matrix.line(), found

    seen = _compared(monkeypatch)
    first, found = answer()
    found_sweeps = sweeps(found.runs)
    rows = found_sweeps[str(folder / SWEEP.name)]
    steps = sweep_steps(rows, found.samples)
    pairs = sum(len(compared.comparisons(r, found.samples)) for r in found_sweeps.values())
    assert len(seen) == 2 * pairs + len(steps) and "slower" in first  # the memo's, then the tests' own
    seen.clear()
    again, _ = answer()
    assert not seen and again == first  # every pair's comparison kept in the index
    kept = compared.comparisons(rows, found.samples, memo=IndexMemo(folder, "jaxmlp summary"))
    pd.testing.assert_frame_equal(sweep_steps(rows, found.samples, done=kept), steps)
    assert sweep_findings.answers(found, folder)[0].line() == first  # the same answer without the memo

    cell = folder / SWEEP.name / "jax-0.8.3.json"  # the newest release without flags, 1.5 times slower
    doc = json.loads(cell.read_text())
    for bench in doc["benchmarks"]:
        stats = bench["stats"]
        stats["data"] = [x * 1.5 for x in stats["data"]]
        stats.update({k: stats[k] * 1.5 for k in ("min", "max", "mean", "stddev", "median", "q1", "q3", "iqr")})
    cell.write_text(json.dumps(doc))
    seen.clear()
    later, found = answer()
    changed = steps[(steps["to"] == "0.8.3") & (steps["xla_flags"].fillna("") == "")]
    assert len(seen) == len(changed) > 0  # only the pairs the changed cell is a side of
    assert sweep_findings.answers(found, folder)[0].line() == later != first
    with sqlite3.connect(folder / index.INDEX_NAME) as db:
        (kept,) = db.execute("SELECT count(*) FROM memo WHERE kind LIKE 'comparisons %'").fetchone()
    assert kept == pairs  # the changed pairs' old comparisons dropped


def test_a_timeline_read_again_keeps_its_columns_changes_and_searches_only_a_changed_column(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = tmp_path / "results"
    folder.mkdir()
    timeline = SOURCE / "timeline-20261205T171450"  # three releases, 27 processes each
    subprocess.run(["cp", "-a", str(timeline), str(folder / timeline.name)], check=True)

    def answer() -> tuple[str, Results]:
        found = results(index.scan(folder, "jaxmlp summary"))
        _, timeline, _ = sweep_findings.answers(found, folder, IndexMemo(folder, "jaxmlp summary"))
        return timeline.line(), found

    def said(columns: list[compared.TimelineColumn]) -> list[tuple[object, ...]]:
        return [(c.workload, c.xla_flags, c.releases, c.samples, [x.line() for x in c.changes]) for c in columns]

    searched = _searched(monkeypatch)
    first, found = answer()
    ((rows),) = sweeps(found.runs).values()
    columns = compared.timeline_columns(rows, found.samples)  # no memo: every column searched
    assert len(searched) == 2 * len(columns) > 1
    searched.clear()
    again, _ = answer()
    assert not searched and again == first  # every column's changes kept in the index
    kept = compared.timeline_columns(rows, found.samples, memo=IndexMemo(folder, "jaxmlp summary"))
    assert not searched and said(kept) == said(columns)

    cell = folder / timeline.name / "jax-0.4.31.json"  # one workload of one release 1.5 times slower
    doc = json.loads(cell.read_text())
    (bench,) = [b for b in doc["benchmarks"] if b["name"] == "sweep_steady[step]"]
    stats = bench["stats"]
    stats["data"] = [x * 1.5 for x in stats["data"]]
    stats.update({k: stats[k] * 1.5 for k in ("min", "max", "mean", "stddev", "median", "q1", "q3", "iqr")})
    cell.write_text(json.dumps(doc))
    later, found = answer()
    assert len(searched) == 1  # its column only
    assert sweep_findings.answers(found, folder)[1].line() == later != first


def test_the_report_names_the_older_runs_in_a_line_a_machine(folder):
    from jaxmlp.report.sections import build_sections

    indexed = results(index.scan(folder, "jaxmlp report", keep=3))
    older = indexed.older[indexed.older["kind"] == "bench"]["file"].nunique()
    assert older == 5  # 8 runs, the newest 3 read in full
    (section,) = [s for s in build_sections(indexed, folder=folder) if s.anchor == ANCHOR.benchmarks]
    (line,) = [run.label for run in section.earlier if "older run" in run.label]  # one machine: one line
    newest = sorted(indexed.older["file"].unique())[-1]
    assert f"· {older} older runs since " in line and line.endswith(f"the newest {Path(newest).name}")
    assert "Intel(R) Xeon(R) Processor, 2 cores" in line
