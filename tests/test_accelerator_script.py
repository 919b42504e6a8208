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
        (["--slow-workers", "0,x"], "--slow-workers 0,x: give worker counts, e.g. 0 or 0,2"),
        (["--modules", "floor,gemm"], "--modules gemm: use floor, epoch, update, predict or loader"),
        (["--only", "bench,plots"], "--only plots: use bench, profile, precision, nox or scaling"),
        (["--pipelines", "scan,fast"], "--pipelines fast: use seed,seed_batched,"),
        (["--gemm-shapes", "cubes"], "--gemm-shapes cubes: use squares, layers or all"),
    ],
)
def test_a_wrong_setting_is_refused_before_anything_runs(tmp_path, args, says):
    code, err = run(tmp_path, "--backend", "cpu", *args)
    assert code == 2 and len(err) == 1 and says in err[0], err
    assert not (tmp_path / "out").exists()  # refused before its log


def test_the_cpu_dry_run_times_the_slow_rungs_apart_with_their_own_rounds(tmp_path):
    """The bench step on this CPU, cut to two pipelines: the plan said first, every step asked for in it; the fast
    rungs' epochs in one pytest call with --rounds, the tutorial's DataLoader rungs (registry.SLOW_PIPELINES) in a
    call of their own with --slow-rounds at --slow-workers 0 only, the loader module's slow rows at every worker
    count; one bench file packed, each row's rounds in it, and the log in its run's folder (a call that also profiles
    packs its traces there too, traces/<pipeline>/)."""
    import json
    import tarfile

    args = ["--backend", "cpu", "--size", "smoke", "--only", "bench", "--modules", "epoch,loader"]
    args += ["--rounds", "2"]
    args += ["--slow-rounds", "1", "--pipelines", "seed_batched,batched", "--limit", "900"]
    env = {**os.environ, "OUT": str(tmp_path / "out"), "TMPDIR": str(tmp_path)}
    done = subprocess.run(
        ["bash", str(SCRIPT), *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900, env=env
    )
    log = done.stdout
    assert done.returncode == 0 and "== every step completed" in log, log[-3000:]
    lines = log.splitlines()
    steps = [line.split(" (at most")[0] for line in lines if " (at most " in line]
    assert steps == ["== bench-epoch", "== bench-loader", "== bench-epoch-slow"]
    start = lines.index(next(line for line in lines if line.startswith("== plan: 3 steps in the ")))
    planned = [line.split(":")[0].strip("= ") for line in lines[start + 1 : start + 4]]
    first = next(i for i, line in enumerate(lines) if " (at most " in line)
    assert planned == [s.strip("= ") for s in steps] and start < first  # said before any step runs
    assert lines[start + 4].startswith("== nothing left out at 900 s if the estimates hold")  # no earlier cpu log
    assert all("(estimated " in line for line in lines[start + 1 : start + 4])  # from their benchmarks' counts
    assert (
        "--pipelines batched\n" in log
        and "bench_epoch.py::test_epoch" in log
        and "--pipelines seed_batched -k-0-\n" in log
    )
    with tarfile.open(tmp_path / "out" / "results.tar.gz") as packed:
        (name,) = [n for n in packed.getnames() if n.endswith("-cpu.json")]
        doc = json.load(packed.extractfile(name))
        stamp = name.split("-")[1]
        names = packed.getnames()
    assert f"./cpu-{stamp}/log.txt" in names  # the run's folder (layout.run_folder): the next call's plan reads it
    meta = doc["machine_info"]["jaxmlp"]
    assert (meta["rounds_asked"], meta["slow_rounds_asked"]) == (2, 1)
    rounds = {b["name"]: b["stats"]["rounds"] for b in doc["benchmarks"]}
    assert rounds["test_epoch[cpu-batched-0-f32]"] == rounds["test_loader[batched-0]"] == 2
    assert rounds["test_epoch[cpu-seed_batched-0-f32]"] == rounds["test_loader[seed_batched-2]"] == 1
    assert "test_epoch[cpu-seed_batched-2-f32]" not in rounds  # --slow-workers 0: the tutorial's epoch alone
    assert {n.split("[")[0] for n in rounds} == {"test_epoch", "test_bf16_step", "test_loader"}
    assert not list(tmp_path.glob("jaxmlp-accel-stage.*"))


def _plan_module():
    spec = importlib.util.spec_from_file_location("plan", SCRIPT.with_name("plan.py"))
    assert spec and spec.loader
    plan = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plan)
    return plan


