"""Each result's answer (`jaxmlp.report.run_summaries`, `sweep_summaries`, `summaries`), rendered as text or Markdown
(`jaxmlp.report.text`), and `jaxmlp summary` on every kind of result: real sweep, bisection and scaling results, and
hand-made ones, all under tests/fixtures/."""

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from jaxmlp import units
from jaxmlp.cli import main
from jaxmlp.report.display import readable
from jaxmlp.report.summary_base import Summary
from jaxmlp.report.text import render, text_table
from jaxmlp.results.findings import findings
from jaxmlp.results.store.frames import load
from jaxmlp.results.store.reading import read_benchmarks
from jaxmlp.results.store.writing import ResultsStore
from jaxmlp.stats import compare

ROOT = Path(__file__).parent.parent
REPORTS = ROOT / "tests" / "fixtures" / "runs"  # real results, copied
SWEEP = REPORTS / "jaxlib-20261203T055619"  # 5 releases, without and with --xla_cpu_use_thunk_runtime=false
FOUND = REPORTS / "bisect-20261203T054016"  # found the first faster release
NEITHER = REPORTS / "bisect-20261203T054846"  # no change between the ends
FIXTURES = ROOT / "tests" / "fixtures"
FLAG = "--xla_cpu_use_thunk_runtime=false"


def summary(capsys, *argv: object) -> list[str]:
    assert main(["summary", *map(str, argv)]) == 0
    return capsys.readouterr().out.splitlines()


def copied(folder: Path, tmp_path: Path) -> Path:
    """A copy of a fixture folder: a folder's summary keeps its index (`.jaxmlp-index.sqlite`) beside its files."""
    return Path(shutil.copytree(folder, tmp_path / folder.name))


def row(lines: list[str], first: str, after: str = "") -> list[str]:
    """The words of the first line that starts with ``first`` (after the line ``after``, if given)."""
    start = lines.index(after) if after else 0
    return next(line.split() for line in lines[start:] if line.split()[:1] == [first])


def test_a_sweep_folder_is_a_verdict_row_per_release_with_compares_statistics(capsys, tmp_path):
    lines = summary(capsys, copied(SWEEP, tmp_path))
    assert lines[0] == f"Releases compared: {SWEEP.name}" and "10 processes a release" in lines[2]
    assert lines[1].startswith("Verdict: slower: sweep_steady[scan_heavy] 0.4.31 → 0.4.33 ×2.29")  # the answer first
    plain, flagged = "scan_heavy, steady state, no XLA flags", f"scan_heavy, steady state, XLA_FLAGS={FLAG}"
    assert lines[lines.index(plain) + 1].split() == [
        "release",
        "median",
        "vs",
        "previous",
        "95%",
        "interval",
        "p",
        "verdict",
    ]
    assert [line.split()[0] for line in lines[lines.index(plain) + 2 :][:5]] == [
        "0.4.31",
        "0.4.33",
        "0.4.36",
        "0.6.2",
        "0.8.3",
    ]
    assert row(lines, "0.4.31", plain) == ["0.4.31", "5.59", "ms", "-", "-", "-", "-"]  # the first: no comparison
    assert row(lines, "0.4.33", plain) == ["0.4.33", "12.8", "ms", "×2.29", "×1.84–×2.33", "<0.001", "slower"]
    assert row(lines, "0.8.3", plain)[-1] == "faster" and row(lines, "0.6.2", plain)[-2:] == ["the", "same"]
    assert row(lines, "0.4.36", flagged) == ["0.4.36", "5.94", "ms", "×1.05", "×1.04–×1.08", "<0.001", "slower"]
    samples = {
        v: read_benchmarks(SWEEP / f"jax-{v}-flags1.json").samples()["sweep_steady[scan_heavy]"]
        for v in ("0.6.2", "0.8.3")
    }
    c = compare(samples["0.6.2"], samples["0.8.3"])  # `jaxmlp compare`'s statistics, on the same samples
    assert row(lines, "0.8.3", flagged) == [
        "0.8.3",
        *units.duration(np.median(samples["0.8.3"])).split(),
        units.ratio(c.ratio),
        units.interval(c.ci_low, c.ci_high),
        units.p_value(c.p_slower),
        "slower",
    ]
    assert (
        lines[-1] == f'XLA said, for 0.8.3 [{FLAG}]: "xla_cpu_use_thunk_runtime" is no longer supported and will '
        "be removed in a future release."
    )


