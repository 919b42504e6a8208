"""The results store over a folder, and the rendered report: every table and plot, nothing overwritten."""

import re
import shutil
import warnings
from pathlib import Path

import pytest

from jaxmlp.cli import main
from jaxmlp.errors import JaxmlpError
from jaxmlp.report import build_sections, cpu_vs_gpu, training_table
from jaxmlp.results import load_results

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def results_dir(tmp_path):
    folder = tmp_path / "reports"
    folder.mkdir()
    shutil.copy(FIXTURES / "bench-cpu.json", folder)
    shutil.copy(FIXTURES / "train-cpu.json", folder)
    (folder / "corrupt.json").write_text('{"benchmarks": [')
    (folder / "foreign.json").write_text('{"hello": "world"}')
    return folder


def test_load_results_makes_one_table_and_skips_what_is_not_results(results_dir):
    with pytest.warns(UserWarning) as caught:
        results = load_results(results_dir)
    messages = sorted(str(w.message) for w in caught)
    assert re.search(r"skipping .*corrupt.json: not readable as JSON", messages[0])
    assert re.search(r"skipping .*foreign.json: neither a pytest-benchmark file nor", messages[1])
    assert len(results.runs) == 22 + 3  # 22 benchmarks, 3 epochs
    assert sorted(Path(f).name for f, _ in results.skipped) == ["corrupt.json", "foreign.json"]
    assert (results_dir / "corrupt.json").read_text() == '{"benchmarks": ['  # never modified
    epochs = results.runs[results.runs["test"] == "train_epoch"]
    assert list(epochs["median"]) == [3.0, 2.0, 4.0] and set(epochs["pipeline"]) == {"seed"}
    assert len(results.samples) == 22 * 3


def test_training_table_uses_epochs_after_the_first(results_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = load_results(results_dir)
    row = training_table(results.runs).iloc[0]
    assert row.epoch_s_median == 3.0 and row.compile_s == 0.5 and row.train_accuracy == 0.95


def test_cpu_vs_gpu_says_what_differs(results_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = load_results(results_dir)
    runs = {f: rows for f, rows in results.runs[results.runs["test"] != "train_epoch"].groupby("file")}
    table, note = cpu_vs_gpu(runs)
    assert table.empty and "needs results of both" in note
    cpu = next(iter(runs.values()))
    gpu = cpu.assign(backend="gpu", median=cpu["median"] / 10, floor_seconds=cpu["floor_seconds"] / 10,
                     file="other.json", jax="0.11.2")  # fmt: skip
    table, note = cpu_vs_gpu({"a": cpu, "b": gpu})
    assert table.set_index("rung").loc["pipeline scan", "cpu_over_gpu"] == pytest.approx(10.0)
    assert "different runs" in note and "jax (0.10.2 vs 0.11.2)" in note


def test_report_writes_every_output_with_every_plot(results_dir, capsys):
    out = results_dir / "report"
    assert main(["report", "--results", str(results_dir), "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.err.count("warning: skipped") == 2 and "corrupt.json" in captured.err
    assert sorted(p.name for p in out.iterdir()) == ["index.html", "results.csv", "samples.csv", "summary.md"]
    page = (out / "index.html").read_text()
    alts = re.findall(r"<img alt='([^']*)'[^>]*src='data:image/png;base64,", page)
    assert alts == [
        "Update step time, jit vs eager (cpu)",
        "Prediction time vs batch size (cpu)",
        "Loader epoch vs workers",
        "Pipeline ladder with the floor (cpu)",
    ]
    assert "src='http" not in page and "<link" not in page and "<script" not in page  # self-contained
    md = (out / "summary.md").read_text()
    assert "| cpu | 128 | 4 | 0.1 | 20 | 5 |" in md  # jit 4 ms, dispatch 0.1, eager 20: speedup 5
    assert "best worker count: 2" in md and "Fixture CPU" in md
    assert (out / "results.csv").read_text().count("\n") == 26  # header and 25 rows


def test_report_never_overwrites(results_dir, capsys):
    out = results_dir / "report"
    out.mkdir()
    (out / "summary.md").write_text("earlier")
    assert main(["report", "--results", str(results_dir), "--out", str(out)]) == 2
    assert "already exists and reports are never overwritten" in capsys.readouterr().err
    assert (out / "summary.md").read_text() == "earlier"
    assert main(["report", "--results", str(results_dir)]) == 0
    assert main(["report", "--results", str(results_dir)]) == 0
    reports = sorted(p.name for p in results_dir.iterdir() if p.name.startswith("report-"))
    assert len(reports) == 2  # a new folder each time


def test_empty_or_missing_results(tmp_path, capsys):
    assert main(["report", "--results", str(tmp_path / "none")]) == 2
    assert "does not exist" in capsys.readouterr().err
    with pytest.raises(JaxmlpError, match="does not exist"):
        load_results(tmp_path / "none")
    assert main(["report", "--results", str(tmp_path)]) == 2
    assert "no results in" in capsys.readouterr().err


def test_sections_label_synthetic_data(results_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = load_results(results_dir)
    results.runs.loc[results.runs["test"] != "train_epoch", "dataset"] = "synthetic"
    assert "SYNTHETIC, not MNIST" in build_sections(results)[0]["env"]
