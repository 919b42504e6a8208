"""bench/accelerator/run.sh, the accelerator check in one command: what it refuses, in one line and exit 2, before
anything is installed or measured (its runs are on a GPU or TPU machine and in its CPU dry run)."""

import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).parents[1] / "bench" / "accelerator" / "run.sh"


def run(tmp_path, *args, out=None):
    env = {**os.environ, "OUT": str(out or tmp_path / "out"), "TMPDIR": str(tmp_path)}
    done = subprocess.run(
        ["bash", str(SCRIPT), *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60, env=env
    )  # once it logs, its errors go through its log too
    return done.returncode, done.stdout.strip().splitlines()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--bogus"], "unknown argument --bogus: use --backend cpu|gpu|tpu"),
        (["--backend", "x"], "--backend x: use cpu, gpu or tpu"),
        (["--size"], "--size needs a value: use --backend cpu|gpu|tpu"),
    ],
)
def test_a_wrong_argument_is_one_line(tmp_path, args, says):
    code, err = run(tmp_path, *args)
    assert code == 2 and len(err) == 1 and says in err[0]


def test_an_unwritable_out_is_refused_first(tmp_path):
    code, err = run(tmp_path, "--backend", "cpu", out="/proc/jaxmlp-out")
    assert code == 2 and err == [
        "bench/accelerator/run.sh: cannot write in /proc/jaxmlp-out: set OUT to a folder you can write to"
    ]


@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="this machine has a GPU: the script would run")
def test_no_gpu_is_one_line_and_nothing_is_left_behind(tmp_path):
    code, lines = run(tmp_path, "--backend", "gpu")
    assert code == 2 and lines[0].startswith("== bench/accelerator/run.sh --backend gpu")  # the log's header, then why
    assert lines[1:] == [
        "bench/accelerator/run.sh: no GPU answers nvidia-smi: run it on the GPU machine, or --backend cpu"
    ]
    assert not list(tmp_path.glob("jaxmlp-accel-stage.*"))  # its staging folder removed
    assert lines[1] in (tmp_path / "out" / "log.txt").read_text()  # the log says it too


@pytest.mark.skipif(importlib.util.find_spec("libtpu") is not None, reason="libtpu is installed: the script would run")
def test_no_tpu_is_one_line_not_a_traceback(tmp_path):
    code, lines = run(tmp_path, "--backend", "tpu", "--modules", "floor,epoch", "--only", "bench,profile")
    assert code == 2 and lines[0].startswith("== bench/accelerator/run.sh --backend tpu"), lines
    assert len(lines) == 2 and lines[1].startswith(
        "bench/accelerator/run.sh: JAX has no tpu device here: --backend tpu was asked for, but JAX sees no TPU"
    )


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--slow-rounds", "0"], "--slow-rounds 0: give a whole number, 1 or more"),
        (["--modules", "floor,gemm"], "--modules gemm: use floor, epoch, update, predict or loader"),
        (["--only", "bench,plots"], "--only plots: use bench, profile, precision, nox or scaling"),
        (["--pipelines", "scan,fast"], "--pipelines fast: use seed,seed_batched,"),
    ],
)
def test_a_wrong_setting_is_refused_before_anything_runs(tmp_path, args, says):
    code, err = run(tmp_path, "--backend", "cpu", *args)
    assert code == 2 and len(err) == 1 and says in err[0], err
    assert not (tmp_path / "out").exists()  # refused before its log


def test_the_cpu_dry_run_times_the_slow_rungs_apart_with_their_own_rounds(tmp_path):
    """The whole bench step on this CPU, cut to two pipelines: the fast rungs' epochs in one pytest call with
    --rounds, the tutorial's DataLoader rungs (registry.SLOW_PIPELINES) in a call of their own with --slow-rounds, the
    loader module's slow rows likewise; one bench file packed, each row's rounds in it."""
    import json
    import tarfile

    args = ["--backend", "cpu", "--size", "smoke", "--only", "bench", "--modules", "epoch,loader", "--rounds", "2"]
    args += ["--slow-rounds", "1", "--pipelines", "seed_batched,batched", "--limit", "900"]
    env = {**os.environ, "OUT": str(tmp_path / "out"), "TMPDIR": str(tmp_path)}
    done = subprocess.run(
        ["bash", str(SCRIPT), *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900, env=env
    )
    log = done.stdout
    assert done.returncode == 0 and "== every step completed" in log, log[-3000:]
    steps = [line.split(" (at most")[0] for line in log.splitlines() if " (at most " in line]
    assert steps == ["== bench-epoch", "== bench-loader", "== bench-epoch-slow"]
    assert (
        "--pipelines batched\n" in log and "bench_epoch.py::test_epoch" in log and "--pipelines seed_batched\n" in log
    )
    with tarfile.open(tmp_path / "out" / "results.tar.gz") as packed:
        (name,) = [n for n in packed.getnames() if n.endswith("-cpu.json")]
        doc = json.load(packed.extractfile(name))
    meta = doc["machine_info"]["jaxmlp"]
    assert (meta["rounds_asked"], meta["slow_rounds_asked"]) == (2, 1)
    rounds = {b["name"]: b["stats"]["rounds"] for b in doc["benchmarks"]}
    assert rounds["test_epoch[cpu-batched-0-f32]"] == rounds["test_loader[batched-0]"] == 2
    assert rounds["test_epoch[cpu-seed_batched-0-f32]"] == rounds["test_loader[seed_batched-2]"] == 1
    assert {n.split("[")[0] for n in rounds} == {"test_epoch", "test_bf16_step", "test_loader"}
    assert not list(tmp_path.glob("jaxmlp-accel-stage.*"))