def test_a_file_of_a_sweep_is_its_sweep(capsys, tmp_path):
    assert summary(capsys, copied(SWEEP, tmp_path) / "jax-0.4.31.json")[0] == f"Releases compared: {SWEEP.name}"


def test_a_bisect_folder_in_markdown_is_its_probes_then_its_answer(capsys, tmp_path):
    lines = summary(capsys, copied(FOUND, tmp_path), "--format", "md")
    assert lines[0] == f"### Bisection: {FOUND.name}"
    assert "**probe 3: faster between 0.7.2 and 0.8.0**" in lines
    header = lines.index("| release | median | vs previous | 95% interval | p | verdict |")
    assert lines[header + 1 :][:2] == ["|---|---|---|---|---|---|", "| 0.6.2 | 9.38 ms | - | - | - | - |"]
    assert "| 0.8.0 | 6.96 ms | ×0.759 | ×0.750–×0.780 | <0.001 | faster |" in lines
    answer = "first faster release: 0.8.0 (ratio ×0.759, 95% interval ×0.750–×0.780, p <0.001) after 0.7.2"
    assert lines[-1] == answer and lines[2] == f"Verdict: {answer}"
    neither = summary(capsys, copied(NEITHER, tmp_path) / "bisect.json")
    assert neither[-1].startswith("no change between 0.6.2 and 0.7.2")


def test_a_bench_file_is_its_run_summary(capsys):
    """Its answers first, one line each, then what it ran on, then the tables; the long ones behind --all."""
    lines = summary(capsys, FIXTURES / "bench-cpu.json")
    assert lines[0] == "Benchmarks: bench-cpu.json"
    assert lines[1] == (
        "What jit buys (Fixture CPU, 2 cores): jit makes the update step faster than eager by ×5.00 "
        "at batch 128 (×10.0 at 32)."
    )
    floor = next(i for i, line in enumerate(lines) if line.startswith("How far from the floor"))
    assert lines[floor].endswith(
        "f32: the fastest pipeline, scan, takes 1.50 s an epoch, ×1.29 the f32 floor (1.16 s at 172 GFLOP/s, xla)."
    )
    setting = next(i for i, line in enumerate(lines) if line.startswith("measured with jax 0.10.2, jaxlib 0.10.2"))
    assert setting <= 15 and lines[setting + 1] == ""  # the answers within 15 lines, then the tables
    assert row(
        lines, "cpu", lines[next(i for i, x in enumerate(lines) if x.startswith("The floor per precision"))]
    ) == ["cpu", "f32", "xla", "2048x2048x2048", "172", "GFLOP/s", "1.16", "s"]
    assert not any("Goals (issues" in line or "issue" in line for line in lines)
    md = summary(capsys, FIXTURES / "bench-cpu.json", "--format", "md")
    assert "| cpu | f32 | xla | 2048x2048x2048 | 172 GFLOP/s | 1.16 s |" in md


def test_a_training_file_and_a_scaling_file(capsys):
    lines = summary(capsys, FIXTURES / "train-cpu.json")
    assert lines[0] == "Training: train-cpu.json"
    assert row(lines, "train-cpu.json") == [
        "train-cpu.json",
        "mnist",
        "seed",
        "cpu",
        "3",
        "3.00",
        "s",
        "500",
        "ms",
        "95.0%",
        "94.0%",
        "0.10.2",
    ]
    scaling = REPORTS / "scaling-20261203T073946-cpu.json"
    lines = summary(capsys, scaling)
    assert lines[0] == f"Scaling: {scaling.name}"
    rows = [line.split()[:5] for line in lines if line.startswith("cpu ")]  # an older file: one process each
    assert rows == [
        ["cpu", "1", "1", "995", "ms"],
        ["cpu", "2", "1", "1.21", "s"],
        ["cpu", "4", "1", "1.79", "s"],
        ["cpu", "8", "1", "4.51", "s"],
    ]


