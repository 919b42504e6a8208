"""The findings model: every face (`jaxmlp summary`, the report's overview and sections, summary.md, the report
command's own lines) prints the same answers with the same numbers; which run answers each question; one floor per
precision in one output."""

import html
import json
import re
import shutil
from pathlib import Path

import pytest

from jaxmlp.cli import main
from jaxmlp.results.findings import findings
from jaxmlp.results.findings.select import machine
from jaxmlp.results.frames import load
from jaxmlp.results.store import ResultsStore

FIXTURES = Path(__file__).parent / "fixtures"
NUMBER = re.compile(r"\d[\d,.]*")


@pytest.fixture
def folder(tmp_path):
    out = tmp_path / "reports"
    out.mkdir()
    for name in ("bench-cpu.json", "bench-tpu.json", "train-cpu.json"):
        shutil.copy(FIXTURES / name, out)
    return out


def _numbers(text: str) -> list[str]:
    return sorted(NUMBER.findall(text))


def test_every_face_prints_the_same_answers_and_numbers(folder, capsys):
    every = findings(load(ResultsStore(folder)), (), folder)  # computed once: the faces only render it
    found = [f for f in every if f.answered]
    assert {f.machine for f in found} >= {"Fixture CPU, 2 cores", "TPU v5 lite (host: 13 cores)"}
    assert main(["summary", str(folder)]) == 0
    summary = capsys.readouterr().out
    out = folder.parent / "report"
    assert main(["report", "--results", str(folder), "--out", str(out)]) == 0
    printed = capsys.readouterr().out.split("\n\nReport of ")[0]
    md = (out / "summary.md").read_text()
    overview_md = md.split("## Overview")[1].split("\n## ")[0]
    page = (out / "index.html").read_text()
    overview_html = html.unescape(
        re.sub(r"<[^>]+>", " ", page.split("<section id='overview'>")[1].split("</section>")[0])
    )
    sections_md = md.split("## Overview")[1].split("\n## ", 1)[1]
    for f in found:
        assert f.line() in summary.splitlines() and f.line() in printed.splitlines()
        assert f"| {f.asked} | {f.answer} | {f.run} |" in overview_md
        assert f"- **{f.asked}**: {f.answer}" in sections_md  # each section opens with its answers
        assert f.answer in html.unescape(re.sub(r"</?(b|code)>", "", page))
    # the numbers, face by face: the same multiset of numbers in the overview of each
    lines = [line for line in summary.splitlines()[1:] if line and not line.startswith("Holds ")]
    expected = _numbers(" ".join(f.line() for f in found))
    assert _numbers(" ".join(lines)) == expected == _numbers(printed)
    overview = _numbers(" ".join(f"{f.asked} {f.answer} {f.run}" for f in every))  # answered or not
    assert _numbers(overview_md) == overview == _numbers(overview_html)


def test_a_files_own_summary_answers_as_its_folder_does(folder, capsys):
    """Asked about one file, `jaxmlp summary` gives the same answers as the folder's findings for that run."""
    found = {
        f.asked: f.answer
        for f in findings(load(ResultsStore(folder)), (), folder)
        if f.run.startswith("bench-cpu.json (") and ";" not in f.run
    }
    assert len(found) >= 4
    assert main(["summary", str(folder / "bench-cpu.json")]) == 0
    lines = capsys.readouterr().out.splitlines()
    for asked, answer in found.items():
        assert f"{asked}: {answer}" in lines


@pytest.mark.parametrize("name", ["bench-tpu.json", "bench-cpu.json"])
def test_one_floor_per_precision_in_one_output(name, capsys):
    """Every line and table of one run's summary sets a precision's rows against one floor: its best rate."""
    assert main(["summary", str(FIXTURES / name), "--all"]) == 0
    out = capsys.readouterr().out
    said: dict[str, set[str]] = {}
    for precision, floor in re.findall(r"the (f32|bf16) floor \(([\d.]+ m?s)", out):
        said.setdefault(precision, set()).add(floor)
    assert said and all(len(floors) == 1 for floors in said.values()), said
    assert not re.search(r"bf16[^\n]*the f32 floor", out)  # a bf16 row is never set against the f32 floor
    assert "issue" not in out.lower()  # no tracker words in what a user reads


def _with(folder: Path, name: str, stamp: str, **metadata: object) -> None:
    doc = json.loads((FIXTURES / "bench-cpu.json").read_text())
    doc["datetime"] = f"{stamp[:4]}-{stamp[4:6]}-{stamp[6:8]}T{stamp[9:11]}:00:00+00:00"
    doc["machine_info"]["jaxmlp"].update(metadata)
    (folder / name).write_text(json.dumps(doc))


def test_a_smoke_run_answers_nothing_and_another_machine_is_its_own_line(tmp_path):
    _with(tmp_path, "bench-20261201T100000-cpu.json", "20261201T100000")
    _with(tmp_path, "bench-20261202T100000-cpu.json", "20261202T100000", size="smoke")  # newer, too short to time
    _with(tmp_path, "bench-20261203T100000-cpu.json", "20261203T100000", cpu_model="Other CPU", cpu_affinity=8)
    found = [f for f in findings(load(ResultsStore(tmp_path)), (), tmp_path) if f.question == "What jit buys"]
    assert [(f.machine, f.run.split(" ")[0]) for f in found] == [
        ("Other CPU, 8 cores", "bench-20261203T100000-cpu.json")
    ]
    (tmp_path / "bench-20261203T100000-cpu.json").unlink()
    (found,) = [f for f in findings(load(ResultsStore(tmp_path)), (), tmp_path) if f.question == "What jit buys"]
    assert found.run.startswith("bench-20261201T100000-cpu.json")  # not the newer smoke run


def test_a_machine_is_its_cpu_cores_backend_and_device():
    assert machine({"cpu_model": "AMD EPYC", "cpu_affinity": 2, "backend": "cpu"}) == "AMD EPYC, 2 cores"
    assert machine({"cpu_model": "unknown", "cpu_affinity": 13, "backend": "tpu", "device_kind": "TPU v5 lite"}) == (
        "TPU v5 lite (host: 13 cores)"
    )
