"""The rendered report: every table and plot, one warning line per skipped file, nothing overwritten."""

import re
import shutil
from pathlib import Path

import pytest

from jaxmlp.cli import main
from jaxmlp.errors import JaxmlpError
from jaxmlp.report.sections import build_sections
from jaxmlp.results.store.frames import load
from jaxmlp.results.store.index import INDEX_NAME
from jaxmlp.results.store.writing import ResultsStore
from jaxmlp.results.tables import cpu_vs_accelerator, floor_vs_fastest, floors, goals, pipeline_ladder, training_table

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


def test_load_makes_one_table_and_skips_what_is_not_results(results_dir):
    results = load(ResultsStore(results_dir))
    why = {s.path.name: s.why for s in results.skipped}
    assert sorted(why) == ["corrupt.json", "foreign.json"]
    assert why["corrupt.json"].startswith("not readable as JSON")
    assert why["foreign.json"].startswith("neither a pytest-benchmark file nor")
    assert len(results.runs) == 22 + 3  # 22 benchmarks, 3 epochs
    assert (results_dir / "corrupt.json").read_text() == '{"benchmarks": ['  # never modified
    epochs = results.runs[results.runs["test"] == "train_epoch"]
    assert list(epochs["median"]) == [3.0, 2.0, 4.0] and set(epochs["pipeline"]) == {"seed"}
    assert len(results.samples) == 22 * 3


def test_training_table_uses_epochs_after_the_first(results_dir):
    results = load(ResultsStore(results_dir))
    row = training_table(results.runs).iloc[0]
    assert row.epoch_s_median == 3.0 and row.compile_s == 0.5 and row.train_accuracy == 0.95


@pytest.mark.parametrize("accelerator", ["gpu", "tpu"])
def test_cpu_vs_accelerator_says_what_differs(results_dir, accelerator):
    results = load(ResultsStore(results_dir))
    runs = {f: rows for f, rows in results.runs[results.runs["test"] != "train_epoch"].groupby("file")}
    table, differ = cpu_vs_accelerator(runs, accelerator)
    assert table.empty and differ is None
    cpu = next(iter(runs.values()))
    other = cpu.assign(
        backend=accelerator,
        median=cpu["median"] / 10,
        floor_seconds=cpu["floor_seconds"] / 10,
        file="other.json",
        jax="0.11.2",
    )
    table, differ = cpu_vs_accelerator({"a": cpu, "b": other}, accelerator)
    by_benchmark = table.set_index("benchmark")["cpu_over_accelerator"]
    assert by_benchmark["pipeline scan"] == pytest.approx(10.0)
    assert by_benchmark["update: batch_size 128, variant jit"] == pytest.approx(10.0)  # every benchmark, not the ladder
    assert differ["jax"] == ("0.10.2", "0.11.2")


def test_accelerator_floor_is_the_fastest_epoch_at_each_precision_rate():
    """The real TPU run: each precision's floor is the epoch's FLOPs at the best rate the run measured in that
    precision (XLA's 2048^3, from its file, not recomputed the table's way), against the fastest epoch of that
    precision; the ladder and the goal read the same floor."""
    import json

    path = FIXTURES / "bench-tpu.json"
    runs = load(ResultsStore(FIXTURES)).runs
    run = runs[runs["file"].str.endswith("bench-tpu.json")]
    raw = json.loads(path.read_text())["benchmarks"]
    rate = {
        b["params"]["precision"]: b["extra_info"]["flops_per_second"]
        for b in raw
        if b["name"].startswith("test_gemm[tpu-xla-") and b["name"].endswith("-2048x2048x2048]")
    }
    epoch_flops = {
        b["params"]["precision"]: b["extra_info"]["flops"] for b in raw if b["name"].startswith("test_epoch[")
    }
    floor = floor_vs_fastest(run).set_index("precision")
    assert set(floor.index) == {"f32", "bf16"}  # no tf32 on a TPU
    for precision in ("f32", "bf16"):
        assert floor.loc[precision, "floor_s"] == pytest.approx(epoch_flops[precision] / rate[precision])
    assert floor.loc["bf16", "pipeline"] == "sharded, bf16" and floor.loc["f32", "pipeline"] == "scan"
    assert floor.loc["bf16", "x_floor"] == pytest.approx(3.61, abs=0.01)  # 4.90 ms against 1.36 ms
    assert floor.loc["f32", "x_floor"] == pytest.approx(1.70, abs=0.01)  # 11.0 ms against 6.48 ms
    ladder = pipeline_ladder(run).set_index("rung")
    assert ladder.loc["floor, bf16", "epoch_s"] == pytest.approx(floor.loc["bf16", "floor_s"])
    assert ladder.loc["pipeline sharded, bf16", "x_floor"] == pytest.approx(floor.loc["bf16", "x_floor"])
    goal = next(g for g in goals(run) if "floor at its precision" in g["goal"])
    assert "×3.61 the bf16 floor (1.36 ms at 143 TFLOP/s, xla)" in goal["text"]


