"""Benchmark JSON into a DataFrame, and the tables' derived numbers, from a small fixture file."""

import json
from pathlib import Path

import pandas as pd
import pytest

from jaxmlp.cli import main
from jaxmlp.errors import JaxmlpError
from jaxmlp.results import tables
from jaxmlp.results.schema.common import CURRENT
from jaxmlp.results.schema.machines import MACHINE
from jaxmlp.results.store.frames import benchmark_rows, query
from jaxmlp.results.store.reading import read_benchmarks

FIXTURE = Path(__file__).parent / "fixtures" / "bench-cpu.json"


@pytest.fixture(scope="module")
def frames():
    return benchmark_rows(read_benchmarks(FIXTURE), str(FIXTURE))


def test_one_row_per_benchmark_with_parameters_metadata_and_stats(frames):
    rows, samples = frames
    assert len(rows) == 22
    row = rows[rows["name"] == "test_update[cpu-128-jit]"].iloc[0]
    assert (row.backend, row.batch_size, row.variant, row.test) == ("cpu", 128, "jit", "test_update")
    assert (row.jax, row.jaxlib, row.torch, row.commit, row.host) == (
        "0.10.2",
        "0.10.2",
        "2.14.1",
        "0123456789abcdef",
        "fixture-host",
    )
    assert (row["median"], row.rounds, row.compile_seconds) == (0.004, 3, 0.5)
    assert len(samples) == 22 * 3 and set(samples.columns) == {"file", "group", "name", "round", "seconds"}


def test_jit_vs_eager(frames):
    table = tables.jit_vs_eager(frames[0]).set_index("batch_size")
    assert table.loc[32, "jit_speedup"] == pytest.approx(10.0)
    assert table.loc[128, "jit_speedup"] == pytest.approx(5.0)
    assert table.loc[128, "dispatch_ms"] == pytest.approx(0.1)


def test_vmap_vs_loop(frames):
    table = tables.vmap_vs_loop(frames[0]).set_index("batch_size")
    assert table.loc[128, "vmap_speedup"] == pytest.approx(64.0)
    assert table.loc[128, "jit_vmap_speedup"] == pytest.approx(256.0)
    assert table.loc[1, "vmap_speedup"] == pytest.approx(2.0)


def test_files_from_before_the_loader_ladder_read_under_the_names_now(frames):
    """The fixture is written as before: test_loader[W], test_arrays, test_epoch[cpu-PIPELINE] (f32 then)."""
    names = set(frames[0]["name"])
    now = {"test_loader[seed-0]", "test_loader[seed-2]", "test_loader[batched-0]", "test_epoch[cpu-scan-0-f32]"}
    assert now <= names
    assert not {"test_arrays", "test_loader[0]", "test_epoch[cpu-scan]", "test_epoch[cpu-scan-0]"} & names
    arrays = frames[0][frames[0]["name"] == "test_loader[batched-0]"].iloc[0]
    assert (arrays.test, arrays.pipeline, arrays.workers, arrays["median"]) == ("test_loader", "batched", 0, 0.01)


FLOOR_S = 2e11 / (2 * 2048**3 / 0.1)
"""The fixture's f32 floor: its epoch's 2e11 FLOPs at the rate of its one measured product (2048^3 in 0.1 s)."""


def test_loader_ladder_ratios_to_the_floor_and_scan_of_the_same_run(frames):
    table = tables.loader_ladder(frames[0])
    assert list(zip(table["pipeline"], table["workers"])) == [("seed", 0), ("seed", 1), ("seed", 2), ("batched", 0)]
    assert set(table["precision"]) == {"f32"}  # every row says its precision
    seed = table.iloc[0]
    assert (seed.backend, seed.loader_s, seed.loader_iqr_s, seed.epoch_s) == ("cpu", 2.0, 0.4, 3.0)
    assert (seed.loader_x_floor, seed.epoch_x_floor) == pytest.approx((2.0 / FLOOR_S, 3.0 / FLOOR_S))
    assert (seed.loader_x_scan, seed.epoch_x_scan) == pytest.approx((2.0 / 1.5, 3.0 / 1.5))  # scan 1.5 s
    assert list(table["loader_best"]) == ["", "", "", tables.BEST]
    assert list(table["epoch_best"]) == ["", "", "", tables.BEST]
    assert table["epoch_s"].isna().tolist() == [False, True, True, False]  # no training epoch with workers here
    assert tables.best_workers(frames[0]) == {"seed": 2}


