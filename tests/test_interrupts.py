"""Every long-running command stopped by a real signal, sent as a terminal sends Ctrl-C (to every process of the
command's group) or as a service manager sends SIGTERM, at the moment it is most fragile: while its worker
processes start. Each must end in one line, exit 128 + the signal's number, print no traceback (its children's
included) and leave no process behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import TWO_ENVS, made_releases

from jaxmlp.cli import main
from jaxmlp.results.schema.bench import BenchmarkDocument
from jaxmlp.results.schema.train import TrainDocument
from jaxmlp.results.schema.tta import TtaDocument

ROOT = Path(__file__).parent.parent

WORKLOAD = """
import numpy as np


def make():
    return (lambda x: x * 2.0), (np.ones(8, np.float32),)
"""


def _stat(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()  # state, ppid, pgrp, ...


def descendants(root: int) -> list[int]:
    """The live processes below ``root`` (children, grandchildren...), zombies left out."""
    parent: dict[int, int] = {}
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            fields = _stat(int(proc.name))
            if fields and fields[0] != "Z":
                parent[int(proc.name)] = int(fields[1])
    found, frontier = [], {root}
    while frontier:
        frontier = {pid for pid, ppid in parent.items() if ppid in frontier}
        found.extend(frontier)
    return found


def alive(pid: int) -> bool:
    fields = _stat(pid)
    return fields is not None and fields[0] != "Z"


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


@dataclass
class Stopped:
    code: int
    out: str
    err: str
    children: dict[int, str]  # the processes below the command when it was signalled, their command lines
    waited: float  # seconds from the signal to the command's exit
    left: list[int]  # those still alive after it exited


def stop(
    argv: list[str],
    ready: Callable[[int, str], bool],
    signum: int,
    tmp_path: Path,
    env: dict[str, str] | None = None,
    to_group: bool = True,
) -> Stopped:
    """Run ``jaxmlp ARGV`` until ``ready(pid, output so far)``, then send ``signum`` (to its whole process group, as
    a terminal does, if ``to_group``), and wait for its end."""
    out_file, err_file = tmp_path / "stdout", tmp_path / "stderr"
    with out_file.open("w") as out, err_file.open("w") as err:
        run = subprocess.Popen(
            [sys.executable, "-m", "jaxmlp", *argv],
            stdout=out,
            stderr=err,
            text=True,
            start_new_session=True,
            env={**os.environ, **(env or {})},
            cwd=tmp_path,
        )
    try:
        deadline = time.monotonic() + 180
        while not ready(run.pid, out_file.read_text() + err_file.read_text()):
            assert run.poll() is None, f"ended before the signal: {err_file.read_text()}"
            assert time.monotonic() < deadline, "never ready"
            time.sleep(0.05)
        children = {p: cmdline(p) for p in descendants(run.pid)}
        signalled = time.monotonic()
        if to_group:
            os.killpg(run.pid, signum)
        else:
            run.send_signal(signum)
        run.wait(timeout=60)
        waited = time.monotonic() - signalled
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
    time.sleep(0.3)
    return Stopped(
        run.returncode, out_file.read_text(), err_file.read_text(), children, waited, [p for p in children if alive(p)]
    )


def one_line(stopped: Stopped, command: str, signum: int) -> str:
    """The checks every interrupt passes; its one line returned."""
    assert stopped.code == 128 + signum, stopped.err
    assert "Traceback" not in stopped.err and "terminate called" not in stopped.err, stopped.err
    (line,) = stopped.err.strip().splitlines()[-1:]
    name = signal.Signals(signum).name
    assert line.startswith(f"jaxmlp {command}: stopped by {name}"), stopped.err
    assert not stopped.left, [stopped.children[p] for p in stopped.left]
    return line


def has_child(marker: str) -> Callable[[int, str], bool]:
    """Ready once a process below the command has ``marker`` in its command line."""
    return lambda pid, output: any(marker in cmdline(p) for p in descendants(pid))


SPAWNED = "multiprocessing.spawn"
"""In the command line of a spawned worker (torch's DataLoader, Grain)."""


def catches(pid: int, signum: int) -> bool:
    """Whether process ``pid`` has a handler of its own for ``signum`` (its ``SigCgt`` mask)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    (mask,) = [line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:")]
    return bool(int(mask, 16) >> (signum - 1) & 1)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_while_the_command_starts_is_one_line(signum, tmp_path):
    """Stopped while it imports its libraries (a second or more; jax first), before any work: the handlers are in
    place as soon as jaxmlp runs (SIGTERM handled: Python's own handles only SIGINT), and a stop then or a while
    later ends in the one line (many epochs asked: the command is still running when the stop comes)."""
    for after in (0.05, 0.5):  # once the handler is there: at once, in the imports; a while later

        def ready(pid: int, output: str, after: float = after) -> bool:
            deadline = time.monotonic() + 60
            while not catches(pid, signal.SIGTERM):
                assert time.monotonic() < deadline, "no handler of SIGTERM"
                time.sleep(0.002)
            time.sleep(after)
            return True

        stopped = stop(
            ["train", "--dataset", "synthetic", "--limit", "2048", "--epochs", "1000", "--pipeline", "scan"],
            ready,
            signum,
            tmp_path,
        )
        assert "nothing was written" in one_line(stopped, "train", signum)
        assert stopped.err.count("\n") == 1, stopped.err


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_train_stopped_while_its_dataloader_workers_start(signum, tmp_path):
    stopped = stop(
        ["train", "--dataset", "synthetic", "--limit", "2048", "--epochs", "50", "--workers", "2"],
        has_child(SPAWNED),
        signum,
        tmp_path,
    )
    one_line(stopped, "train", signum)
    assert any(SPAWNED in c for c in stopped.children.values()), stopped.children
    print(f"stopped {stopped.waited:.1f} s after the signal")
    assert stopped.err.count("\n") == 1, stopped.err  # nothing from the workers either


def test_train_stopped_by_sigterm_to_itself_alone_stops_its_workers(tmp_path):
    stopped = stop(
        ["train", "--dataset", "synthetic", "--limit", "2048", "--epochs", "50", "--workers", "2"],
        has_child(SPAWNED),
        signal.SIGTERM,
        tmp_path,
        to_group=False,
    )
    one_line(stopped, "train", signal.SIGTERM)  # the workers, which got no signal, are gone too


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_train_stopped_while_its_grain_workers_start(signum, tmp_path):
    stopped = stop(
        [
            "train",
            "--pipeline",
            "grain",
            "--dataset",
            "synthetic",
            "--limit",
            "2048",
            "--epochs",
            "50",
            "--workers",
            "2",
        ],
        has_child(SPAWNED),
        signum,
        tmp_path,
    )
    one_line(stopped, "train", signum)
    assert any(SPAWNED in c for c in stopped.children.values()), stopped.children
    assert stopped.err.count("\n") == 1, stopped.err  # nothing from Grain's workers, threads or resource tracker


def test_tta_stopped_mid_run(tmp_path):
    stopped = stop(
        ["tta", "--dataset", "synthetic", "--limit", "2048", "--runs", "50", "--out", str(tmp_path / "out")],
        lambda pid, output: "jaxmlp tta:" in output,
        signal.SIGINT,
        tmp_path,
    )
    assert "nothing was written" in one_line(stopped, "tta", signal.SIGINT)
    assert not any((tmp_path / "out").iterdir())


def summary_of(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """`jaxmlp summary PATH` of what a stopped command kept, in this process (the stop was a real process's): its
    exit code and output."""
    capsys.readouterr()
    code = main(["summary", str(path)])
    said = capsys.readouterr()
    return code, said.out + said.err


def kept_file(line: str, folder: Path) -> Path:
    """The one file a stopped command kept, named at the end of its line (nothing else, half written, beside it)."""
    path = Path(line.split(" in ")[-1])
    assert path.parent == folder and [p.name for p in folder.iterdir()] == [path.name], line
    return path


def stopped_and_kept(argv: list[str], said: str, tmp_path: Path, times: int = 1) -> tuple[Stopped, str, dict]:
    """``argv`` stopped by SIGINT once its output holds ``said`` ``times`` times: the stopped run, its one line and
    the document it kept under ``tmp_path/out``."""
    stopped = stop(argv, lambda pid, output: output.count(said) >= times, signal.SIGINT, tmp_path)
    line = one_line(stopped, argv[0], signal.SIGINT)
    return stopped, line, json.loads(kept_file(line, tmp_path / "out").read_text())


def test_tta_stopped_after_two_runs_keeps_them_marked_partial(tmp_path, capsys):
    argv = ["tta", "--dataset", "synthetic", "--limit", "2048", "--runs", "40", "--max-epochs", "2", "--out"]
    stopped, line, kept_doc = stopped_and_kept([*argv, str(tmp_path / "out")], " seed ", tmp_path, 2)
    doc = TtaDocument.from_json(kept_doc)
    kept = len(doc.runs)
    assert f"; kept {kept} of 40 runs in " in line and 2 <= kept < 40
    assert doc.metadata["partial"] == f"stopped by SIGINT; kept {kept} of 40 runs"
    printed = {int(said.split(" seed ")[1].split(":")[0]) for said in stopped.out.splitlines() if " seed " in said}
    assert printed <= {run["seed"] for run in doc.runs} == set(range(kept))  # every run that ended is kept
    code, summary = summary_of(tmp_path / "out", capsys)
    assert code == 0 and f"a partial run (stopped by SIGINT; kept {kept} of 40 runs)" in summary


def test_train_stopped_after_two_epochs_keeps_them_marked_partial(tmp_path, capsys):
    argv = ["train", "--dataset", "synthetic", "--limit", "2048", "--epochs", "1000", "--pipeline", "scan", "--json"]
    stopped, line, kept_doc = stopped_and_kept([*argv, f"{tmp_path / 'out'}/"], "Epoch 1 in", tmp_path)
    doc = TrainDocument.from_json(kept_doc)
    kept = len(doc.records)
    assert f"; kept {kept} of 1000 epochs in " in line and 2 <= kept < 1000
    assert {r["partial"] for r in doc.records} == {f"stopped by SIGINT; kept {kept} of 1000 epochs"}
    printed = {int(said.split()[1]) for said in stopped.out.splitlines() if said.startswith("Epoch ")}
    assert printed <= {r["epoch"] for r in doc.records} == set(range(kept))  # every epoch that ended is kept
    _, summary = summary_of(tmp_path / "out", capsys)
    assert f"{kept} (partial: stopped by SIGINT; kept {kept} of 1000 epochs)" in summary


def test_profile_stopped_while_it_traces(tmp_path):
    stopped = stop(
        [
            "profile",
            "--dataset",
            "synthetic",
            "--limit",
            "2048",
            "--steps",
            "100000",
            "--logdir",
            str(tmp_path / "traces"),
        ],
        lambda pid, output: any((tmp_path / "traces").glob("scan-*")),  # its run folder made: it traces
        signal.SIGTERM,
        tmp_path,
    )
    assert "nothing was written" in one_line(stopped, "profile", signal.SIGTERM)
    assert not any((tmp_path / "traces").iterdir())  # no run folder with a part of a trace


SCALING = ["scaling", "--dataset", "synthetic", "--limit", "2048", "--devices", "1", "2", "--epochs", "2"]
SCALING_WORKER = "jaxmlp.measure.scaling_worker"


def test_scaling_stopped_while_its_worker_process_runs(tmp_path):
    stopped = stop([*SCALING, "--out", str(tmp_path / "o")], has_child(SCALING_WORKER), signal.SIGINT, tmp_path)
    assert "nothing was written" in one_line(stopped, "scaling", signal.SIGINT)
    assert not (tmp_path / "o").exists() or not list((tmp_path / "o").glob("*.json"))


def test_scaling_stopped_in_its_second_cell_keeps_the_first(tmp_path):
    first_done = has_child(SCALING_WORKER)
    stopped = stop(
        [*SCALING, "--out", str(tmp_path / "o")],
        lambda pid, output: "N = 1: epoch" in output and first_done(pid, output),  # N = 2's worker runs
        signal.SIGTERM,
        tmp_path,
    )
    line = one_line(stopped, "scaling", signal.SIGTERM)
    assert "kept 1 of 2 cells in " in line, line
    path = Path(line.split(" in ")[-1])
    doc = BenchmarkDocument.from_json(json.loads(path.read_text()))
    assert doc.metadata["partial"] == "stopped by SIGTERM; kept 1 of 2 cells"
    assert {row.params["devices"] for row in doc.benchmarks} == {1}
    assert [p.name for p in path.parent.iterdir() if p.is_file()] == [path.name]  # nothing half written beside it
    assert not list((path.parent / "traces").glob("*"))  # nor the stopped cell's trace


def sweep_options(tmp_path: Path) -> list[str]:
    path = tmp_path / "tiny_workload.py"
    path.write_text(WORKLOAD)
    return ["--workload", f"{path}:make", "--calls", "2", "--processes", "2", "--out", str(tmp_path / "out")]


SWEEP_WORKER = "jaxmlp.measure.sweep.worker"


def test_sweep_run_stopped_while_its_probes_start(tmp_path):
    stopped = stop(
        ["sweep", "run", "--env", f"A={sys.executable}", "--env", f"B={sys.executable}", *sweep_options(tmp_path)],
        has_child(SWEEP_WORKER),
        signal.SIGINT,
        tmp_path,
    )
    assert "nothing was written" in one_line(stopped, "sweep run", signal.SIGINT)
    assert not any((tmp_path / "out").iterdir())  # stopped before its first round: no folder left


def test_sweep_timeline_stopped_mid_round_keeps_its_samples(tmp_path):
    env = made_releases(tmp_path / "envs", "0.4.30", "0.4.31", "0.4.33")
    stopped = stop(
        ["sweep", "timeline", "0.4.30", "0.4.33", "--versions", "0.4.30", "0.4.31", "0.4.33", *sweep_options(tmp_path)],
        lambda pid, output: "1/6 processes" in output,
        signal.SIGTERM,
        tmp_path,
        env,
    )
    line = one_line(stopped, "sweep timeline", signal.SIGTERM)
    assert "kept" in line and "jaxmlp sweep resume" in line


def test_sweep_bisect_stopped_while_its_probe_runs(tmp_path):
    env = made_releases(tmp_path / "envs", "0.4.30", "0.4.31", "0.4.33")
    stopped = stop(
        ["sweep", "bisect", "0.4.30", "0.4.33", "--versions", "0.4.30", "0.4.31", "0.4.33", *sweep_options(tmp_path)],
        has_child(SWEEP_WORKER),
        signal.SIGINT,
        tmp_path,
        env,
    )
    one_line(stopped, "sweep bisect", signal.SIGINT)


@pytest.mark.xdist_group("processes")
def test_sweep_bisect_stopped_in_its_search_for_the_first_release_that_fails_keeps_its_probes(tmp_path):
    """The workload fails from 0.6.0 on: the first probe meets it at 0.6.2, the search runs 0.5.3, then is stopped."""
    failing = {"0.6.0": "tree_map", "0.6.2": "tree_map", "0.7.0": "tree_map", "0.7.1": "tree_map", "0.7.2": "tree_map"}
    env = made_releases(tmp_path / "envs", "0.5.1", "0.5.3", removed=failing)
    workload = f"{ROOT / 'tests' / 'workloads' / 'removed_api.py'}:make"
    releases = ["0.5.1", "0.5.3", *failing]
    stopped = stop(
        ["sweep", "bisect", "0.5.1", "0.7.2", "--versions", *releases, "--workload", workload, "--calls", "2"]
        + ["--processes", "2", "--out", str(tmp_path / "out")],
        lambda pid, output: "probe of 0.5.3: runs" in output,  # the search's first probe ended
        signal.SIGINT,
        tmp_path,
        env,
    )
    line = one_line(stopped, "sweep bisect", signal.SIGINT)
    assert "Searching for the first release that fails" in stopped.out
    (folder,) = (tmp_path / "out").iterdir()
    assert line.endswith(f"the finished probes stay in {folder} (checked for the failure so far: 0.5.3 runs)"), line
    assert "nothing was written" not in stopped.err and "The finished probes" not in stopped.err
    assert [p.name for p in folder.iterdir()] == ["probe-1"]  # no bisect.json: no answer yet


TINY_CORPUS = """
[[case]]
name = "first"
workload = "cases/tiny_workload.py:make"
kind = "control"
releases = ["0.4.30", "0.4.31", "0.4.33"]
[case.expect]
direction = "none"

[[case]]
name = "second"
workload = "cases/tiny_workload.py:make"
compiles = 2  # not what the first measures: a timeline measured the same would be read, not measured again
kind = "control"
releases = ["0.4.30", "0.4.31", "0.4.33"]
[case.expect]
direction = "none"
"""


def test_sweep_corpus_stopped_in_its_second_case_keeps_the_scorecard_of_the_first(tmp_path, capsys):
    env = made_releases(tmp_path / "envs", "0.4.30", "0.4.31", "0.4.33")
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "tiny_workload.py").write_text(WORKLOAD)
    manifest = tmp_path / "corpus.toml"
    manifest.write_text(TINY_CORPUS)
    stopped = stop(
        ["sweep", "corpus", str(manifest), "--calls", "2", "--processes", "1", "--out", str(tmp_path / "out")],
        lambda pid, output: output.count("1/3 processes") == 2,  # mid-round in the second case
        signal.SIGTERM,
        tmp_path,
        env,
    )
    line = one_line(stopped, "sweep corpus", signal.SIGTERM)
    (folder,) = (tmp_path / "out").iterdir()
    card = folder / "scorecard.json"
    assert f"kept 1 of 2 cases in {card}; the rest: `jaxmlp sweep corpus {manifest} --cases second`" in line, line
    (timeline,) = (folder / "second").iterdir()  # the stopped case's samples, and how to go on with them
    assert "second's kept " in line and f"in {timeline} (jaxmlp sweep resume {timeline} goes on)" in line, line
    doc = json.loads(card.read_text())
    assert [s["case"]["name"] for s in doc["scores"]] == ["first"]
    assert doc["scores"][0]["clean"] is False  # 1 process a release cannot show its ends the same: not clean
    assert doc["metadata"]["partial"] == "stopped by SIGTERM; kept 1 of 2 cases"
    _, summary = summary_of(card, capsys)
    assert "a partial run (stopped by SIGTERM; kept 1 of 2 cases)" in summary, summary


def test_sweep_explain_stopped_while_its_processes_run(tmp_path):
    stopped = stop(
        ["sweep", "explain", "A", "B", *TWO_ENVS, *sweep_options(tmp_path)],
        has_child("jaxmlp.measure"),
        signal.SIGTERM,
        tmp_path,
    )
    one_line(stopped, "sweep explain", signal.SIGTERM)


def test_sweep_resume_stopped_while_its_processes_run_keeps_its_samples(tmp_path):
    sweep = ["sweep", "run", *TWO_ENVS, *sweep_options(tmp_path)]
    (tmp_path / "first").mkdir()
    (tmp_path / "second").mkdir()
    first = stop(sweep, lambda pid, output: "1/4 processes" in output, signal.SIGTERM, tmp_path / "first")
    assert "jaxmlp sweep resume" in one_line(first, "sweep run", signal.SIGTERM)
    (folder,) = [p for p in (tmp_path / "out").iterdir() if p.is_dir()]
    again = [*TWO_ENVS, "--workload", f"{tmp_path}/tiny_workload.py:make"]
    stopped = stop(
        ["sweep", "resume", str(folder), *again], has_child(SWEEP_WORKER), signal.SIGINT, tmp_path / "second"
    )
    line = one_line(stopped, "sweep resume", signal.SIGINT)
    assert f"in {folder}" in line and "jaxmlp sweep resume" in line, line


def test_sweep_trials_stopped_while_its_processes_run(tmp_path):
    path = tmp_path / "tiny_workload.py"
    path.write_text(WORKLOAD)
    stopped = stop(
        ["sweep", "trials", "--workload", f"{path}:make", "--trials", "3", "--processes", "2", "--calls", "2"]
        + ["--out", str(tmp_path / "out")],
        has_child("jaxmlp.measure"),
        signal.SIGINT,
        tmp_path,
    )
    assert "nothing was written" in one_line(stopped, "sweep trials", signal.SIGINT)
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_sweep_trials_stopped_after_a_trial_keeps_the_trials_that_ended(tmp_path, capsys):
    path = tmp_path / "tiny_workload.py"
    path.write_text(WORKLOAD)
    stopped = stop(
        [
            "sweep",
            "trials",
            "--workload",
            f"{path}:make",
            "--trials",
            "20",
            "--processes",
            "2",
            "--calls",
            "2",
            "--budget",
            "0.01",
        ]
        + ["--out", str(tmp_path / "out")],
        lambda pid, output: "trial 1:" in output,
        signal.SIGINT,
        tmp_path,
    )
    line = one_line(stopped, "sweep trials", signal.SIGINT)
    (kept,) = (tmp_path / "out").glob("detector-*/trials.json")
    doc = json.loads(kept.read_text())
    assert f"kept {len(doc['trials'])} of 20 trials in {kept}" in line, line
    assert doc["metadata"]["partial"].startswith("stopped by SIGINT; kept")
    _, summary = summary_of(kept, capsys)
    assert "a partial run (stopped by SIGINT; kept" in summary, summary
    assert f"of {len(doc['trials'])}" in summary  # counted over the trials kept, not those asked for


ROOFLINE = ["roofline", "--dataset", "synthetic", "--limit", "2048", "--epochs", "2", "--calls", "3"]


def test_roofline_stopped_while_it_measures_the_ceilings_writes_nothing(tmp_path):
    stopped = stop(
        [*ROOFLINE, "--out", str(tmp_path / "o")],
        lambda pid, output: "Measuring this environment's ceilings" in output,
        signal.SIGINT,
        tmp_path,
    )
    assert "nothing was written" in one_line(stopped, "roofline", signal.SIGINT)
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())


def test_roofline_stopped_while_it_measures_the_workloads_keeps_the_ceilings(tmp_path):
    stopped = stop(
        [*ROOFLINE, "--out", str(tmp_path / "o")],
        lambda pid, output: "Kept them in" in output,
        signal.SIGTERM,
        tmp_path,
    )
    line = one_line(stopped, "roofline", signal.SIGTERM)
    assert "ceilings are kept in " in line, line
    (kept,) = (tmp_path / "o").iterdir()
    assert kept.name.startswith("ceilings-") and str(kept) in line  # and no roofline file


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_tensorboard_stopped_while_it_starts(signum, tmp_path):
    (tmp_path / "traces").mkdir()
    stopped = stop(
        ["tensorboard", "--logdir", str(tmp_path / "traces"), "--port", "0"],
        has_child("tensorboard.main"),
        signum,
        tmp_path,
    )
    one_line(stopped, "tensorboard", signum)


@pytest.mark.xdist_group("processes")
def test_a_stopped_track_call_is_gone_on_with_by_the_next_one_no_sample_measured_twice(tmp_path):
    """``jaxmlp track`` stopped mid-round: its line and its ``INCOMPLETE`` file say the same: the next ``jaxmlp
    track`` with the same options, or ``sweep resume`` of the folder, which runs that call again (its ``call.json``,
    from its own folder). It keeps the samples (one line says so), measures only the processes missing, and files
    the folder's ``track.json``."""
    import json

    from test_wheels import wheel_folder

    from jaxmlp.measure.environments import envs

    wheels = wheel_folder(tmp_path / "wheels", ["0.7.0", "0.7.1"])
    for version in ("0.7.0", "0.7.1"):  # made as conftest's made_releases makes them, for the wheels' source
        env = envs.env_path(version, tmp_path / "envs", envs.Source(wheels))
        (env / "bin").mkdir(parents=True)
        envs.python_of(env).write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
        envs.python_of(env).chmod(0o755)
        (env / envs.COMPLETE).write_text("1")
    workload = tmp_path / "tiny_workload.py"
    workload.write_text(WORKLOAD)
    argv = ["track", "--wheels", str(wheels), "--pinned", "0.7.0", "--workload", f"{workload}:make", "--calls", "2"]
    argv += ["--processes", "2", "--budget", "0.01", "--dataset", "synthetic", "--limit", "256", "--epochs", "2"]
    argv += ["--out", str(tmp_path / "out")]
    env = {"JAXMLP_ENVS": str(tmp_path / "envs")}
    (tmp_path / "first").mkdir()
    first = stop(argv, lambda pid, output: "1/4 processes" in output, signal.SIGTERM, tmp_path / "first", env)
    line = one_line(first, "track", signal.SIGTERM)
    (folder,) = (tmp_path / "out").glob("track-*")
    goes_on = "the next `jaxmlp track` with the same options (or `jaxmlp sweep resume FOLDER`) goes on"
    assert f"in {folder} ({goes_on})" in line, line
    assert goes_on in (folder / "INCOMPLETE").read_text()
    (tmp_path / "elsewhere").mkdir()
    second = subprocess.run(
        [sys.executable, "-m", "jaxmlp", "sweep", "resume", str(folder), "--workload", f"{workload}:make"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **env},
        cwd=tmp_path / "elsewhere",
    )
    assert second.returncode in (0, 3), second.stderr
    assert second.stdout.startswith("Going on with the stopped call: jaxmlp track --wheels ")
    assert f"Going on from the stopped call in {folder}: " in second.stdout and "none measured again" in second.stdout
    assert " kept from before, " in second.stdout
    assert (folder / "track.json").is_file() and not (folder / "INCOMPLETE").exists()
    assert list((tmp_path / "out").glob("track-*")) == [folder]
    records = [json.loads(x) for x in (folder / "samples.jsonl").read_text().splitlines()[1:]]
    keys = [(r.get("cell"), r.get("round")) for r in records]
    assert len(keys) == len(set(keys)), "a process measured twice"
