"""`jaxmlp tta`: a real run on MNIST (a few thousand images, a low target), its file in the store, its summary; a
target never reached says so."""

import json

import pandas as pd
import pytest

from jaxmlp.cli import main
from jaxmlp.errors import EXIT_ERROR, EXIT_FAILED, JaxmlpError
from jaxmlp.flows.tta import short_line
from jaxmlp.measure.tta import TtaConfig, TtaRun, parts, short_of_target
from jaxmlp.pipelines import data
from jaxmlp.results import tables
from jaxmlp.results.schema import parse
from jaxmlp.results.store.frames import load
from jaxmlp.results.store.writing import ResultsStore


def test_parts_cover_the_split_in_order():
    split = data.SyntheticMNIST(train=True, size=1000, transform=data.FlattenAndCast())
    cut = parts(split, 128, 3)  # 384 images a part: 384, 384, 232
    assert [len(p.data) for p in cut] == [384, 384, 232]
    assert (cut[1].data[0] == split.data[384]).all() and (cut[2].targets[-1] == split.targets[-1]).all()
    assert parts(split, 128, None) == [split] and parts(split, 128, 100) == [split]
    cut = parts(split, 128, 2)  # 256 a part, and a tail of 232 - 3 x 256 = 232: a whole batch at least
    assert [len(p.data) for p in cut] == [256, 256, 256, 232]
    cut = parts(split, 100, 3)  # 300 a part, and a tail of 100 images: a whole batch
    assert [len(p.data) for p in cut] == [300, 300, 300, 100]
    cut = parts(split, 128, 7)  # 896 a part, and a tail of 104, shorter than a batch: the last batch before it
    assert [len(p.data) for p in cut] == [1000] and (cut[0].data == split.data).all()


def test_a_tail_shorter_than_a_batch_is_trained_as_the_last_batch(tmp_path, capsys):
    """In this process (`main`, as the command runs it): what it checks is in the file the run writes."""
    argv = ["tta", "--dataset", "synthetic", "--limit", "2000", "--eval-every", "5", "--runs", "1"]
    assert main([*argv, "--max-epochs", "1", "--target", "0.01", "--out", str(tmp_path)]) == 0, capsys.readouterr().err
    run = parse(json.loads(next(tmp_path.glob("tta-*.json")).read_text())).runs[0]
    assert run["reached"] and run["evaluations"][0]["steps"] == 5


def test_more_than_half_the_runs_must_reach_the_target():
    def runs(*reached):
        return [TtaRun("scan", "f32", seed, 0.97, reached=r) for seed, r in enumerate(reached)]

    assert short_of_target(runs(True)) == [] and short_of_target(runs(True, True, False)) == []
    assert short_of_target(runs(False)) == ["scan f32: 0 of 1 run"]
    assert short_of_target(runs(True, False)) == ["scan f32: 1 of 2 runs"]  # the median of the two is no time
    both = [*runs(True), TtaRun("scan", "bf16", 0, 0.97)]
    assert short_of_target(both) == ["scan bf16: 0 of 1 run"]


def test_bad_settings_are_one_line():
    with pytest.raises(JaxmlpError, match="--target 1.5"):
        TtaConfig(target=1.5)
    with pytest.raises(JaxmlpError, match="--runs"):
        TtaConfig(runs=0)


def test_a_real_run_reaches_a_low_target_and_is_stored(mnist_dir, tmp_path, capsys):
    """In this process (`main`, as the command runs it: the runs, the clock and the file are the test, not a process
    start; tests/test_cli.py starts a real one)."""
    argv = ["tta", "--target", "0.6", "--runs", "2", "--limit", "2048", "--pipeline", "scan"]
    argv += ["--precision", "f32", "--precision", "bf16", "--eval-every", "8"]
    code = main([*argv, "--data-dir", str(mnist_dir), "--out", str(tmp_path)])
    out = capsys.readouterr()
    assert code == 0, out.err
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
    assert "2 of 2 runs reached it" in out.out
    assert main(["summary", str(files[0])]) == 0  # read in this process: the run was a real one
    assert "scan bf16: 60.0% in" in capsys.readouterr().out


def test_a_target_never_reached_says_so(mnist_dir, tmp_path, capsys):
    argv = ["tta", "--target", "0.999", "--runs", "1", "--limit", "1024", "--max-epochs", "1"]
    code = main([*argv, "--data-dir", str(mnist_dir), "--out", str(tmp_path)])  # in this process
    out = capsys.readouterr()
    assert code == EXIT_FAILED, out.err  # nothing asked for was measured: no time to the target
    assert "scan f32: never reached 99.9% in 1 run (best test accuracy " in out.out
    assert " after 1 epoch)" in out.out
    assert out.err.splitlines() == [
        "jaxmlp tta: no run reached 99.9% within 1 epoch: give them more --max-epochs or set a lower --target"
    ]
    run = parse(json.loads(next(tmp_path.glob("tta-*.json")).read_text())).runs[0]
    assert not run["reached"] and run["seconds"] is None and run["epochs"] == 1


def test_some_runs_short_of_the_target_say_which():
    config = TtaConfig(target=0.97, runs=2, precisions=("f32", "bf16"), max_epochs=3)
    runs = [
        TtaRun("scan", p, seed, 0.97, reached=(p == "f32" or seed == 0)) for seed in (0, 1) for p in ("f32", "bf16")
    ]
    assert short_line(config, runs) == (
        "at most half the runs reached 97.0% within 3 epochs (scan bf16: 1 of 2 runs), so no median time to it: "
        "give them more --max-epochs or set a lower --target"
    )
    assert short_line(config, [r for r in runs if r.precision == "f32"]) is None


def test_tf32_on_the_cpu_is_one_line(tmp_path, capsys):
    """Refused before any work: in this process (`main`, as the command runs it)."""
    argv = ["tta", "--precision", "tf32", "--backend", "cpu", "--dataset", "synthetic", "--limit", "256"]
    assert main([*argv, "--out", str(tmp_path)]) == EXIT_ERROR
    err = capsys.readouterr().err
    assert "--precision tf32 needs a GPU backend" in err and len(err.strip().splitlines()) == 1


def test_a_median_time_stands_only_where_more_than_half_reached_the_target():
    """The table, its line and the command's exit read one rule: at most half reaching the target leaves no median
    time (those that did are named, with their range)."""
    runs = [
        TtaRun("scan", "f32", seed, 0.97, reached=seed == 0, seconds=4.0 if seed == 0 else None) for seed in range(4)
    ]
    runs += [
        TtaRun("scan", "bf16", seed, 0.97, reached=seed < 3, seconds=3.0 + seed if seed < 3 else None)
        for seed in range(4)
    ]
    frame = pd.DataFrame([{**r.to_json(), "file": "t.json", "best_accuracy": 0.975} for r in runs])
    table = tables.tta_table(frame).set_index("precision")
    assert pd.isna(table.loc["f32", "tta_s"]) and table.loc["bf16", "tta_s"] == 4.0
    f32 = tables.tta_line(next(r for r in tables.tta_table(frame).itertuples() if r.precision == "f32"))
    assert (
        f32 == "scan f32: 97.0% reached by 1 of 4 runs: at most half, so no median time to it (those that did: 4.00 s)"
    )
    assert short_of_target(runs) == ["scan f32: 1 of 4 runs"]
