"""`jaxmlp tta`: a real run on MNIST (a few thousand images, a low target), its file in the store, its summary; a
target never reached says so."""

import json

import pytest
from test_cli import run_cli

from jaxmlp.errors import JaxmlpError
from jaxmlp.measure.tta import TtaConfig, parts
from jaxmlp.pipelines import data
from jaxmlp.results import tables
from jaxmlp.results.frames import load
from jaxmlp.results.schema import parse
from jaxmlp.results.store import ResultsStore


def test_parts_cover_the_split_in_order():
    split = data.SyntheticMNIST(train=True, size=1000, transform=data.FlattenAndCast())
    cut = parts(split, 128, 3)  # 384 images a part: 384, 384, 232
    assert [len(p.data) for p in cut] == [384, 384, 232]
    assert (cut[1].data[0] == split.data[384]).all() and (cut[2].targets[-1] == split.targets[-1]).all()
    assert parts(split, 128, None) == [split] and parts(split, 128, 100) == [split]


def test_bad_settings_are_one_line():
    with pytest.raises(JaxmlpError, match="--target 1.5"):
        TtaConfig(target=1.5)
    with pytest.raises(JaxmlpError, match="--runs"):
        TtaConfig(runs=0)


def test_a_real_run_reaches_a_low_target_and_is_stored(mnist_dir, tmp_path):
    out = run_cli(
        "tta",
        "--target",
        "0.6",
        "--runs",
        "2",
        "--limit",
        "2048",
        "--pipeline",
        "scan",
        "--precision",
        "f32",
        "--precision",
        "bf16",
        "--eval-every",
        "8",
        "--data-dir",
        str(mnist_dir),
        "--out",
        str(tmp_path),
    )
    assert out.returncode == 0, out.stderr
    files = list(tmp_path.glob("tta-*-mnist.json"))
    assert len(files) == 1
    doc = parse(json.loads(files[0].read_text()))
    assert {(r["pipeline"], r["precision"], r["seed"]) for r in doc.runs} == {
        ("scan", p, s) for p in ("f32", "bf16") for s in (0, 1)
    }
    for run in doc.runs:
        assert run["reached"] and run["best_accuracy"] >= 0.6
        first = next(e for e in run["evaluations"] if e["accuracy"] >= 0.6)
        assert run["seconds"] == first["seconds"]  # the first evaluation at the target stops the clock
        parts_sum = run["data_seconds"] + run["compile_seconds"] + run["train_seconds"] + run["eval_seconds"]
        assert parts_sum <= run["seconds"] + 1e-6  # every part inside the run's wall time
        assert run["steps"] % 8 == 0 and run["evaluations"][0]["steps"] == 8
    table = tables.tta_table(load(ResultsStore(tmp_path)).tta)
    assert list(table["reached"]) == [2, 2] and set(table["precision"]) == {"f32", "bf16"}
    assert "2 of 2 runs reached it" in out.stdout
    summary = run_cli("summary", str(files[0]))
    assert summary.returncode == 0 and "scan bf16: 60.0% in" in summary.stdout


def test_a_target_never_reached_says_so(mnist_dir, tmp_path):
    out = run_cli(
        "tta",
        "--target",
        "0.999",
        "--runs",
        "1",
        "--limit",
        "1024",
        "--max-epochs",
        "1",
        "--data-dir",
        str(mnist_dir),
        "--out",
        str(tmp_path),
    )
    assert out.returncode == 0, out.stderr
    assert "scan f32: never reached 99.9% in 1 run(s)" in out.stdout
    run = parse(json.loads(next(tmp_path.glob("tta-*.json")).read_text())).runs[0]
    assert not run["reached"] and run["seconds"] is None and run["epochs"] == 1


def test_tf32_on_the_cpu_is_one_line(tmp_path):
    out = run_cli(
        "tta",
        "--precision",
        "tf32",
        "--backend",
        "cpu",
        "--dataset",
        "synthetic",
        "--limit",
        "256",
        "--out",
        str(tmp_path),
    )
    assert out.returncode != 0 and "--precision tf32 needs a GPU backend" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