def test_a_bf16_epoch_meets_the_bf16_floor_and_the_bf16_scan(frames):
    rows = frames[0]
    epochs = rows[rows["test"] == "test_epoch"]
    bf16 = epochs.assign(precision="bf16", median=epochs["median"] / 2, name=epochs["name"] + "-bf16")
    gemm = pd.DataFrame([gemm_row("torch", "bf16", SQUARE, 2 * 2048**3 / 400e9)])
    run = pd.concat([rows, bf16, gemm], ignore_index=True)
    floors = tables.floors(run).set_index("precision")
    assert floors.loc["bf16", "gflop_per_s"] == pytest.approx(400) and floors.loc["bf16", "floor_s"] == 0.5
    ladder = tables.loader_ladder(run)
    seed = ladder[(ladder["pipeline"] == "seed") & (ladder["workers"] == 0)].set_index("precision")
    assert seed.loc["bf16", "epoch_x_floor"] == pytest.approx(1.5 / 0.5)  # its own precision's floor
    assert seed.loc["bf16", "epoch_x_scan"] == pytest.approx(2.0)  # against the bf16 scan
    assert pd.isna(seed.loc["bf16", "loader_s"])  # input alone is the host's: on the f32 row only
    rungs = tables.pipeline_ladder(run).set_index("rung")
    assert rungs.loc["pipeline seed, bf16", "x_floor"] == pytest.approx(3.0)
    assert rungs.loc["pipeline seed", "x_floor"] == pytest.approx(3.0 / FLOOR_S)


def test_the_best_is_marked_with_those_its_quartiles_overlap():
    from jaxmlp.results.tables.base import mark_best

    medians, q1, q3 = pd.Series([1.5, 1.25, 2.0]), pd.Series([1.35, 1.125, 1.8]), pd.Series([1.65, 1.375, 2.2])
    assert list(mark_best(medians, q1, q3)) == [tables.TIED, tables.BEST, ""]


def test_pipeline_ladder(frames):
    ladder = tables.pipeline_ladder(frames[0])
    assert tables.FLOOR == "floor, f32"
    assert list(ladder["rung"]) == [
        tables.FLOOR,
        tables.STEP_GEMMS,
        "pipeline scan",
        "pipeline batched",
        "pipeline prefetch",
        "pipeline seed",
    ]
    assert list(ladder["x_floor"]) == pytest.approx([1.0, *(x / FLOOR_S for x in (1.2, 1.5, 2.0, 2.5, 3.0))])
    assert ladder.iloc[2]["samples_per_s"] == pytest.approx(40000)
    assert (ladder.iloc[0].library, ladder.iloc[0].gflop_per_s) == ("xla", pytest.approx(2 * 2048**3 / 0.1 / 1e9))
    assert set(ladder["precision"]) == {"f32"}


def test_the_floor_is_the_best_rate_of_any_library_at_that_precision(frames):
    run = pd.concat([frames[0], GEMMS], ignore_index=True)
    floors = tables.floors(run).set_index("precision")
    assert floors.loc["f32", "library"] == "torch" and floors.loc["f32", "gflop_per_s"] == pytest.approx(300)
    assert floors.loc["bf16", "library"] == "torch" and floors.loc["bf16", "gflop_per_s"] == pytest.approx(1800)
    ladder = tables.pipeline_ladder(run)
    assert list(ladder["rung"][:3]) == ["floor, f32", "floor, bf16", tables.STEP_GEMMS]
    assert ladder.iloc[0].epoch_s == pytest.approx(2e11 / 300e9)
    (f32,) = tables.ladder_headlines(ladder)
    assert f32["precision"] == "f32" and f32["fastest"].rung == "pipeline scan" and f32["floor"].library == "torch"
    line = tables.floor_line(next(tables.floors(run).itertuples()))
    assert line == "cpu f32 floor: 667 ms an epoch at 300 GFLOP/s (torch, 2048x2048x2048)"


