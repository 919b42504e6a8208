"""The sharded pipeline (data-parallel over a mesh, jax.sharding): the same params as one device, on 2 simulated
CPU devices in fresh processes and in 2 processes joined by jax.distributed on 127.0.0.1; scaling across devices and
processes: rows, table, the all-reduce's share of a trace, the older file form."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from conftest import SHARDED_TRAIN, kill_rank_one, scaling_argv

from jaxmlp import registry
from jaxmlp.cli import main
from jaxmlp.errors import EXIT_ERROR, JaxmlpError
from jaxmlp.measure import scaling
from jaxmlp.measure.records import ProcessResult, WorkloadTimes
from jaxmlp.pipelines.sharded_epoch import check_divides
from jaxmlp.results import tables
from jaxmlp.results.schema.bench import BenchmarkDocument
from jaxmlp.results.schema.common import CURRENT, SCALING
from jaxmlp.results.schema.scaling import document, rows_of
from jaxmlp.results.store.frames import benchmark_rows
from jaxmlp.results.store.reading import read_benchmarks
from jaxmlp.results.tables import traces

JOINED = pytest.mark.xdist_group("processes")
"""Processes joined into one run (ports, a timed stop): one after another, with tests/test_mpi.py's."""
FEW_STEPS = 1e-5  # float32: the all-reduce sums the gradient in another order than one device does


def run(args, devices=1, **kwargs):
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=scaling.worker_environment(devices, "cpu"),
        **kwargs,
    )


def test_two_simulated_devices_compute_the_one_device_params():
    settings = scaling.Scaling(devices=2, dataset="synthetic", limit=2000, epochs=2, calls=3)
    done = run(["-m", "jaxmlp.measure.scaling_worker", json.dumps(settings.to_json())], devices=2)
    assert done.returncode == 0, done.stderr
    result = ProcessResult.from_json(json.loads(done.stdout.splitlines()[-1]))
    meta = result.metadata
    assert meta["devices"] == 2 and "--xla_force_host_platform_device_count=2" in meta["xla_flags"]
    assert 0 <= meta["max_relative_difference"] < FEW_STEPS  # measured here: about 1e-7
    assert meta["steps"] == 16 and meta["samples"] == 2000  # 15 full batches sharded, the last (80) replicated
    epoch, step = result.workloads["epoch"], result.workloads["step"]
    assert epoch.compile_seconds > 0 and len(epoch.call_seconds) == 1 and len(step.call_seconds) == 2


HALVES = """
import jax, numpy as np
from jax import random
from jaxmlp import model
from jaxmlp.pipelines.loaders import as_arrays
from jaxmlp.pipelines.steps import slices
from jaxmlp.pipelines.epochs import make_epoch
from jaxmlp.pipelines.mnist import load_arrays

train, _ = load_arrays("synthetic", None, 18432)  # a set where one epoch's reduction-order change grows to ~1e-3
params = model.init_network_params(model.LAYER_SIZES, random.PRNGKey(0))
sharded = make_epoch("sharded", train)(params)
images, labels = as_arrays(train)
targets = np.asarray(model.one_hot(labels, 10))


@jax.jit
def halves(p, x, y):  # one device, the batch's gradient summed as two halves: the all-reduce's order on 2 devices
    g = [jax.grad(model.loss)(p, x[i * 64 : i * 64 + 64], y[i * 64 : i * 64 + 64]) for i in (0, 1)]
    return [(w - 0.01 * (a[0] + b[0]) / 2, c - 0.01 * (a[1] + b[1]) / 2) for (w, c), a, b in zip(p, *g)]


p = params
for s in slices(len(images), 128):
    p = halves(p, images[s], targets[s])
scan = make_epoch("scan", train)(params)
print(model.max_relative_difference(sharded, p), model.max_relative_difference(sharded, scan))
"""


def test_the_sharded_epoch_differs_from_one_device_only_by_the_order_of_the_sum():
    """Two devices against one: over a whole epoch the difference can grow to 1e-3 (how far depends on the CPU's
    kernels: 2e-7 on an AMD EPYC, over 1e-4 on an Intel Xeon), but one device that sums each batch's gradient in two
    halves (the order the all-reduce over 2 devices uses) computes the same params, closer than the plain scan."""
    done = run(["-c", HALVES], devices=2)
    assert done.returncode == 0, done.stderr
    to_halves, to_scan = map(float, done.stdout.split())
    assert to_halves < 1e-6 and to_halves < to_scan < scaling.TOLERANCE


