"""bench/accelerator/run.sh, the accelerator check in one command: what it refuses, in one line and exit 2, before
anything is installed or measured (its runs are on a GPU or TPU machine and in its CPU dry run)."""

import importlib.util
import os
import re
import shutil
import subprocess
import sys
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
        (["--only", "bench,plots"], "--only plots: use forms, bench, profile, precision, nox or scaling"),
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


def _plan(backend, limit, left, folder, steps, **options):
    """The plan's lines for ``steps``, (name, cap, least, count) each."""
    plan = _plan_module()
    return plan.plan(backend, limit, left, folder, [plan.Step(*step) for step in steps], **options)[0]


def test_the_plan_reads_what_earlier_runs_on_the_backend_measured(tmp_path):
    """bench/accelerator/plan.py: each step's need from the newest earlier log of the same backend (a step cut off:
    more than its time), else estimated (a profile: the backend's figure), else unknown (a bench step whose
    benchmarks were not counted), and then it cannot tell what the limit leaves out; each step's cap from its need
    (plan.cap_for), the script's own where it has none; the steps the limit leaves out."""
    steps = ["bench-floor:110:20", "bench-epoch:220:20:-", "bench-epoch-slow:180:20", "profile-scan:90:30"]
    steps += ["profile-seed:90:30"]

    def plan(left):
        caps = tmp_path / "caps.txt"
        done = subprocess.run(
            ["python3", str(SCRIPT.with_name("plan.py")), "tpu", "300", str(left), str(tmp_path), "--caps", str(caps)]
            + steps,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.splitlines(), dict(line.split() for line in caps.read_text().splitlines())

    first, caps = plan(275)
    assert first[1] == "==   bench-floor: needs unknown (no earlier tpu run's log nor an estimate has it); cap 110 s"
    assert first[4] == "==   profile-scan: needs about 30 s (estimated 30 s; no earlier tpu run's log has it); cap 90 s"
    assert caps == {"bench-floor": "110", "bench-epoch": "220", "bench-epoch-slow": "180", "profile-scan": "90"} | {
        "profile-seed": "90"
    }
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
    lines, caps = plan(275)
    assert lines[0] == "== plan: 5 steps in the 275 s the 300 s limit leaves them"
    assert lines[1] == f"==   bench-floor: needs about 61 s ({newer / 'log.txt'}); cap 107 s"  # the newest
    assert lines[2] == f"==   bench-epoch: needs about 94 s ({older / 'log.txt'}); cap 156 s"
    assert lines[3] == (  # cut off: its cap from that, at least the script's
        f"==   bench-epoch-slow: needs more than 150 s (cut off) ({newer / 'log.txt'}); cap 240 s: LEFT OUT at 300 s"
    )
    assert "profile-scan: needs about 30 s (estimated" in lines[4]  # the GPU's log is another backend's
    assert lines[-1] == (
        "== left out at 300 s: bench-epoch-slow (the steps measured before need 155 s, those estimated 60 s, of 275 s)"
    )
    assert (caps["bench-floor"], caps["bench-epoch-slow"]) == ("107", "240")
    estimated = "needs about 30 s (estimated 30 s; no earlier tpu run's log has it); cap 90 s: LEFT OUT at 300 s"
    assert plan(170)[0][4:6] == [f"==   profile-scan: {estimated}", f"==   profile-seed: {estimated}"]  # 15 s left


TPU_LOG = """== bench/accelerator/run.sh --backend tpu --limit 540 --rounds 3 --only bench,profile; 2026-12-06T12:34:56Z
== plan: 3 steps in the 479 s the 540 s limit leaves them
== bench-epoch (at most 220 s): python3 -m pytest bench/bench_epoch.py -q --durations=0 --backends tpu
============================== slowest durations ===============================
30.50s call     bench/bench_epoch.py::test_epoch[tpu-pallas-0-bf16]
7.60s setup    bench/bench_epoch.py::test_epoch[tpu-scan-0-f32]
2.40s call     bench/bench_epoch.py::test_epoch[tpu-scan-0-f32]
(12 durations < 0.005s hidden.  Use -vv to show these durations.)
2 passed, 1 skipped, 12 deselected, 1 warning in 41.00s
== bench-epoch: exit 0 after 55 s
== train-f32 (at most 60 s): python3 -m jaxmlp train --pipeline scan --epochs 1 --precision f32 --backend tpu
== train-f32: exit 0 after 29 s
== train-scan-bf16 (at most 25 s): python3 -m jaxmlp train --pipeline scan --epochs 8 --precision bf16 --backend tpu
== train-scan-bf16: exit 124 after 25 s: stopped at its 25 s (SIGTERM); 61 lines it printed after the stop left out
"""


def test_the_plan_times_each_benchmark_and_each_epoch_from_the_logs(tmp_path):
    """A bench step's need: its start in the log (its time less its benchmarks' durations) and each benchmark asked
    at its own duration there, those the log did not run (beyond as many as it skipped) at the estimate (its cap:
    all of them at the estimate, they may run now); a train step named as an older script named it (train-f32: the
    scan's) measured at its epochs, later epochs estimated; one stopped at its cap (the one-line end) a lower bound;
    a plan made before the start counts the log's start."""
    folder = tmp_path / "tpu-20261206T123657"
    folder.mkdir()
    (folder / "log.txt").write_text(TPU_LOG)
    ids = [f"bench/bench_epoch.py::test_epoch[tpu-{p}]" for p in ("pallas-0-bf16", "scan-0-f32", "a", "b", "c")]
    plan = _plan_module()
    steps = [plan.Step("bench-epoch", 220, 20, 5, tuple(ids)), plan.Step("train-scan-f32", 60, 25, 8)]
    steps += [plan.Step("train-scan-bf16", 60, 25, 8)]
    lines, caps = plan.plan("tpu", 540, 515, tmp_path, steps, reserve=25)
    shown = folder / "log.txt"
    assert lines[0] == "== the start (installs, the device, the benchmarks' count) as the newest log's: 36 s"
    assert lines[1] == "== plan: 3 steps in the 479 s the 540 s limit leaves them"
    assert lines[2] == (  # 14.5 s start + 40.5 s its two + (5 - 2 - 1) at 11 s
        f"==   bench-epoch: needs about 77 s ({shown} and older: 2 benchmarks they ran 40 s, start 14 s, 2 it did not "
        "run at an estimated 11 s); cap 147 s"
    )
    assert lines[3] == (
        f"==   train-scan-f32: needs about 50 s (29 s for 1 epoch in {shown}, 7 more at an estimated 3 s); cap 90 s"
    )
    assert lines[4].startswith("==   train-scan-bf16: needs more than 25 s (cut off)")
    assert caps == {"bench-epoch": 147, "train-scan-f32": 90, "train-scan-bf16": 60}
    assert _plan("tpu", 540, 515, tmp_path, [("train-pallas-f32", 60, 25, 8)])[1] == (
        "==   train-pallas-f32: needs about 49 s (estimated 49 s: 28 s with its first epoch, 7 more at 3 s; no earlier "
        "tpu run's log has it); cap 89 s"
    )


def test_a_step_stopped_at_its_cap_ends_in_one_line(tmp_path):
    """bench/accelerator/bounded.py, with a real process that prints as a runtime dying of the stop does (its
    SIGTERM handler's line, then a native stack, then SIGSEGV): what it printed before the stop is kept, what it
    printed after is left out, counted in the one line that ends the step; exit 124 (a command's own status
    otherwise)."""
    dying = tmp_path / "dying.py"
    dying.write_text(
        "import os, signal, sys, time\n"
        "def stop(signum, frame):\n"
        "    print('jaxmlp train: stopped by SIGTERM', file=sys.stderr, flush=True)\n"
        "    for i in range(60):\n"
        "        print(f'  @ 0x{i:012x}  (unknown)', file=sys.stderr, flush=True)\n"
        "    os.kill(os.getpid(), signal.SIGSEGV)\n"
        "signal.signal(signal.SIGTERM, stop)\n"
        "print('Epoch 0 in 0.01 sec', flush=True)\n"
        "time.sleep(60)\n"
    )
    bounded = SCRIPT.with_name("bounded.py")
    done = subprocess.run(
        ["python3", str(bounded), "train-scan-bf16", "1", sys.executable, str(dying)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    lines = done.stdout.splitlines()
    assert done.returncode == 124 and done.stderr == ""
    assert lines[0] == "Epoch 0 in 0.01 sec" and len(lines) == 2, lines
    assert re.fullmatch(
        r"== train-scan-bf16: exit 124 after \d+ s: stopped at its 1 s \(SIGTERM\); 61 lines it printed after the "
        r"stop left out",
        lines[1],
    )
    _plan_module()  # which puts plan_logs, beside it, on the path
    import plan_logs

    assert plan_logs.ENDED.match(lines[1])  # a later plan reads it: cut off
    done = subprocess.run(["python3", str(bounded), "x", "30", "sh", "-c", "echo hi; exit 3"], capture_output=True)
    assert done.returncode == 3 and done.stdout.decode().splitlines() == ["hi", "== x: exit 3 after 0 s"]


def test_the_plan_leaves_out_what_the_limit_cannot_start_even_unmeasured(tmp_path):
    """Steps no earlier run measured nor an estimate covers each take at least the time the script starts them
    with: two of 100 s do not both fit 150 s."""
    plan = _plan_module()
    steps = [plan.Step("bench-a", 120, 100), plan.Step("bench-b", 120, 100)]
    lines, _ = plan.plan("tpu", 200, 150, tmp_path, steps)
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
    lines = _plan("gpu", 420, 375, tmp_path, GPU_FIRST)
    assert lines[1] == (
        "==   bench-floor: needs about 81 s (estimated 81 s: 22 benchmarks at 3 s and 15 s to start; no earlier gpu "
        "run's log has it); cap 150 s"
    )
    assert lines[2].startswith("==   bench-epoch: needs about 165 s (estimated 165 s: 15 benchmarks at 10 s")
    assert lines[-1] == (
        "== nothing left out at 420 s if the estimates hold (the steps measured before need 0 s, those estimated "
        "345 s, of 375 s)"
    )
    second = _plan("gpu", 560, 515, tmp_path, GPU_SECOND)  # its own call, --limit 560: 481 s of 515
    assert second[-1] == (
        "== nothing left out at 560 s if the estimates hold (the steps measured before need 0 s, those estimated "
        "481 s, of 515 s)"
    )
    assert _plan("gpu", 420, 375, tmp_path, GPU_SECOND)[-1].startswith("== left out at 420 s: scaling, train-")
    # An estimated step's cap from its need, at least the script's own; a smaller limit leaves out the steps
    # after what fits.
    capped = _plan("gpu", 420, 375, tmp_path, [("bench-epoch", 200, 20, 30)])
    assert capped[1].startswith("==   bench-epoch: needs about 315 s (estimated 315 s: 30 benchmarks at 10 s")
    assert capped[1].endswith("; cap 488 s")
    short = _plan("gpu", 240, 200, tmp_path, GPU_FIRST)
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
    lines = _plan("gpu", 420, 375, tmp_path, GPU_FIRST)
    assert lines[1] == f"==   bench-floor: needs about 64 s ({folder / 'log.txt'}); cap 111 s"
    assert lines[2] == f"==   bench-epoch: needs more than 200 s (cut off) ({folder / 'log.txt'}); cap 315 s"
    assert "bench-epoch-slow: needs about 35 s (estimated" in lines[3]
    assert lines[-1] == (
        "== nothing left out at 420 s if the estimates hold (the steps measured before need 264 s, those estimated "
        "99 s, of 375 s)"
    )


@pytest.mark.skipif(importlib.util.find_spec("libtpu") is not None, reason="libtpu is installed")
def test_the_plan_alone_needs_no_device_and_writes_nothing(tmp_path):
    """--plan-only: the TPU's plan on a machine without one (no install, no device asked, no $OUT), its benchmarks
    counted as a TPU run collects them, the earlier logs' start counted; exit 0."""
    folder = tmp_path / "logs" / "tpu-20261206T123657"
    folder.mkdir(parents=True)
    (folder / "log.txt").write_text(TPU_LOG)
    env = {**os.environ, "OUT": str(tmp_path / "out"), "TMPDIR": str(tmp_path), "JAXMLP_PLAN_LOGS": str(folder.parent)}
    args = ["--backend", "tpu", "--limit", "540", "--modules", "epoch", "--only", "forms,bench,precision"]
    args += ["--train-epochs", "8"]
    done = subprocess.run(
        ["bash", str(SCRIPT), *args, "--plan-only"], capture_output=True, text=True, timeout=120, env=env
    )
    said = done.stdout.splitlines()
    assert done.returncode == 0 and done.stderr == "", done.stderr
    lines = [line for line in said if not line.startswith("== no MNIST files in")]  # a machine without MNIST
    assert lines[0] == "== the plan alone (--plan-only): nothing installed, no device asked, nothing run"
    assert lines[2] == "== the start (installs, the device, the benchmarks' count) as the newest log's: 36 s"
    assert lines[3] == "== plan: 7 steps in the 479 s the 540 s limit leaves them"
    names = [line.split(":")[0].strip("= ") for line in lines[4:-1]]
    assert names == ["forms", "bench-epoch", "bench-epoch-slow", "train-scan-f32", "train-scan-bf16"] + [
        "train-pallas-f32",
        "train-pallas-bf16",
    ]
    assert "(29 s for 1 epoch in " in lines[7] and "benchmarks they ran 40 s" in lines[5]
    assert not (tmp_path / "out").exists() and not list(tmp_path.glob("jaxmlp-accel-stage.*"))


def test_a_long_run_says_how_long_it_will_take_and_how_far_it_is(tmp_path, monkeypatch):
    """bench/accelerator/bench_progress.py (`nox -s bench-tpu`'s): the benchmarks an earlier TPU run's log timed at
    their durations there, the others at the estimate, said apart, with how to make it shorter; then how far."""
    folder = tmp_path / "tpu-20261206T123657"
    folder.mkdir()
    (folder / "log.txt").write_text(TPU_LOG)
    monkeypatch.syspath_prepend(str(SCRIPT.parent))
    import bench_progress

    monkeypatch.setattr(bench_progress, "EVERY", 0.0)
    progress = bench_progress.Progress("tpu", tmp_path)
    ids = [f"bench/bench_epoch.py::test_epoch[tpu-{p}]" for p in ("pallas-0-bf16", "scan-0-f32", "new-0-f32")]
    said = progress.plan(ids)
    assert said.startswith(
        "== 3 benchmarks on tpu: about 52 s (2 measured in an earlier run, 40 s "
        f"({folder / 'log.txt'}); 1 estimated, 11 s at most: those that skip take none); shorter: `-- -k epoch`"
    )
    assert progress.finished(ids[0]).startswith("== 1 of 3 benchmarks (33%) after 0 s; about 21 s left")


def test_the_plain_jax_scan_computes_the_pipelines_epoch(monkeypatch):
    """kernel_forms.py's comparison as plain JAX writes it (the step size a folded constant, the full batches, then
    the last batch's step apart) ends where the pipelines' padded scan does, in f32."""
    import numpy as np

    monkeypatch.syspath_prepend(str(SCRIPT.parent))
    import kernel_forms
    from jax import random

    from jaxmlp import model

    rng = np.random.default_rng(0)
    x = rng.random((3 * 128 + 40, 784), np.float32)
    targets = np.asarray(model.one_hot(rng.integers(0, 10, len(x)), 10))
    batches = kernel_forms.scan_batches(x, targets)
    init = model.init_network_params(model.LAYER_SIZES, random.PRNGKey(0))
    settings = {"precision": "f32", "bf16_step": model.DEFAULT_BF16_STEP, "unroll": 1}
    with model.precision_scope("f32"):
        plain = kernel_forms.scan_program("plain, two programs", init, batches, settings)(init)
        padded = kernel_forms.scan_program("padded", init, batches, settings)(init)
    assert model.max_relative_difference(plain, padded) < 1e-5
