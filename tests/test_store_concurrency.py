"""Several jaxmlp processes writing into one results folder at once lose nothing: each result lands whole, under a
name of its own, even when they finish in the same second."""

import subprocess
import sys
import time
from pathlib import Path

import pytest

from jaxmlp.report.write import REPORT_FILES
from jaxmlp.results.store import layout
from jaxmlp.results.store.index import INDEX_NAME
from jaxmlp.results.store.reading import read_document
from jaxmlp.results.store.writing import document_name

pytestmark = pytest.mark.xdist_group("processes")  # processes of their own: one after another

FIXTURES = Path(__file__).parent / "fixtures"
ROOT = Path(__file__).parent.parent

# A process that builds a result folder named at a fixed time, once the start file exists, so that every process
# started finishes in the same second and asks for the same name; its renames are slow (a busy file system), so the
# others choose their names while the first one's folder is still on its way.
WRITER = """
import os, sys, time
from pathlib import Path
from jaxmlp.results.store import layout
from jaxmlp.results.store.writing import ResultsStore

layout.stamp = lambda when=None: "20260101T000000"
rename = os.rename
os.rename = lambda old, new: (time.sleep(0.5), rename(old, new))[1]
folder, start, who = sys.argv[1:]
while not Path(start).exists():
    time.sleep(0.001)
with ResultsStore(folder).new_folder(layout.REPORT) as building:
    (building.path / "who.txt").write_text(who)
    (building.path / "bulk.txt").write_text(who * 100_000)
print(building.path)
"""


def _finish(runs: list[subprocess.Popen[str]]) -> list[str]:
    outs = []
    for run in runs:
        out, err = run.communicate(timeout=240)
        assert run.returncode == 0, err
        outs.append(out)
    return outs


def _hidden(folder: Path) -> list[Path]:
    return [p for p in folder.rglob(".*") if not p.name.startswith(INDEX_NAME)]  # the folder's index is kept


def test_result_folders_finished_in_the_same_second_are_all_kept(tmp_path):
    results, start = tmp_path / "reports", tmp_path / "start"
    results.mkdir()
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(results), str(start), str(i)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(4)
    ]
    time.sleep(1.0)  # every process imported and waiting
    start.touch()
    paths = [Path(out.strip()) for out in _finish(runs)]
    assert len(set(paths)) == 4  # four names: report-20260101T000000, -2, -3, -4
    assert sorted(p.name for p in results.iterdir()) == sorted(p.name for p in paths)
    for path in paths:
        who = (path / "who.txt").read_text()
        assert (path / "bulk.txt").read_text() == who * 100_000  # each folder whole, and its own
    assert sorted((p / "who.txt").read_text() for p in paths) == ["0", "1", "2", "3"]
    assert not _hidden(results)  # no half-built folder left behind


def test_a_report_and_a_save_into_one_folder_at_once_lose_nothing(tmp_path):
    """`jaxmlp report` and `jaxmlp summary --save` of a run the folder holds already (its name asked for again), at
    once (two saves at once: tests/test_faults.py)."""
    results = tmp_path / "reports"
    results.mkdir()
    source = FIXTURES / "bench-cpu.json"
    (results / document_name(read_document(source))).write_bytes(source.read_bytes())  # the name --save asks for
    report = [sys.executable, "-m", "jaxmlp", "report", "--results", str(results)]
    save = [sys.executable, "-m", "jaxmlp", "summary", str(source), "--save", str(results)]
    runs = [
        subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for argv in (report, save)
    ]
    _finish(runs)
    (folder,) = results.glob(f"{layout.REPORT}-*")
    assert sorted(p.name for p in folder.iterdir()) == sorted(REPORT_FILES)
    assert (folder / "summary.md").read_text().strip() and "</html>" in (folder / "index.html").read_text()
    saved = sorted(results.glob(f"{layout.BENCH}-*.json"))
    assert len(saved) == 2  # the run saved again under a name of its own, whole; the first copy untouched
    assert all(read_document(p) == read_document(source) for p in saved)
    assert not _hidden(results)