def test_a_folder_of_many_is_the_newest_of_each_kind(tmp_path, capsys):
    for folder in (SWEEP, FOUND, NEITHER):
        shutil.copytree(folder, tmp_path / folder.name)
    for name in ("bench-cpu.json", "train-cpu.json"):
        shutil.copy(FIXTURES / name, tmp_path)
    lines = summary(capsys, tmp_path)
    assert lines[0] == f"Findings: {tmp_path.name}"  # a folder opens with its findings, then --all for every result
    assert (
        "Which release did it (Intel(R) Xeon(R) Processor, 2 cores): First faster release: 0.8.0"
        in lines[next(i for i, line in enumerate(lines) if line.startswith("Which release did it"))][:90]
    )
    assert lines[-1].startswith("Holds 2 bisection, 1 sweep, 1 benchmarks, 1 training")
    lines = summary(capsys, tmp_path, "--all")
    titles = [
        line
        for line in lines
        if line.split(":")[0] in ("Bisection", "Releases compared", "Benchmarks", "Scaling", "Training")
    ]
    assert titles == [
        f"Bisection: {NEITHER.name}",
        f"Releases compared: {SWEEP.name}",
        "Benchmarks: bench-cpu.json",
        "Training: train-cpu.json",
    ]  # the probes' folders are the bisections', no sweeps
    assert f"1 older bisection result(s): {FOUND.name} (`jaxmlp summary PATH` for one)" in lines