def gemm_row(library, precision, shape, median, round_calls=1, backend="cpu"):
    """A floor product's row as read: one product's share of a round of ``round_calls`` (schema 4)."""
    m, k, n = (int(x) for x in shape.split("x"))
    return {
        "test": "test_gemm",
        "name": f"test_gemm[{backend}-{library}-{precision}-{shape}]",
        "backend": backend,
        "library": library,
        "precision": precision,
        "shape": shape,
        "m": m,
        "k": k,
        "n": n,
        "round_calls": round_calls,
        "flops": 2 * m * k * n,
        "median": median,
        "iqr": median / 10,
        "q1": median * 0.95,
        "q3": median * 1.05,
    }


SQUARE = "2048x2048x2048"
GEMMS = pd.DataFrame(
    [
        gemm_row("xla", "f32", SQUARE, 2 * 2048**3 / 250e9),
        gemm_row("torch", "f32", SQUARE, 2 * 2048**3 / 300e9),
        gemm_row("numpy", "f32", SQUARE, 2 * 2048**3 / 200e9),
        gemm_row("xla", "bf16", SQUARE, 2 * 2048**3 / 1250e9),
        gemm_row("torch", "bf16", SQUARE, 2 * 2048**3 / 1800e9),
        gemm_row("xla", "f32", "128x784x512", 2 * 128 * 784 * 512 / 200e9, round_calls=20),
        gemm_row("torch", "f32", "128x784x512", 2 * 128 * 784 * 512 / 100e9, round_calls=20),
    ]
)


def test_gemm_rates_per_library_precision_and_shape_with_the_best_marked():
    table = tables.gemm_rates(GEMMS)
    assert list(zip(table["shape"], table["precision"], table["library"])) == [
        (SQUARE, "f32", "xla"),
        (SQUARE, "f32", "torch"),
        (SQUARE, "f32", "numpy"),
        (SQUARE, "bf16", "xla"),
        (SQUARE, "bf16", "torch"),
        ("128x784x512", "f32", "xla"),
        ("128x784x512", "f32", "torch"),
    ]
    assert list(table["gflop_per_s"]) == pytest.approx([250, 300, 200, 1250, 1800, 200, 100])
    assert list(table["best"]) == ["", tables.BEST, "", "", tables.BEST, tables.BEST, ""]
    near = tables.gemm_rates(
        pd.concat([GEMMS.iloc[1:], pd.DataFrame([gemm_row("xla", "f32", SQUARE, 2 * 2048**3 / 290e9)])])
    )
    assert list(near["best"])[:2] == [tables.TIED, tables.BEST]  # 290 against 300 GFLOP/s: their quartiles meet
    assert table.iloc[5].gemm_ms == pytest.approx(2 * 128 * 784 * 512 / 200e9 * 1e3)  # a product, not a round of 20
    assert table["bf16_speedup"].tolist()[3:5] == pytest.approx([5.0, 6.0])
    assert table["bf16_speedup"].drop(index=[3, 4]).isna().all()
    assert tables.gemm_rates(pd.DataFrame({"test": ["test_epoch"]})).empty


