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
from conftest import SHARDED_TRAIN, kill_rank_one, made_releases, ranks_of, scaling_argv

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


def popen(args):
    """`mpirun -n 2` over `args` in a session of its own, its output piped."""
    return subprocess.Popen(
        ["mpirun", "-n", "2", sys.executable, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(),
        start_new_session=True,
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


AS_RANK_0 = {"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2"}
"""What `mpirun -n 2` tells its first rank (the tests above show a real mpirun's ranks read it): the refusals below
are decided from it before any work, so they are checked in this process, or in one process, not under mpirun."""


def test_a_pipeline_that_would_train_copies_is_one_line(monkeypatch, capsys):
    from jaxmlp.cli import main

    for name, value in AS_RANK_0.items():
        monkeypatch.setenv(name, value)
    assert main([*TRAIN[2:], "--pipeline", "scan", "--epochs", "1"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("jaxmlp train: error: process 0 of 2 (Open MPI): ")
    assert "only --pipeline sharded joins several processes into one run" in line


def test_a_rank_that_dies_stops_the_other(tmp_path):
    job = popen([*TRAIN, "--pipeline", "sharded", "--epochs", "1000"])
    try:
        ranks, code, waited, err = kill_rank_one(job, b"OMPI_COMM_WORLD_RANK")
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
    and writes one file (N = 2 only: N = 1 and the pairs left out are tests/test_sharded.py's, one worker less)."""
    done = mpirun(scaling_argv(["2"], tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("jaxmlp scaling: the sharded pipeline") == 1 and done.stdout.count("Saved ") == 1
    assert "(Open MPI's for P > 1)" in done.stdout and "N = 2, P = 2: epoch " in done.stdout
    (saved,) = tmp_path.glob("scaling-*-cpu.json")
    rows = {b["name"]: b["extra_info"] for b in json.loads(saved.read_text())["benchmarks"]}
    assert set(rows) == {f"scaling_{w}[cpu-2-{p}]" for w in ("epoch", "step") for p in (1, 2)}
    two = rows["scaling_epoch[cpu-2-2]"]
    assert (two["launcher"], two["global_device_count"]) == ("Open MPI", 2) and 0 < two["all_reduce_share"] < 1
    assert rows["scaling_epoch[cpu-2-1]"]["launcher"] == "none"  # rank 0's own worker, alone


def test_the_benchmarks_refuse_to_run_as_ranks():
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "bench/bench_epoch.py", "--size=smoke", "-q", "-p", "no:cacheprovider"],
        capture_output=True,
        text=True,
        timeout=240,
        env={**environment(), **AS_RANK_0},
    )
    said = [line for line in done.stdout.splitlines() + done.stderr.splitlines() if line.startswith("ERROR: ")]
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert said and all("pytest-benchmark cannot join ranks" in line and "jaxmlp scaling" in line for line in said)


# --- a timeline or corpus shared by the ranks (`jaxmlp.flows.ranks`) --------------------------------------

MANIFEST = Path(__file__).parent / "fixtures" / "corpus" / "corpus.toml"
RELEASES = ("0.4.30", "0.4.31", "0.4.33")
TINY = ["--calls", "3", "--dataset", "synthetic", "--limit", "256", "--epochs", "2"]
TIMELINE = ["-m", "jaxmlp", "sweep", "timeline", RELEASES[0], RELEASES[-1], "--versions", *RELEASES, *TINY]


def releases(root):
    """Each release's environment as made: this interpreter (the same jax in each: the bookkeeping is tested)."""
    made_releases(root, *RELEASES)
    return ["--envs", str(root)]


def test_a_corpus_under_two_ranks_shares_its_timeline_and_writes_one_scorecard(tmp_path):
    """`jaxmlp sweep corpus` under mpirun: its case's timeline shared by the ranks (--processes rounded up to a
    multiple of them; round r measured by rank r mod 2 on its node), rank 0 files the verdicts and the one scorecard,
    no rank file or meeting file left (the timeline command's own ranks: the stopped-rank test below)."""
    out = tmp_path / "out"
    argv = ["-m", "jaxmlp", "sweep", "corpus", str(MANIFEST), "--cases", "fixture-control", "--processes", "1"]
    done = mpirun([*argv, *TINY, *releases(tmp_path / "envs"), "--out", str(out)])
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("Corpus: 1 case(s) of 1 kind(s)") == 1 and "clean (shown the same) " in done.stdout
    # rank 0 files the one scorecard (2 processes a release), whether the control's ends come out the same or not
    assert "2 processes a release (--processes 1 rounded up to a multiple of the ranks)" in done.stdout
    assert done.stdout.count("Wrote 3 cell files") == 1 and "rank 1 of 2 on " in done.stderr  # the other rank: stderr
    (folder,) = out.iterdir()
    assert (folder / "scorecard.json").is_file() and not list(folder.rglob("rank-*")) and not list(out.glob(".*"))
    (timeline,) = (folder / "fixture-control").iterdir()
    assert {"cells.json", "samples.jsonl", *(f"jax-{v}.json" for v in RELEASES)} <= {p.name for p in timeline.iterdir()}
    lines = [json.loads(line) for line in (timeline / "samples.jsonl").read_text().splitlines()[1:]]  # plan, samples
    measured = sorted((line["cell"], line["round"]) for line in lines)
    assert measured == sorted((v, r) for v in RELEASES for r in range(2))  # every release and round once
    for line in lines:
        meta = line["result"]["metadata"]
        assert meta["rank"] == line["round"] % 2 and meta["node"]  # round r is rank r mod 2's, on its node
    raw = json.loads((timeline / "jax-0.4.31.json").read_text())["raw_processes"]
    assert sorted(p["metadata"]["rank"] for p in raw) == [0, 1]


def test_a_stopped_rank_is_named_by_rank_0(tmp_path):
    out = tmp_path / "out"
    workload = str(MANIFEST.parent / "cases" / "product.py") + ":control"
    job = popen(
        [*TIMELINE, *("--workload", workload, "--processes", "20", "--out", str(out)), *releases(tmp_path / "envs")]
    )
    try:
        deadline = time.monotonic() + 180
        while not [p for p in out.glob("timeline-*/rank-1.jsonl") if p.stat().st_size]:  # rank 1 measures
            assert time.monotonic() < deadline and job.poll() is None
            time.sleep(0.5)
        ranks = ranks_of(job.pid, b"OMPI_COMM_WORLD_RANK")
        os.kill(ranks[1], signal.SIGTERM)
        code = job.wait(timeout=120)
        err = job.stderr.read()
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
    assert code != 0 and "Traceback" not in err
    assert "stopped (stopped by SIGTERM)" in err and "rank 1 on " in err, err
    (folder,) = out.glob("timeline-*")
    assert (folder / "INCOMPLETE").exists()  # what both measured is kept: `jaxmlp sweep resume` goes on


def test_the_other_sweep_subcommands_refuse_ranks(monkeypatch, capsys):
    from jaxmlp.cli import main

    monkeypatch.setenv("OMPI_COMM_WORLD_RANK", "0")
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", "2")
    for argv in (["sweep", "0.4.30", "0.4.31"], ["sweep", "bisect", "0.4.30", "0.4.31"], ["sweep", "trials"]):
        assert main(argv) == 2
        (line,) = capsys.readouterr().err.strip().splitlines()
        assert "runs on one machine, not as 2 ranks of mpirun or srun: start it without them" in line