def test_the_floor_is_the_best_rate_of_the_run_at_each_precision_whatever_the_size():
    """A larger GEMM (an accelerator's peak) raises the floor by being measured; a bf16 row only meets the bf16
    floor."""
    import pandas as pd

    gemm = {"test": "test_gemm", "backend": "tpu", "library": "xla", "iqr": 0.0, "q1": 0.0, "q3": 0.0}
    run = pd.DataFrame(
        [
            {
                "test": "test_epoch",
                "backend": "tpu",
                "flops": 1e12,
                "workers": 0,
                "pipeline": "scan",
                "precision": "bf16",
                "median": 0.01,
            },
            *(
                {
                    **gemm,
                    "shape": f"{n}x{n}x{n}",
                    "m": n,
                    "k": n,
                    "n": n,
                    "flops": 2 * n**3,
                    "precision": "bf16",
                    "median": 2 * n**3 / rate,
                }
                for n, rate in ((2048, 1e14), (8192, 2e14))
            ),
        ]
    )
    table = floors(run).set_index("precision")
    assert list(table.index) == ["bf16"] and table.loc["bf16", "shape"] == "8192x8192x8192"
    assert table.loc["bf16", "floor_s"] == pytest.approx(1e12 / 2e14)
    assert pipeline_ladder(run).set_index("rung").loc["pipeline scan, bf16", "x_floor"] == pytest.approx(2.0)


def test_accelerator_floor_sets_each_precision_against_its_own_fastest_epoch():
    import pandas as pd

    epoch = {"test": "test_epoch", "backend": "gpu", "flops": 4e11, "workers": 0}
    gemm = {
        "test": "test_gemm",
        "backend": "gpu",
        "library": "xla",
        "shape": "2048x2048x2048",
        "m": 2048,
        "k": 2048,
        "n": 2048,
        "flops": 2 * 2048**3,
        "iqr": 0.0,
        "q1": 0.0,
        "q3": 0.0,
    }
    run = pd.DataFrame(
        [
            {**epoch, "pipeline": "scan", "precision": "f32", "median": 2.0},
            {**epoch, "pipeline": "batched", "precision": None, "median": 3.0},  # an older row: f32's
            {**epoch, "pipeline": "batched", "precision": "bf16", "median": 0.5},
            *(
                {**gemm, "precision": p, "median": 2 * 2048**3 / rate}
                for p, rate in (("f32", 4e11), ("bf16", 1.6e12), ("tf32", 8e11))
            ),
        ]
    )
    floor = floor_vs_fastest(run).set_index("precision")
    assert floor.loc["f32", "pipeline"] == "scan" and floor.loc["f32", "x_floor"] == pytest.approx(2.0)
    assert floor.loc["bf16", "pipeline"] == "batched, bf16" and floor.loc["bf16", "x_floor"] == pytest.approx(2.0)
    assert floor.loc["tf32", "floor_s"] == pytest.approx(0.5) and pd.isna(floor.loc["tf32", "pipeline"])