def test_the_plan_reads_what_earlier_runs_on_the_backend_measured(tmp_path):
    """bench/accelerator/plan.py: each step's need from the newest earlier log of the same backend (a step cut off:
    more than its time, its cap counted), else estimated (a profile: the backend's figure), else unknown (a bench
    step whose benchmarks were not counted), and then it cannot tell what the limit leaves out; the steps the limit
    leaves out (an unknown one where less than the least time the script starts it with would be left)."""
    steps = ["bench-floor:110:20", "bench-epoch:220:20:-", "bench-epoch-slow:180:20", "profile-scan:90:30"]
    steps += ["profile-seed:90:30"]

    def plan(left):
        done = subprocess.run(
            ["python3", str(SCRIPT.with_name("plan.py")), "tpu", "300", str(left), str(tmp_path), *steps],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.splitlines()

    first = plan(275)
    assert first[1] == "==   bench-floor: needs unknown (no earlier tpu run's log nor an estimate has it); cap 110 s"
    assert first[4] == "==   profile-scan: needs about 30 s (estimated 30 s; no earlier tpu run's log has it); cap 90 s"
    assert first[-1] == (  # never "nothing left out" where it cannot know
        "== cannot tell what 300 s leaves out (the steps measured before need 0 s, those estimated 60 s, of 275 s); "
        "3 neither measured nor estimated share the 215 s left: bench-floor, bench-epoch, bench-epoch-slow"
    )
    older, newer, gpu = (tmp_path / name for name in ("tpu-20261205T204421", "tpu-20261206T012031", "gpu-x"))
    for folder, header, ended in [
        (older, "--backend tpu", ["bench-floor: exit 0 after 46 s", "bench-epoch: exit 0 after 94 s"]),
        (newer, "--backend tpu", ["bench-floor: exit 0 after 61 s", "bench-epoch-slow: exit 124 after 150 s"]),
        (gpu, "--backend gpu", ["profile-scan: exit 0 after 5 s"]),
    ]:
        folder.mkdir()
        text = [f"== bench/accelerator/run.sh {header} --limit 400; 2026-12-06T01:20:31Z"]
        (folder / "log.txt").write_text("\n".join(text + [f"== {line}" for line in ended]) + "\n")
    lines = plan(275)
    assert lines[0] == "== plan: 5 steps in the 275 s the 300 s limit leaves them"
    assert lines[1] == f"==   bench-floor: needs about 61 s ({newer / 'log.txt'}); cap 110 s"  # the newest
    assert lines[2] == f"==   bench-epoch: needs about 94 s ({older / 'log.txt'}); cap 220 s"
    assert lines[3] == (
        f"==   bench-epoch-slow: needs more than 150 s (cut off) ({newer / 'log.txt'}); cap 180 s: LEFT OUT at 300 s"
    )
    assert "profile-scan: needs about 30 s (estimated" in lines[4]  # the GPU's log is another backend's
    assert lines[-1] == (
        "== left out at 300 s: bench-epoch-slow (the steps measured before need 155 s, those estimated 60 s, of 275 s)"
    )
    estimated = "needs about 30 s (estimated 30 s; no earlier tpu run's log has it); cap 90 s: LEFT OUT at 300 s"
    assert plan(170)[4:6] == [f"==   profile-scan: {estimated}", f"==   profile-seed: {estimated}"]  # 15 s left


def test_the_plan_leaves_out_what_the_limit_cannot_start_even_unmeasured(tmp_path):
    """Steps no earlier run measured nor an estimate covers each take at least the time the script starts them
    with: two of 100 s do not both fit 150 s."""
    lines = _plan_module().plan("tpu", 200, 150, tmp_path, [("bench-a", 120, 100, None), ("bench-b", 120, 100, None)])
    assert lines[-2].endswith("LEFT OUT at 200 s") and lines[-1].startswith("== left out at 200 s: bench-b")


# The GPU's first call as run.sh plans it (its benchmarks as pytest collects them on a GPU: the floor's squares
# 22, the ladder's epochs 15, the tutorial's 1) and its second (the step's products 19, update 9, predict 12, the
# loaders 14; training in three precisions; scaling).
GPU_FIRST = [
    ("bench-floor", 150, 20, 22),
    ("bench-epoch", 200, 20, 15),
    ("bench-epoch-slow", 90, 20, 1),
    ("profile-scan", 60, 30, None),
    ("profile-seed", 60, 30, None),
]
GPU_SECOND = [
    ("bench-floor", 150, 20, 19),
    ("bench-update", 120, 20, 9),
    ("bench-predict", 100, 20, 12),
    ("bench-loader", 180, 20, 14),
    ("scaling", 120, 30, None),
    ("train-scan-f32", 60, 25, None),
    ("train-scan-tf32", 60, 25, None),
    ("train-scan-bf16", 60, 25, None),
]


def test_the_gpu_plan_estimates_each_step_from_its_benchmarks_and_fits_its_limit(tmp_path):
    """No GPU run's log yet: each step estimated from its benchmarks' count (plan.ESTIMATES' start and seconds a
    benchmark) and said "estimated"; the first call's 345 s fit the 375 s its 420 s limit leaves after the start and
    packing; the second call's 481 s fit its own 560 s limit, not 420 s."""
    plan = _plan_module()
    lines = plan.plan("gpu", 420, 375, tmp_path, GPU_FIRST)
    assert lines[1] == (
        "==   bench-floor: needs about 81 s (estimated 81 s: 22 benchmarks at 3 s and 15 s to start; no earlier gpu "
        "run's log has it); cap 150 s"
    )
    assert lines[2].startswith("==   bench-epoch: needs about 165 s (estimated 165 s: 15 benchmarks at 10 s")
    assert lines[-1] == (
        "== nothing left out at 420 s if the estimates hold (the steps measured before need 0 s, those estimated "
        "345 s, of 375 s)"
    )
    second = plan.plan("gpu", 560, 515, tmp_path, GPU_SECOND)  # its own call, --limit 560: 481 s of 515
    assert second[-1] == (
        "== nothing left out at 560 s if the estimates hold (the steps measured before need 0 s, those estimated "
        "481 s, of 515 s)"
    )
    assert plan.plan("gpu", 420, 375, tmp_path, GPU_SECOND)[-1].startswith("== left out at 420 s: scaling, train-")
    # A step's estimate beyond its cap needs its cap; a smaller limit leaves out the steps after what fits.
    capped = plan.plan("gpu", 420, 375, tmp_path, [("bench-epoch", 200, 20, 30)])
    assert capped[1].startswith("==   bench-epoch: needs about 200 s (estimated 315 s: 30 benchmarks at 10 s")
    short = plan.plan("gpu", 240, 200, tmp_path, GPU_FIRST)
    assert [line.split(":")[0].strip("= ") for line in short[1:-1] if line.endswith("LEFT OUT at 240 s")] == [
        "bench-epoch"  # 81 s + 165 s > 200 s; the steps after it still fit
    ]
    assert short[-1].startswith("== left out at 240 s: bench-epoch (the steps measured before need 0 s, those ")


def test_a_gpu_runs_log_replaces_the_estimate_of_each_step_it_measured(tmp_path):
    """Once a GPU run's log is in the results folder, its steps are measured, the rest still estimated."""
    folder = tmp_path / "gpu-20261207T010203"
    folder.mkdir()
    (folder / "log.txt").write_text(
        "== bench/accelerator/run.sh --backend gpu --limit 420; 2026-12-07T01:02:03Z\n"
        "== bench-floor: exit 0 after 64 s\n== bench-epoch: exit 124 after 200 s\n"
    )
    lines = _plan_module().plan("gpu", 420, 375, tmp_path, GPU_FIRST)
    assert lines[1] == f"==   bench-floor: needs about 64 s ({folder / 'log.txt'}); cap 150 s"
    assert lines[2] == f"==   bench-epoch: needs more than 200 s (cut off) ({folder / 'log.txt'}); cap 200 s"
    assert "bench-epoch-slow: needs about 35 s (estimated" in lines[3]
    assert lines[-1] == (
        "== nothing left out at 420 s if the estimates hold (the steps measured before need 264 s, those estimated "
        "99 s, of 375 s)"
    )
