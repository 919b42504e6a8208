"""The findings model: every face (`jaxmlp summary`, the report's overview and sections, summary.md, the report
command's own lines) prints the same answers with the same numbers; which run answers each question; one floor per
precision in one output."""

import html
import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from jaxmlp.cli import main
from jaxmlp.results.findings import findings
from jaxmlp.results.findings.model import ANCHOR
from jaxmlp.results.findings.select import machine
from jaxmlp.results.store.frames import load
from jaxmlp.results.store.writing import ResultsStore
from jaxmlp.units import duration, percent, size

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
    assert "issue" not in out.lower()  # a summary speaks of the results alone


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
    assert machine({"machine_cpu": "AMD EPYC", "machine_cores": 2, "machine_backend": "cpu"}) == "AMD EPYC, 2 cores"
    assert machine({"machine_cpu": "Xeon", "machine_cores": 1.0, "machine_backend": "cpu"}) == "Xeon, 1 core"
    tpu = {"machine_cpu": "unknown", "machine_cores": 13, "machine_backend": "tpu", "machine_device": "TPU v5 lite"}
    assert machine(tpu) == "TPU v5 lite (host: 13 cores)"
    assert machine({**tpu, "machine_name": "lab-7"}) == "lab-7: TPU v5 lite (host: 13 cores)"  # named where asked


OPS = FIXTURES / "ops"
"""The TPU ladder run and its traces' operation tables in the run's folder (`layout.run_folder`), the tables cut."""
OPERATIONS = "Where the accelerator's time goes, by operation"


def test_an_accelerator_runs_operation_tables_answer_with_each_pipelines_top_operations(tmp_path, capsys):
    from jaxmlp.report.sections import build_sections
    from jaxmlp.results.tables.traces import OPERATION_COLUMNS

    folder = tmp_path / "reports"
    shutil.copytree(OPS, folder)
    shutil.copy(FIXTURES / "bench-cpu.json", folder)
    results = load(ResultsStore(folder))
    every = findings(results, (), folder)
    (found,) = [f for f in every if f.question == OPERATIONS]
    assert found.answered and found.anchor == ANCHOR.cpu_accelerator and found.machine == "TPU v5 lite (host: 13 cores)"
    assert found.run == "bench-20261206T012031-tpu.json (2026-12-06 01:20 UTC)"
    # the share is of the operations' self time (the file's 6 and 12 rows), not xprof's self_percent (of its total)
    assert found.answer == (
        "pallas: 6 operations, the largest run.1 (custom-call), 99.9% of the operations' self time, bound by "
        "Compute; scan: 12 operations, the largest fusion.178 (convolution fusion), 14.5% of the operations' self "
        "time, bound by Compute."
    )
    pallas, scan = (t.frame for t in found.tables)
    written = pd.read_csv(OPS / "tpu-20261206T012031" / "ops-scan.csv")
    assert "tpu-20261206T012031/ops-scan.csv" in found.tables[1].caption
    assert (
        f"share = its self time over the 12 operations' self time, which is "
        f"{percent(written['self_percent'].sum() / 100)} of xprof's total" in found.tables[1].caption
    )
    assert list(scan.columns) == OPERATION_COLUMNS and len(scan) == 8 and len(pallas) == 6  # the top 8 of 12
    assert scan["self_us"].is_monotonic_decreasing
    assert scan["share"].tolist() == pytest.approx((scan["self_us"] / written["self_us"].sum()).tolist())
    # the report's accelerator section shows them beside the CPU-against-TPU table, which alone is plotted
    (section,) = [s for s in build_sections(results, (), folder, every) if s.anchor == ANCHOR.cpu_accelerator]
    assert any(t.frame.equals(scan) for t in section.tables)
    assert [p.kind for p in section.plots] == ["cpu_accelerator"]
    assert main(["summary", str(folder / "bench-20261206T012031-tpu.json")]) == 0  # the run asked for by name
    assert found.answer in capsys.readouterr().out


def test_an_operation_table_that_cannot_be_read_is_named_and_a_cpu_run_never_looked_for(tmp_path):
    from jaxmlp.results.store.layout import run_folder

    folder = tmp_path / "reports"
    shutil.copytree(OPS, folder)
    (folder / "tpu-20261206T012031" / "ops-seed.csv").write_text("name,time\nx,1\n")
    shutil.copy(FIXTURES / "bench-cpu.json", folder / "bench-20261201T100000-cpu.json")
    (folder / "cpu-20261201T100000").mkdir()  # where a CPU run's tables would be; the finding is an accelerator's
    shutil.copy(OPS / "tpu-20261206T012031" / "ops-scan.csv", folder / "cpu-20261201T100000")
    (found,) = [f for f in findings(load(ResultsStore(folder)), (), folder) if f.question == OPERATIONS]
    assert found.answer.endswith(
        "; ops-seed.csv not read (no operation, self_us, self_percent column (not an operation table of xprof's "
        "hlo_stats))."
    )
    assert run_folder(folder / "bench-20261206T012031-tpu.json") == folder / "tpu-20261206T012031"
    assert run_folder("bench-20261206T012031-cpu-tpu.json").name == "cpu-tpu-20261206T012031"
    assert run_folder("reports/bench-undated-cpu.json") is None and run_folder("train-20261206T012031-x.json") is None