def test_report_writes_every_output_with_every_plot(results_dir, capsys):
    out = results_dir / "report"
    assert main(["report", "--results", str(results_dir), "--out", str(out)]) == 0
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 2 and all(line.startswith("jaxmlp report: warning: skipped ") for line in lines)
    assert "corrupt.json: not readable as JSON" in lines[0] and "foreign.json" in lines[1]
    assert sorted(p.name for p in out.iterdir()) == ["index.html", "results.csv", "samples.csv", "summary.md"]
    page = (out / "index.html").read_text()
    alts = re.findall(r"<img alt='([^']*)'[^>]*src='data:image/png;base64,", page)
    assert alts == [
        "Epoch ladder with the floor of each precision (Fixture CPU, 2 cores)",
        "Loader ladder (Fixture CPU, 2 cores)",
    ]
    assert "src='http" not in page and "<link" not in page and "<script" not in page  # self-contained
    assert page.index("<section id='overview'>") < page.index("<nav>") < page.index("<section id='benchmarks'>")
    md = (out / "summary.md").read_text()
    assert md.index("## Overview") < md.index("## jit and vmap")
    jit = "jit makes the update step faster than eager by ×5.00 at batch 128 (×10.0 at 32)."
    assert f"- **What jit buys (Fixture CPU, 2 cores)**: {jit}" in md and f"| {jit} | bench-cpu.json" in md
    assert "| cpu | f32 | xla | 2048x2048x2048 | 172 GFLOP/s | 1.16 s |" in md  # the matmul: 0.1 s for 2 * 2048^3
    # jit 4 ms, dispatch 0.1, eager 20: speed-up 5; each median with its IQR
    assert "| cpu | 128 | 4.00 ms (IQR 800 µs) | 100 µs (IQR 20.0 µs) | 20.0 ms (IQR 4.00 ms) | ×5.00 |" in md
    # the loader ladder against the one f32 floor of the run (1.16 s), with its precision column
    assert "| cpu | seed | 2 | f32 | 1.25 s (IQR 250 ms) | ×1.07 | ×0.833 |  | - | - | - |  |" in md
    assert "| cpu | batched | 0 | f32 | 10.0 ms (IQR 2.00 ms) | ×0.00859 | ×0.00667 | fastest | 2.00 s (IQR " in md
    assert not re.search(r"\d e[-+]?\d|\de[-+]\d", md)  # never scientific notation
    assert (out / "results.csv").read_text().count("\n") == 26  # header and 25 rows
    printed = captured.out
    assert printed.startswith(f"What jit buys (Fixture CPU, 2 cores): {jit}") and "Report of 25 rows" in printed