def test_save_files_single_benchmark_and_training_files_and_refuses_the_others(tmp_path, capsys):
    saved = tmp_path / "saved"
    assert main(["summary", str(SWEEP), "--save", str(saved)]) == 2  # refused before any work, no folder made
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and not saved.exists()
    assert f"--save files one benchmark, scaling, training or time-to-accuracy file, and {SWEEP} is a folder" in err
    assert summary(capsys, FIXTURES / "train-cpu.json", "--save", saved)[-1].startswith(f"Saved {saved}/train-")


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("missing.json", "missing.json does not exist: give a pytest-benchmark"),
        ("empty", "empty: holds no results: give a pytest-benchmark"),
        (
            "notes.json",
            "notes.json: not a JSON object (it begins b'notes'); is it a results file? (`jaxmlp summary` reads",
        ),
    ],
)
def test_what_is_no_result_is_one_line_with_what_summary_reads(tmp_path, capsys, given, message):
    (tmp_path / "empty").mkdir()
    (tmp_path / "notes.json").write_text("notes")
    assert main(["summary", str(tmp_path / given)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"jaxmlp summary: error: {tmp_path / message}") and err.count("\n") == 1


def test_cells_are_words_numbers_in_three_digits_and_counts_as_counts():
    table = pd.DataFrame({"devices": [1.0, 2.0], "rate": [31800.0, 0.54], "note": ["a", None]})
    assert readable(table).values.tolist() == [["1", "31,800", "a"], ["2", "0.540", "-"]]
    assert text_table(table).splitlines() == ["devices N  rate    note", "1          31,800  a", "2          0.540   -"]
    answer = Summary("Title", ("a line",), (("caption", table),), ("the answer",))
    assert render([answer]).splitlines() == [
        "Title",
        "a line",
        "",
        "caption",
        *text_table(table).splitlines(),
        "",
        "the answer",
    ]
    md = "| devices N | rate | note |\n|---|---|---|\n| 1 | 31,800 | a |\n| 2 | 0.540 | - |"
    assert render([answer], "md").split("\n\n") == ["### Title", "a line", "**caption**", md, "the answer"]


def best_floor_file(folder: Path, best: str = "torch") -> Path:
    """The bench fixture as a run whose floor fixture measured every library (torch best, at 400 GFLOP/s against
    XLA's 200) and whose floor benchmark timed the 2048³ product in each library and precision (numpy: no bf16)."""
    doc = json.loads((FIXTURES / "bench-cpu.json").read_text())
    matmul = next(b for b in doc["benchmarks"] if b["name"] == "test_matmul[cpu]")
    for bench in doc["benchmarks"]:
        if bench["name"].startswith(("test_epoch", "test_step_gemms")):
            flops = bench["extra_info"]["flops"]
            rate = 4e11 if best == "torch" else 2e11  # XLA's: the fixture's own floor
            bench["extra_info"].update(
                best_floor_library=best, best_matmul_flops_per_second=rate, best_floor_seconds=flops / rate
            )
    flops = 2 * 2048**3
    for library, precision, rate in (
        ("xla", "f32", 200e9),
        ("torch", "f32", 400e9),
        ("numpy", "f32", 100e9),
        ("xla", "bf16", 1000e9),
        ("torch", "bf16", 2000e9),
    ):
        median = flops / rate
        stats = {
            **matmul["stats"],
            "median": median,
            "q1": median * 0.99,
            "q3": median * 1.01,
            "iqr": median * 0.02,
            "data": [median] * 3,
        }
        doc["benchmarks"].append(
            {
                **matmul,
                "name": f"test_gemm[cpu-{library}-{precision}-2048x2048x2048]",
                "params": {"backend": "cpu", "library": library, "precision": precision, "shape": "2048x2048x2048"},
                "extra_info": {
                    "backend": "cpu",
                    "library": library,
                    "precision": precision,
                    "m": 2048,
                    "k": 2048,
                    "n": 2048,
                    "calls": 1,
                    "flops": flops,
                },
                "stats": stats,
            }
        )
    path = folder / "bench-best-floor.json"
    path.write_text(json.dumps(doc))
    return path


def test_a_bench_file_with_every_library_sets_each_precision_against_its_best_rate(tmp_path, capsys):
    from jaxmlp.results.findings import bench, select
    from jaxmlp.results.store.frames import load
    from jaxmlp.results.store.writing import ResultsStore
    from jaxmlp.results.tables import benchmark_runs

    path = best_floor_file(tmp_path)
    md = summary(capsys, path, "--format", "md", "--all")
    assert "| backend | m×k×n | precision | library | product | rate | bf16 speed-up | fastest |" in md
    assert [line for line in md if line.startswith("| cpu | 2048x2048x2048 |")] == [
        "| cpu | 2048x2048x2048 | f32 | xla | 85.9 ms (IQR 1.72 ms) | 200 GFLOP/s | - |  |",
        "| cpu | 2048x2048x2048 | f32 | torch | 42.9 ms (IQR 859 µs) | 400 GFLOP/s | - | fastest |",
        "| cpu | 2048x2048x2048 | f32 | numpy | 172 ms (IQR 3.44 ms) | 100 GFLOP/s | - |  |",
        "| cpu | 2048x2048x2048 | bf16 | xla | 17.2 ms (IQR 344 µs) | 1.00 TFLOP/s | ×5.00 |  |",
        "| cpu | 2048x2048x2048 | bf16 | torch | 8.59 ms (IQR 172 µs) | 2.00 TFLOP/s | ×5.00 | fastest |",
    ]
    assert "| cpu | floor, f32 | f32 | 500 ms | ×1.00 | - | - | - | torch | 400 GFLOP/s |  | - |" in md  # no rounds
    lines = summary(capsys, path)
    assert "Not shown (`--all` shows them): The floor's products in each library and precision (5 rows)" in lines
    (floor,) = bench.floor(select.Parts(benchmark_runs(load(ResultsStore(tmp_path)).runs)))
    assert floor.answer.startswith(
        "f32: the fastest pipeline, scan, takes 1.50 s an epoch, ×3.00 the f32 floor (500 ms at 400 GFLOP/s, torch)"
    )
    # every number of the answer is in the summary the terminal prints: one floor for one thing
    assert any(floor.answer in line for line in lines)


@pytest.mark.parametrize(
    ("devices", "processes", "partial", "said"),
    [
        (1, 1, "stopped by SIGINT; kept 1 of 2 cells", "Only N = 1, P = 1 in the run: no speed-up to find"),
        (2, 2, None, "No N = 1, P = 1 baseline in the run, so no speed-up or efficiency"),
    ],
)
def test_a_scaling_file_of_one_cell_shows_its_cell_and_why_it_has_no_speed_up(
    tmp_path, capsys, devices, processes, partial, said
):
    doc = json.loads((FIXTURES / "runs" / "scaling-20261203T073946-cpu.json").read_text())
    doc["benchmarks"] = [b for b in doc["benchmarks"] if b["params"]["devices"] == devices]
    for b in doc["benchmarks"]:
        b["params"]["processes"] = processes
    doc["machine_info"]["jaxmlp"]["partial"] = partial
    file = tmp_path / "scaling-20261203T073946-cpu.json"
    file.write_text(json.dumps(doc))
    lines = summary(capsys, file)
    answer = next(line for line in lines if line.startswith("Scaling ("))
    assert f"N = {devices}" in answer and said in answer and "epoch " in answer
    assert ("a partial run (stopped by SIGINT; kept 1 of 2 cells)" in answer) == bool(partial)
    assert any(line.startswith("cpu ") and f" {devices} " in line for line in lines)  # its cell's row
    folder = findings(load(ResultsStore(tmp_path)))  # a folder's answer: still open, saying what is missing
    scaling = next(f for f in folder if f.question == "Scaling")
    assert not scaling.answered and said.replace("the run", "the newest scaling run") in scaling.answer


def test_reading_results_never_loads_jax_or_torch(tmp_path):
    """`jaxmlp summary` of a folder is reading files: JAX's seconds of import (and torch's) are not its to pay."""
    import subprocess
    import sys

    folder = tmp_path / "reports"
    shutil.copytree(FIXTURES / "three-calls", folder)
    code = (
        "import sys\nfrom jaxmlp.cli import main\n"
        f"assert main(['summary', {str(folder)!r}]) == 0\n"
        "print(sorted(m for m in ('jax', 'jaxlib', 'torch') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_a_folder_of_track_calls_answers_whether_the_newest_release_is_safe_to_take(tmp_path, capsys):
    """Two nights of `jaxmlp track` (their track.json files): the summary answers for the newest release against
    the pinned one on each workload, with where its explanation is and the site; the report has its section."""
    from jaxmlp.results.schema.track import TrackDocument, Tracked

    def night(name, release, verdicts, explanation=""):
        comparisons = []
        for workload, (verdict, ratio) in verdicts.items():
            c = compare([1.0, 1.01, 0.99, 1.0, 1.02], [ratio * v for v in (1.0, 1.01, 0.99, 1.0, 1.02)])
            why = explanation if verdict == "slower" else ""
            comparisons.append(Tracked(workload, release, "0.7.0", "previous", c, verdict, 0, why))
        doc = TrackDocument(
            {"timestamp": f"2026-12-0{name[-1]}T02:00:00+00:00", "machine_cpu": "AMD EPYC", "machine_cores": 2},
            {"machine": "AMD EPYC, 2 cores", "workloads": sorted(verdicts)},
            {"site": "site"},
            "",
            "0.7.0",
            "0.7.0",
            ("0.7.0", release),
            (release,),
            tuple(comparisons),
            {},
            60.0,
        )
        folder = tmp_path / "reports" / f"track-2026120{name[-1]}T020000-amd-epyc-2c-{name[-1]}"
        folder.mkdir(parents=True)
        (folder / "track.json").write_text(json.dumps(doc.to_json()))
        return folder

    night("n1", "0.7.0.1", {"batched": ("the same", 1.0), "scan": ("the same", 1.0)})
    folder = night("n2", "0.7.1", {"batched": ("the same", 1.0), "scan": ("slower", 4.7)}, "x/explain-1")
    lines = summary(capsys, tmp_path / "reports")
    answer = next(line for line in lines if line.startswith("Is the newest release safe to take (AMD EPYC, 2 cores)"))
    assert ": No: jax 0.7.1 is slower than the pinned 0.7.0 on scan. batched: 0.7.1 is the same as 0.7.0" in answer
    assert "scan: 0.7.1 is slower than 0.7.0 (pinned): ×4.70" in answer and "(why: x/explain-1/explain.txt)" in answer
    assert "The site: site/index.html." in answer and folder.name in answer
    assert main(["report", "--results", str(tmp_path / "reports"), "--out", str(tmp_path / "report")]) == 0
    page = (tmp_path / "report" / "index.html").read_text()
    assert "Tracked releases: is the newest safe to take?" in page and "x/explain-1" in page