def test_cli_summary_saves_a_new_file_each_time(tmp_path, capsys):
    assert main(["summary", str(FIXTURE), "--save", str(tmp_path)]) == 0
    assert main(["summary", str(FIXTURE), "--save", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "input alone is fastest with batched (10.0 ms an epoch)" in out and "pipeline scan" in out
    saved = sorted(p.name for p in tmp_path.iterdir())
    assert saved == ["bench-20261201T100000-cpu-2.json", "bench-20261201T100000-cpu.json"]
    copy, original = json.loads((tmp_path / saved[0]).read_text()), json.loads(FIXTURE.read_text())
    assert (copy.pop("kind"), copy.pop("schema_version")) == ("bench", CURRENT)  # what every file written now says
    for key in MACHINE:  # added by the upgrade (a file before version 5: its machine told from its metadata)
        copy["machine_info"]["jaxmlp"].pop(key)
    assert {k: v for k, v in copy.items() if k != "benchmarks"} == {
        k: v for k, v in original.items() if k != "benchmarks"
    }
    assert read_benchmarks(tmp_path / saved[0]).benchmarks == read_benchmarks(FIXTURE).benchmarks  # names now


@pytest.mark.parametrize(
    ("content", "message"),
    [("{not json", "not readable as JSON"), ('{"a": 1}', "not a pytest-benchmark results file")],
)
def test_corrupt_or_foreign_files(tmp_path, content, message, capsys):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(JaxmlpError, match=message):
        read_benchmarks(path)
    assert main(["summary", str(path)]) == 2
    err = capsys.readouterr().err  # one line: what is wrong, and what `summary` reads
    assert str(path) in err and "`jaxmlp summary` reads a pytest-benchmark" in err and err.count("\n") == 1
    assert path.read_text() == content  # never modified


def test_matmul_rate(frames):
    (row,) = tables.matmul_rate(frames[0]).to_dict("records")
    median = frames[0].set_index("name").loc["test_matmul[cpu]", "median"]
    assert row["backend"] == "cpu" and row["matmul_ms"] == pytest.approx(median * 1e3)
    assert row["gflop_per_s"] == pytest.approx(2 * 2048**3 / median / 1e9) and row["precision"] == "f32"  # a CPU's
    tpu = frames[0].assign(backend="tpu")
    (row,) = tables.matmul_rate(tpu).to_dict("records")  # an older accelerator run: JAX's default, not f32
    assert row["precision"] == "default" and tables.floors(tpu[tpu["test"] == "test_matmul"]).empty
    (row,) = tables.matmul_rate(tpu.assign(round_calls=1.0)).to_dict("records")  # timed since f32 is highest
    assert row["precision"] == "f32"


def test_a_file_without_one_variant_shows_it_empty(frames):
    rows = frames[0][frames[0]["variant"] != "jit-dispatch"]
    table = tables.jit_vs_eager(rows)
    assert table["dispatch_ms"].isna().all() and table.set_index("batch_size").loc[32, "jit_speedup"] == 10.0


def test_an_accelerators_goals_are_read_from_its_own_run():
    path = Path(__file__).parent / "fixtures" / "bench-tpu.json"
    rows, _ = benchmark_rows(read_benchmarks(path), str(path))
    epochs = rows[rows["test"] == "test_epoch"].sort_values("median")
    fastest = epochs.iloc[0]  # the sharded bf16 epoch
    square = rows[(rows["test"] == "test_gemm") & (rows["library"] == "xla") & (rows["shape"] == "2048x2048x2048")]
    rate = square.set_index("precision").loc[fastest.precision, "flops_per_second"]
    x = fastest["median"] / (epochs[epochs["precision"] == "bf16"]["flops"].median() / rate)  # bf16's own FLOP count

    goals = {g["goal"]: g for g in tables.goals(rows) if g["backend"] == "tpu"}
    (seed,) = (g for name, g in goals.items() if "than the tutorial's seed" in name)
    assert seed["met"] is None and "no seed epoch in this run" in seed["text"]  # no torchvision on a TPU host
    (floor,) = (g for name, g in goals.items() if "floor at its precision" in name)
    assert x == pytest.approx(3.61, abs=0.01)  # the run's own: 4.90 ms against 1.36 ms at 143 TFLOP/s
    assert floor["met"] is False and "×3.61 the bf16 floor" in floor["text"] and "missed by ×1.20" in floor["text"]

    batched = epochs[(epochs["pipeline"] == "batched") & (epochs["precision"] == "f32")]
    slow_seed = batched.assign(pipeline="seed", median=fastest["median"] * 60)  # the tutorial's: f32, no workers
    goals = {g["goal"]: g for g in tables.goals(pd.concat([rows, slow_seed])) if g["backend"] == "tpu"}
    (seed,) = (g for name, g in goals.items() if "than the tutorial's seed" in name)
    assert seed["met"] is True and "×60" in seed["text"]
    assert not [g for g in tables.goals(rows) if g["backend"] == "cpu" and "seed on this device" in g["goal"]]
    assert {g["group"] for g in tables.goals(rows) if g["backend"] == "tpu"} == {"Goals: the accelerator"}

    # written as rounds of 64 products (schema 3), read as one product's share of its round
    raw = json.loads(path.read_text())
    (written,) = (b for b in raw["benchmarks"] if b["name"] == "test_matmul[tpu]")
    matmul = rows[rows["test"] == "test_matmul"].iloc[0]
    assert written["extra_info"]["calls"] == matmul["round_calls"] == 64 and "calls" not in rows
    assert matmul["median"] == pytest.approx(written["stats"]["median"] / 64)
    assert matmul["flops_per_second"] == pytest.approx(matmul["flops"] / matmul["median"], rel=0.05)
    assert matmul["device_kind"] == "TPU v5 lite"  # the benchmark's own, not the run's None
    assert tables.benchmark_medians(rows)["matmul"] == matmul["median"]


def test_the_bf16_steps_two_forms_each_against_the_faster():
    path = Path(__file__).parent / "fixtures" / "ops" / "bench-20261206T012031-tpu.json"
    runs, _ = benchmark_rows(read_benchmarks(path), str(path))
    table = tables.bf16_step_table(runs).set_index("bf16_step")
    assert table["x_faster"].min() == 1.0 and table["x_faster"].max() > 1.0
    assert table.loc[table["x_faster"].idxmin(), "trains_with"] == "yes"  # the TPU trains with its faster form


def test_each_epoch_against_the_bound_of_what_its_steps_must_do():
    """The TPU ladder run: compute (FLOPs at the floor), memory (the parameters read and written once a step, once
    an epoch for the Pallas kernel, and the batches read, at the STREAM bandwidth) and the loop's own cost (an empty
    scan a step over the scan's iterations), added; a run without the empty scan says it was not measured."""
    import math

    from jaxmlp import registry
    from jaxmlp.results.tables import roofline

    path = Path(__file__).parent / "fixtures" / "ops" / "bench-20261206T012031-tpu.json"
    runs, _ = benchmark_rows(read_benchmarks(path), str(path))
    bandwidth = query(runs, registry.BANDWIDTH)
    rate = float((bandwidth["bytes"] / bandwidth["median"]).max())
    table = tables.epoch_roofline(runs).set_index(["pipeline", "precision"])
    scan, pallas = table.loc[("scan", "bf16")], table.loc[("pallas", "bf16")]
    params = 2 * 4 * roofline.PARAMETERS  # float32 parameters, read and written
    batches = 60000 * (784 * 2 + 4 * 10)  # bf16 images and float32 one-hot labels, read once
    assert roofline.PARAMETERS == 784 * 512 + 512 + 512 * 512 + 512 + 512 * 10 + 10
    assert scan.memory_s == pytest.approx((469 * params + batches) / rate)
    assert pallas.memory_s == pytest.approx((params + batches) / rate)  # the kernel keeps them on chip
    assert scan.binds == "memory" and pallas.binds == "compute" and pallas.bound_s == pallas.compute_s
    assert math.isnan(scan.loop_s) and scan.loop == roofline.LOOP_NOT_MEASURED and scan.bound_s == scan.memory_s
    assert table.loc[("seed", "f32")].loop == roofline.LOOP_HOST and pallas.loop == roofline.LOOP_KERNEL
    # The same run with an empty scan of 469 steps measured (a made-up 0.5 ms, 1.07 µs a step): the scan's loop term
    # is its 235 iterations (unrolled twice) at that cost, added to its bound.
    loop = (
        runs[runs["test"] == registry.BANDWIDTH.id]
        .iloc[:1]
        .assign(test=registry.EMPTY_SCAN.id, name="test_empty_scan[tpu]", median=5e-4, steps=469)
    )
    measured = tables.epoch_roofline(pd.concat([runs, loop], ignore_index=True)).set_index(["pipeline", "precision"])
    scan = measured.loc[("scan", "bf16")]
    assert scan.loop == roofline.LOOP_MEASURED and scan.loop_s == pytest.approx(235 * 5e-4 / 469)
    assert scan.bound_s == pytest.approx(scan.memory_s + scan.loop_s) and scan.x_bound == scan.epoch_s / scan.bound_s
    assert math.isnan(measured.loc[("pallas", "bf16")].loop_s)  # its loop is the kernel's own