def _github_slugs(markdown: str) -> set[str]:
    """The anchors GitHub gives a Markdown file's headings: lower case, punctuation dropped, spaces as hyphens, a
    repeated one numbered."""
    seen: dict[str, int] = {}
    out = set()
    for heading in re.findall(r"^#{1,6} (.+)$", markdown, flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", re.sub(r"<[^>]+>", "", heading).strip().lower()).replace(" ", "-")
        out.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
        seen[slug] = seen.get(slug, 0) + 1
    return out


def test_every_in_page_link_leads_somewhere_in_the_page_and_in_the_markdown(results_dir):
    """Every ``#anchor`` link of index.html names an element's id, and every one of summary.md an anchor it holds
    (``<a id>``) or a heading's GitHub anchor, whichever sections the results fill (here: no profile, so the
    profiles' question has no section to lead to)."""
    shutil.copytree(FIXTURES / "runs", results_dir / "runs")
    shutil.copy(FIXTURES / "bench-tpu.json", results_dir)
    out = results_dir / "report"
    assert main(["report", "--results", str(results_dir), "--out", str(out)]) == 0
    page = (out / "index.html").read_text()
    links, ids = set(re.findall(r"href=['\"]#([^'\"]+)['\"]", page)), set(re.findall(r"\sid=['\"]([^'\"]+)['\"]", page))
    assert {"benchmarks", "matrix", "timeline", "bisection", "scaling"} <= links, links
    assert links <= ids, f"links to no element: {sorted(links - ids)}"
    md = (out / "summary.md").read_text()
    targets = set(re.findall(r"\]\(#([^)]+)\)", md))
    anchors = set(re.findall(r'<a id="([^"]+)"></a>', md)) | _github_slugs(md)
    assert targets <= links, "the Markdown links to a section the page does not"
    assert targets <= anchors, f"links to no anchor: {sorted(targets - anchors)}"
    assert "Where the time goes" in md and "profiles" not in links  # no trace: no section, no link


def test_a_table_wraps_its_words_and_keeps_each_number_with_its_unit():
    import pandas as pd

    from jaxmlp.report import html

    shown = pd.DataFrame(
        {
            "rung": ["pipeline seed_batched, 2 workers", "pipeline scan"],
            "epoch": ["1.63 s (IQR 338 ms)", "1.17 s"],
            "file": ["train-20261202T133000-mnist-seed.json", "-"],
        }
    )
    table = html.frame_html(shown)
    assert "<th class='text'>rung</th><th>epoch</th><th class='text'>file</th>" in table  # words left, numbers right
    assert "<td>1.63\u00a0s (IQR\u00a0338\u00a0ms)</td>" in table  # a number never parted from its unit
    assert "train-<wbr>20261202T133000-<wbr>mnist-<wbr>seed.json" in table  # a long name breaks after its hyphens
    wide = html.frame_html(pd.DataFrame({f"c{i}": ["1"] for i in range(html.DENSE_COLUMNS)}))
    assert wide.startswith("<table class='dense'>")


def test_report_never_overwrites(results_dir, capsys):
    out = results_dir / "report"
    out.mkdir()
    (out / "summary.md").write_text("earlier")
    assert main(["report", "--results", str(results_dir), "--out", str(out)]) == 2
    assert "already exists and results are never overwritten" in capsys.readouterr().err
    assert (out / "summary.md").read_text() == "earlier"
    assert main(["report", "--results", str(results_dir)]) == 0
    assert main(["report", "--results", str(results_dir)]) == 0
    reports = sorted(p.name for p in results_dir.iterdir() if p.name.startswith("report-"))
    assert len(reports) == 2  # a new folder each time
    hidden = [p for p in results_dir.iterdir() if p.name.startswith(".") and not p.name.startswith(INDEX_NAME)]
    assert not hidden  # no half-made folder left (the folder's index is kept)


def test_a_report_that_fails_leaves_nothing(results_dir, monkeypatch):
    from jaxmlp.report import html, write

    def broken(sections, answers):
        raise RuntimeError("rendering failed")

    monkeypatch.setattr(html, "render", broken)
    store = ResultsStore(results_dir)
    before = sorted(p.name for p in results_dir.iterdir())
    with pytest.raises(RuntimeError, match="rendering failed"):
        write.write_report(load(store), store)
    assert sorted(p.name for p in results_dir.iterdir()) == before


def test_empty_or_missing_results(tmp_path, capsys):
    assert main(["report", "--results", str(tmp_path / "none")]) == 2
    assert "does not exist" in capsys.readouterr().err
    with pytest.raises(JaxmlpError, match="does not exist"):
        load(ResultsStore(tmp_path / "none"))
    assert main(["report", "--results", str(tmp_path)]) == 2
    assert "no results in" in capsys.readouterr().err


def test_sections_label_synthetic_data(results_dir):
    results = load(ResultsStore(results_dir))
    results.runs.loc[results.runs["test"] != "train_epoch", "dataset"] = "synthetic"
    sections = build_sections(results)
    assert "synthetic (SYNTHETIC data, not MNIST)" in " ".join(r.note for s in sections for r in s.shown)