def test_a_batch_that_does_not_split_over_the_devices_is_one_line():
    done = run(
        [
            "-m",
            "jaxmlp",
            "train",
            "--pipeline",
            "sharded",
            "--dataset",
            "synthetic",
            "--batch-size",
            "127",
            "--epochs",
            "1",
            "--backend",
            "cpu",
        ],
        devices=2,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        "jaxmlp train: error: --batch-size 127 does not split evenly over 2 devices: choose a multiple of 2 (e.g. 126)"
    )
    with pytest.raises(Exception, match="--batch-size 100 does not split evenly over 8 devices"):
        check_divides(100, 8)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--processes", "2"], "--processes 2 needs --pipeline sharded"),
        (["--pipeline", "sharded", "--processes", "0"], "--processes must be at least 1, got 0"),
    ],
)
def test_impossible_process_counts(args, said, capsys):
    """Refused before any work: in this process (`main`, as the command runs it)."""
    assert main(["train", "--dataset", "synthetic", *args]) == EXIT_ERROR
    err = capsys.readouterr().err
    assert said in err and err.count("\n") == 1


@JOINED
def test_two_processes_joined_by_jax_distributed_train_like_one(tmp_path, trained_alone):
    """Two processes joined by our launcher train as `trained_alone`, one process, did."""
    one, _ = trained_alone
    out = tmp_path / "train-2.json"
    done = run(["-m", "jaxmlp", *SHARDED_TRAIN, "--processes", "2", "--epochs", "2", "--json", str(out)])
    assert done.returncode == 0, done.stderr
    two, stdout = json.loads(out.read_text())["records"], done.stdout
    assert stdout.count("Epoch 0 in") == 1 and "first 4096 training images" in stdout  # rank 0 speaks
    assert [p.name for p in tmp_path.iterdir()] == ["train-2.json"]  # rank 0 wrote it, once
    assert (two[0]["config_processes"], one[0]["config_processes"]) == (2, 1)
    for a, b in zip(one, two, strict=True):  # 64 steps: the reduction order changes the params by ~1e-7
        assert b["train_loss"] == pytest.approx(a["train_loss"], rel=FEW_STEPS)
        assert b["test_loss"] == pytest.approx(a["test_loss"], rel=FEW_STEPS)
        assert abs(b["train_accuracy"] - a["train_accuracy"]) <= 1e-3


