"""Under a real Open MPI `mpirun`, jax.distributed's own cluster detection joins jaxmlp's processes into one run: one
mesh over both processes' devices, one speaker, one results file; a pipeline that would train N copies, and a rank
that dies, each end in one line. Skipped where `mpirun` is absent (`apt-get install openmpi-bin`)."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import SHARDED_TRAIN

from jaxmlp.measure import scaling

pytestmark = [
    pytest.mark.skipif(shutil.which("mpirun") is None, reason="no mpirun: `apt-get install openmpi-bin`"),
    pytest.mark.xdist_group("processes"),
]  # as tests/test_sharded.py: one after another

FEW_STEPS = 1e-5  # as tests/test_sharded.py: float32, the all-reduce sums the gradient in another order
TRAIN = ["-m", "jaxmlp", "train", "--dataset", "synthetic", "--limit", "4096", "--backend", "cpu"]


def environment():
    env = scaling.worker_environment(1, "cpu")  # one CPU device a process, as the sharded tests use
    return {
        **env,
        "OMPI_ALLOW_RUN_AS_ROOT": "1",
        "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",  # CI runs as root
        "OMPI_MCA_rmaps_base_oversubscribe": "1",
    }


def mpirun(args, **kwargs):
    return subprocess.run(
        ["mpirun", "-n", "2", sys.executable, *args],
        capture_output=True,
        text=True,
        timeout=240,
        env=environment(),
        **kwargs,
    )


def test_two_ranks_train_as_one_run_and_one_file_is_written(tmp_path, trained_alone):
    """Two ranks train as one process on one device did (`trained_alone`: its first epoch)."""
    out = tmp_path / "out"
    out.mkdir()
    done = mpirun(["-m", "jaxmlp", *SHARDED_TRAIN, "--epochs", "1", "--json", str(out)])
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("Epoch 0 in") == 1 and done.stdout.count("Wrote 1 epoch record ") == 1  # rank 0 speaks
    (written,) = out.iterdir()  # once, by rank 0
    two = json.loads(written.read_text())["records"]
    assert {
        k: two[0][k] for k in ("launcher", "process_count", "process_index", "process_ids", "global_device_count")
    } == {
        "launcher": "Open MPI",
        "process_count": 2,
        "process_index": 0,
        "process_ids": [0, 1],
        "global_device_count": 2,
    }
    alone, stdout = trained_alone
    for a, b in zip(alone[:1], two, strict=True):
        assert b["train_loss"] == pytest.approx(a["train_loss"], rel=FEW_STEPS)
        assert b["test_loss"] == pytest.approx(a["test_loss"], rel=FEW_STEPS)
    assert stdout and alone[0]["launcher"] == "none"


def test_a_pipeline_that_would_train_copies_is_one_line_each(tmp_path):
    done = mpirun([*TRAIN, "--pipeline", "scan", "--epochs", "1"])
    assert done.returncode != 0 and "Traceback" not in done.stderr
    said = [line for line in done.stderr.splitlines() if line.startswith("jaxmlp train: error: ")]
    assert said and all("only --pipeline sharded joins several processes into one run" in line for line in said)


def test_a_rank_that_dies_stops_the_other(tmp_path):
    job = subprocess.Popen(
        ["mpirun", "-n", "2", sys.executable, *TRAIN, "--pipeline", "sharded", "--epochs", "1000"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(),
        start_new_session=True,
    )
    try:
        for line in job.stdout:  # both ranks are training
            if line.startswith("Epoch 0 in"):
                break
        ranks = {}
        for pid in map(
            int, subprocess.run(["pgrep", "-P", str(job.pid)], capture_output=True, text=True).stdout.split()
        ):
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = dict(v.split(b"=", 1) for v in f.read().split(b"\0") if b"=" in v)
            if b"OMPI_COMM_WORLD_RANK" in env:
                ranks[int(env[b"OMPI_COMM_WORLD_RANK"])] = pid
        assert set(ranks) == {0, 1}
        os.kill(ranks[1], signal.SIGKILL)
        start = time.monotonic()
        code = job.wait(timeout=60)
        waited = time.monotonic() - start
        err = job.stderr.read()
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
    assert code != 0 and "Traceback" not in err and waited < 30  # JAX's heartbeat is 10 s; the all-reduce fails first
    ours = [line for line in err.splitlines() if line.startswith("jaxmlp train: error: ")]
    assert len(ours) <= 1 and all(line.startswith("jaxmlp train: error: process 0 of 2 stopped: ") for line in ours)
    stat = Path(f"/proc/{ranks[0]}/stat")
    assert not stat.exists() or stat.read_text().split()[2] == "Z"  # gone (or a zombie waiting for init)


def test_two_ranks_measure_the_two_process_scaling_and_one_file_is_written(tmp_path):
    """`mpirun -n 2 jaxmlp scaling`: the cluster's two processes are P = 2, rank 0 alone measures P = 1 after, speaks
    and writes one file."""
    done = mpirun(
        [
            "-m",
            "jaxmlp",
            "scaling",
            "--devices",
            "1",
            "2",
            "--processes",
            "1",
            "2",
            "--dataset",
            "synthetic",
            "--limit",
            "1024",
            "--epochs",
            "2",
            "--calls",
            "2",
            "--out",
            str(tmp_path),
        ]
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("jaxmlp scaling: the sharded pipeline") == 1 and done.stdout.count("Saved ") == 1
    assert "(Open MPI's for P > 1)" in done.stdout and "N = 2, P = 2: epoch " in done.stdout
    (saved,) = tmp_path.glob("scaling-*-cpu.json")
    rows = {b["name"]: b["extra_info"] for b in json.loads(saved.read_text())["benchmarks"]}
    assert set(rows) == {f"scaling_{w}[cpu-{n}-{p}]" for w in ("epoch", "step") for n, p in ((1, 1), (2, 1), (2, 2))}
    two = rows["scaling_epoch[cpu-2-2]"]
    assert (two["launcher"], two["global_device_count"]) == ("Open MPI", 2) and 0 < two["all_reduce_share"] < 1
    assert rows["scaling_epoch[cpu-2-1]"]["launcher"] == "none"  # rank 0's own worker, alone


def test_the_benchmarks_refuse_to_run_as_ranks():
    done = mpirun(["-m", "pytest", "bench/bench_epoch.py", "--size=smoke", "-q", "-p", "no:cacheprovider"])
    said = [line for line in done.stdout.splitlines() + done.stderr.splitlines() if line.startswith("ERROR: ")]
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert said and all("pytest-benchmark cannot join ranks" in line and "jaxmlp scaling" in line for line in said)