@pytest.fixture(scope="module")
def cpu_trace(tmp_path_factory):
    """A real trace: `jaxmlp profile`'s capture of two `scan` epochs on this CPU (xprof's hlo_stats of it: no rows,
    the columns all there)."""
    from jax import random

    from jaxmlp import model
    from jaxmlp.measure.profiling import capture
    from jaxmlp.pipelines import data
    from jaxmlp.pipelines.epochs import make_epoch
    from jaxmlp.results.store.writing import new_trace_run

    logdir = tmp_path_factory.mktemp("traces")
    split = data.SyntheticMNIST(train=True, size=512, transform=data.FlattenAndCast())
    params = model.init_network_params(model.LAYER_SIZES, random.PRNGKey(0))
    capture(make_epoch("scan", split, batch_size=128), params, steps=2, run_dir=lambda: new_trace_run(logdir, "scan"))
    return logdir


def test_a_runs_traces_are_computed_into_tables_once_kept_beside_it_and_a_bad_one_again(tmp_path, cpu_trace, capsys):
    """`jaxmlp summary` over a run whose folder holds its traces (`traces/<pipeline>/`) computes each trace's
    operation table where the traces are read, keeps it as ops-<pipeline>.csv, reuses it after, and computes again
    one that cannot be read; without xprof it says so in one line."""
    from jaxmlp.results.tables import traces
    from jaxmlp.results.tables.traces import op_tables

    folder = tmp_path / "reports"
    shutil.copytree(OPS, folder)
    run = folder / "tpu-20261206T012031"
    shutil.copytree(cpu_trace, run / "traces" / "seed")
    bench = folder / "bench-20261206T012031-tpu.json"
    assert main(["summary", str(bench)]) == 0
    assert "; seed: 0 operations." in capsys.readouterr().out  # computed, and shown with the kept ones
    kept = run / "ops-seed.csv"
    assert kept.read_text().startswith("category,operation,occurrences,self_us") and not list(run.glob(".*"))
    first = kept.stat().st_ino
    tables, unread = op_tables(bench)
    assert kept.stat().st_ino == first and sorted(tables) == ["pallas", "scan", "seed"] and not unread  # reused
    kept.write_text("name,time\nx,1\n")  # a kept table that cannot be read: computed again
    tables, unread = op_tables(bench)
    assert "seed" in tables and not unread and kept.read_text().startswith("category,operation")
    kept.unlink()
    missing = pytest.MonkeyPatch.context()
    with missing as m:
        m.setattr(traces, "hlo_stats", lambda xplane: None)  # what it returns where xprof is not installed
        tables, unread = op_tables(bench)
    assert sorted(tables) == ["pallas", "scan"] and unread == {
        "ops-seed.csv": "its trace's operation table not computed: xprof is not installed (pip install "
        "tensorboard-plugin-profile)"
    }
    assert not kept.exists()

    def refused(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    with pytest.MonkeyPatch.context() as m:  # a folder the user may only read (root ignores modes: refused here)
        m.setattr(traces, "write_new", refused)
        tables, unread = op_tables(bench)
    assert "seed" in tables and not kept.exists()  # computed and shown, not kept
    assert unread == {"ops-seed.csv": f"computed, not kept (Permission denied: {run})"}


def test_the_loader_answer_says_what_its_table_marks_fastest(folder):
    """Input alone is fastest with the row its table marks so; the loaders that take workers are a point apart."""
    (found,) = [
        f
        for f in findings(load(ResultsStore(folder)), (), folder)
        if f.question == "Which loader, how many workers" and f.machine == "Fixture CPU, 2 cores"
    ]
    table = found.tables[0].frame
    fastest = table[table["loader_best"] == "fastest"].iloc[0]
    assert fastest.pipeline == "batched" and fastest.workers == 0
    assert found.answer.endswith(
        f"; input alone is fastest with batched ({duration(fastest.loader_s)} an epoch); of the loaders that can "
        "use worker processes, seed, 2 workers (1.25 s an epoch)."
    )


def test_a_peak_is_a_benchmarks_own_only_where_it_was_reset_before_it(tmp_path):
    from jaxmlp.results.findings.checks import MEMORY_CAPTION, PROCESS_MEMORY_CAPTION

    own, process_wide = FIXTURES / "scale" / "bench-20261205T191503-cpu.json", OPS / "bench-20261206T012031-tpu.json"
    for path in (own, process_wide):  # every peak reset before its benchmark; none could be (the process's)
        shutil.copy(path, tmp_path)
    found = {f.machine: f for f in findings(load(ResultsStore(tmp_path)), (), tmp_path) if f.question == "Peak memory"}
    tpu = found.pop("TPU v5 lite (host: 13 cores)")
    (cpu,) = found.values()
    listed = [b["name"] for b in json.loads(process_wide.read_text())["benchmarks"]]
    (table,) = (t.frame for t in tpu.tables)
    assert tpu.tables[0].caption == PROCESS_MEMORY_CAPTION and table["benchmark"].tolist() == listed  # never ranked
    assert tpu.answer == (
        "The largest host peak the run recorded is 16.6 GiB, over 29 benchmarks, and no benchmark's own: the peak "
        "could not be reset before each benchmark here, so each records its process's peak since that process "
        "started."
    )
    (table,) = (t.frame for t in cpu.tables)
    top = table.iloc[0]
    assert cpu.tables[0].caption == MEMORY_CAPTION and table["peak_rss_bytes"].is_monotonic_decreasing
    assert cpu.answer.startswith(f"The largest host peak is {top.benchmark}'s, {size(top.peak_rss_bytes)}, of ")


def test_a_one_epoch_training_run_has_no_epoch_after_the_first(tmp_path):
    doc = json.loads((FIXTURES / "train-cpu.json").read_text())
    doc["records"] = doc["records"][:1]  # its first epoch alone
    (tmp_path / "train-20261201T090000-mnist-seed.json").write_text(json.dumps(doc))
    (found,) = [f for f in findings(load(ResultsStore(tmp_path)), (), tmp_path) if f.question == "Training"]
    assert found.answer == "seed f32 on mnist, 1 epoch: test accuracy 89.0%, no epoch after the first to time."
    (table,) = (t.frame for t in found.tables)
    assert table["epoch_s_median"].isna().all() and "a run of one epoch" in found.tables[0].caption


def test_a_step_whose_release_ignored_its_flag_says_so():
    from jaxmlp.results.sweep.cells import cells_table

    sweep = FIXTURES / "runs" / "jaxlib-20261203T055619"  # 0.8.3 ignores --xla_cpu_use_thunk_runtime=false
    results = load(ResultsStore(sweep))
    (found,) = [f for f in findings(results, (), sweep) if f.question == "Which release got slower"]
    step = "[XLA_FLAGS --xla_cpu_use_thunk_runtime=false] 0.6.2 → 0.8.3 ×1.16 (×1.14–×1.19, p <0.001"
    assert f"{step}; 0.8.3 ignores the flag: this is 0.6.2 with it against 0.8.3 without it)" in found.answer
    assert found.answer.count("ignores the flag") == 1  # the releases that took it: no caveat
    ((_, cells),) = results.cells
    assert cells_table(cells)["status"].tolist() == ["measured, its XLA flags ignored"]


def test_what_a_file_does_not_say_reads_as_missing_never_nan(tmp_path, capsys):
    from jaxmlp.results.tables import shown_metadata
    from jaxmlp.units import MISSING

    shutil.copy(FIXTURES / "bench-tpu.json", tmp_path)  # written where torch was not installed: torch null
    shutil.copy(FIXTURES / "runs" / "scaling-20261203T073946-cpu.json", tmp_path)  # a scaling run names no size
    results = load(ResultsStore(tmp_path))
    by_file = {Path(str(f)).name: rows for f, rows in results.runs.groupby("file")}
    assert shown_metadata(by_file["bench-tpu.json"])["torch"] == MISSING
    assert shown_metadata(by_file["scaling-20261203T073946-cpu.json"])["size"] == MISSING
    assert main(["report", "--results", str(tmp_path), "--out", str(tmp_path / "out")]) == 0
    md = (tmp_path / "out" / "summary.md").read_text()
    assert "torch -," in md and "size -;" in md and not re.search(r"\bnan\b", md)


def test_every_question_is_answered_once_from_the_one_table():
    """The questions' table (`findings.questions.QUESTIONS`) is what the findings answer: each question has its way
    to be answered, its words and section once, and the report has a section for each question's anchor."""
    from jaxmlp.report.sections import SECTIONS
    from jaxmlp.results.findings import ANSWERS, QUESTIONS

    assert set(ANSWERS) == set(QUESTIONS)
    assert len({q.name for q in QUESTIONS}) == len({q.text for q in QUESTIONS}) == len(QUESTIONS)
    assert {q.anchor for q in QUESTIONS} <= {d.anchor for d in SECTIONS}
    assert tuple(d.anchor for d in SECTIONS) == tuple(ANCHOR)  # a section for each anchor of the one table, in order