@JOINED
def test_a_process_that_dies_stops_the_others(tmp_path):
    launcher = subprocess.Popen(
        [sys.executable, "-m", "jaxmlp", *SHARDED_TRAIN, "--processes", "2", "--epochs", "1000"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=scaling.worker_environment(1, "cpu"),
    )
    try:
        ranks, code, waited, err = kill_rank_one(launcher, b"JAXMLP_PROCESS_ID")
    finally:
        launcher.kill()
    assert code == 2 and "Traceback" not in err, err
    assert err.strip().splitlines()[-1] == (
        "jaxmlp train: error: process 1 of 2 was killed by signal 9; stopped the others"
    )
    assert waited < 15  # the launcher noticed at once, not after a timeout
    assert not os.path.exists(f"/proc/{ranks[0]}") or Path(f"/proc/{ranks[0]}/stat").read_text().split()[2] == "Z"


def fake(devices, epoch_s, step_s, processes=1, share=None):
    meta = {
        "backend": "cpu",
        "device_kind": "cpu",
        "devices": devices,
        "dataset": "synthetic",
        "samples": 1000,
        "steps": 8,
        "batch_size": 128,
        "flops": 1e9,
        "max_relative_difference": 1e-7,
        "commit": "abc",
        "xla_flags": f"{scaling.FORCE_DEVICES}={devices // processes}",
        "process_count": processes,
        "launcher": "jaxmlp" if processes > 1 else "none",
        "all_reduce_share": share,
    }
    return ProcessResult(
        meta,
        {
            "epoch": WorkloadTimes.of(2.0, [epoch_s * 1.5, epoch_s, epoch_s * 1.1, epoch_s * 0.9]),
            "step": WorkloadTimes.of(0.5, [step_s, step_s, step_s]),
        },
    )


def test_scaling_rows_and_table():
    runs = ((1, 1.0, 1, None), (2, 0.8, 1, 0.5), (4, 1.0, 1, 0.6), (2, 5.0, 2, 0.75))
    rows = [row for n, e, p, share in runs for row in rows_of(fake(n, e, e / 100, p, share))]
    assert [r.name for r in rows[:2]] == ["scaling_epoch[cpu-1-1]", "scaling_step[cpu-1-1]"]
    assert rows[-1].name == "scaling_step[cpu-2-2]" and rows[-1].params == {
        "backend": "cpu",
        "devices": 2,
        "processes": 2,
    }
    assert {registry.benchmark_id(r.name) for r in rows} == {b.id for b in registry.SCALING}
    meta = {"scaling": True, "processes": None}  # a document's metadata never hides a row's own parameter
    frame, _ = benchmark_rows(BenchmarkDocument(tuple(rows), meta, "2026-12-03T00:00:00", "abc", SCALING))
    table = tables.scaling_table(frame).set_index(["devices", "processes"])
    assert table.loc[(1, 1), "epoch_s"] == pytest.approx(1.0) and table.loc[(2, 1), "speedup"] == pytest.approx(1.25)
    assert table.loc[(4, 1), "efficiency"] == pytest.approx(0.25) and table.loc[(2, 1), "step_ms"] == pytest.approx(8.0)
    assert table.loc[(2, 2), "speedup"] == pytest.approx(0.2) and table.loc[(2, 2), "efficiency"] == pytest.approx(0.1)
    assert table.loc[(2, 2), "all_reduce_share"] == 0.75 and pd.isna(table.loc[(1, 1), "all_reduce_share"])
    assert table.loc[(2, 1), "compile_s"] == 2.0 and table.loc[(2, 1), "max_rel_diff"] == 1e-7
    assert tables.is_scaling(frame)


def test_a_version_2_scaling_file_reads_as_one_process_each(tmp_path):
    """Schema 3 named the process count: a version 2 file's rows (one process each, unnamed) read as P = 1."""
    doc = document([fake(1, 1.0, 0.01), fake(2, 0.8, 0.008)]).to_json()
    for row in doc["benchmarks"]:
        del row["params"]["processes"]
        row["name"] = row["name"].removesuffix("-1]") + "]"  # scaling_epoch[cpu-2], as version 2 wrote it
    old = tmp_path / "scaling-20261204T000000-cpu.json"
    old.write_text(json.dumps({**doc, "schema_version": 2}))
    read = read_benchmarks(old)
    assert [b.name for b in read.benchmarks][:2] == ["scaling_epoch[cpu-1-1]", "scaling_step[cpu-1-1]"]
    assert all(b.params["processes"] == 1 for b in read.benchmarks) and read.to_json()["schema_version"] == CURRENT
    frame, _ = benchmark_rows(read)
    assert tables.scaling_table(frame)["processes"].tolist() == [1, 1]


def test_the_all_reduce_share_counts_each_thread_s_outermost_time():
    """Inside an all-reduce its rendezvous is its own time; where the operations run inside the epoch's ``while``
    (one core), the while is the time they cover."""
    line = "tf_XLAEigen/1"
    events = pd.DataFrame(
        [
            ("/host:CPU", line, "fusion.1", 0, 10),
            ("/host:CPU", line, "all-reduce.6", 10, 30),
            ("/host:CPU", line, "Rendezvous", 12, 20),
            ("/host:CPU", line, "fusion.2", 40, 10),
            ("/host:CPU", line + "2", "all-reduce.6", 0, 20),
            ("/host:CPU", line + "2", "fusion.1", 20, 20),
        ],
        columns=["plane", "line", "name", "start_ns", "duration_ns"],
    )
    assert traces.op_share(events, traces.ALL_REDUCE) == pytest.approx(50 / 90)
    inline = pd.DataFrame(
        [
            ("/host:CPU", "tf_XLAPjRtCpuClient/1", name, start, length)
            for name, start, length in (("while.3", 0, 100), ("fusion.1", 1, 9), ("all-reduce.6", 10, 80))
        ],
        columns=["plane", "line", "name", "start_ns", "duration_ns"],
    )
    assert traces.op_share(inline, traces.ALL_REDUCE) == pytest.approx(0.8)
    assert traces.op_share(inline.iloc[0:0], traces.ALL_REDUCE) is None


def test_process_counts_and_the_pairs_they_measure():
    assert scaling.plan((1, 2, 4), (1, 2)) == (
        [(1, 1), (2, 1), (2, 2), (4, 1), (4, 2)],
        ["N = 1, P = 2: left out (the 1 devices do not split evenly over 2 processes)"],
    )
    assert scaling.Scaling(devices=4, processes=2).label == "N = 4, P = 2" and scaling.Scaling(devices=4).label == (
        "N = 4"
    )
    with pytest.raises(JaxmlpError, match="N = 3 devices do not split over P = 2 processes"):
        scaling.Scaling(devices=3, processes=2)


def test_default_device_counts():
    assert scaling.default_devices("cpu", 8) == (1, 2, 4, 8)
    assert scaling.default_devices("gpu", 1) == (1,) and scaling.default_devices("gpu", 6) == (1, 2, 4)
    env = scaling.worker_environment(4, "cpu", {"XLA_FLAGS": "--xla_foo=1 --xla_force_host_platform_device_count=2"})
    assert env["XLA_FLAGS"] == "--xla_foo=1 --xla_force_host_platform_device_count=4" and env["JAX_PLATFORMS"] == "cpu"
    assert scaling.worker_environment(2, "gpu", {})["CUDA_VISIBLE_DEVICES"] == "0,1"
    assert scaling.default_devices("tpu", 1) == (1,) and scaling.default_devices("tpu", 4) == (4,)
    assert scaling.worker_environment(1, "tpu", {"A": "b"}) == {"A": "b"}  # every chip: nothing narrowed


@JOINED
def test_jaxmlp_scaling_across_two_processes_writes_a_results_file_the_report_shows(tmp_path):
    """A real two-process run (our launcher on 127.0.0.1): N = 1, P = 1 and N = 2 in one and two processes, the
    all-reduce's share from process 0's trace, one file the report shows."""
    done = run(scaling_argv(["1", "2"], tmp_path))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[1].startswith("Time limit of each process: 900 s for the first")
    assert lines[2] == "N = 1, P = 2: left out (the 1 devices do not split evenly over 2 processes)"
    assert lines[3].startswith("N = 1: epoch ") and lines[4].startswith("N = 2: epoch ")
    assert lines[5].startswith("N = 2, P = 2: epoch ") and "all-reduce " in lines[5]
    (saved,) = tmp_path.glob("scaling-*-cpu.json")
    assert f"Saved {saved}" in done.stdout and "SYNTHETIC" in done.stdout
    rows = {b.name: b for b in read_benchmarks(saved).benchmarks}
    assert set(rows) == {f"scaling_{w}[cpu-{n}-{p}]" for w in ("epoch", "step") for n, p in ((1, 1), (2, 1), (2, 2))}
    two = rows["scaling_epoch[cpu-2-2]"].extra_info
    assert (two["launcher"], two["global_device_count"], two["devices"]) == ("jaxmlp", 2, 2)
    assert two["xla_flags"].endswith(f"{scaling.FORCE_DEVICES}=1")  # one device a process
    assert 0 < two["all_reduce_share"] < 1 and Path(two["trace"]).is_file()
    assert 0 <= two["max_relative_difference"] < FEW_STEPS
    assert rows["scaling_epoch[cpu-1-1]"].extra_info["all_reduce_share"] is None  # N = 1: nothing to reduce
    assert len(list((tmp_path / "traces").glob("scaling-N2-P*/plugins/profile/*/*.xplane.pb"))) == 2
    assert main(["report", "--results", str(tmp_path), "--out", str(tmp_path / "report")]) == 0  # in this process
    md = (tmp_path / "report" / "summary.md").read_text()
    assert (
        "## Scaling" in md and "not a speed-up" in md and "| cpu | 2 | 2 |" in md and "N = 2, P = 2: efficiency" in md
    )
    assert "alt='Data-parallel scaling (" in (tmp_path / "report" / "index.html").read_text()


def test_scaling_refuses_impossible_settings(capsys):
    """Refused before any worker starts: in this process (`main`, as the command runs it); the TPU's absence is
    seen by its probe, a child process."""
    for bad in (["--devices", "0"], ["--limit", "0"], ["--epochs", "1"]):
        assert main(["scaling", *bad]) == EXIT_ERROR, bad
        err = capsys.readouterr().err
        assert f"{bad[0]} must be at least " in err and err.count("\n") == 1, bad
    with pytest.raises(SystemExit) as exit_:
        main(["scaling", "--epochs", "two"])
    assert exit_.value.code == EXIT_ERROR and "expected a whole number, got 'two'" in capsys.readouterr().err
    if shutil.which("nvidia-smi") is None:
        assert main(["scaling", "--backend", "gpu"]) == EXIT_ERROR
        err = capsys.readouterr().err
        assert "no NVIDIA GPU is visible" in err and "use --backend cpu" in err
    assert main(["scaling", "--backend", "tpu"]) == EXIT_ERROR  # no TPU here (a CI machine has none)
    err = capsys.readouterr().err
    assert "JAX sees no TPU" in err and err.count("\n") == 1


def test_the_profile_of_the_sharded_epoch_shows_its_all_reduce(tmp_path):
    """`jaxmlp profile --pipeline sharded` on 2 simulated devices: the collective is among the top operations."""
    done = run(
        [
            "-m",
            "jaxmlp",
            "profile",
            "--pipeline",
            "sharded",
            "--steps",
            "1",
            "--dataset",
            "synthetic",
            "--limit",
            "1024",  # the epoch traced is one scan: its all-reduce is there at any size
            "--backend",
            "cpu",
            "--logdir",
            str(tmp_path),
        ],
        devices=2,
    )
    assert done.returncode == 0, done.stderr
    from jaxmlp.results.tables.traces import capture_summary

    (xplane,) = tmp_path.glob("sharded-*/plugins/profile/*/*.xplane.pb")
    ops = capture_summary(xplane).top_ops
    assert ops["op"].str.startswith("all-reduce").any(), ops
