"""Faults as a user meets them, with real processes, signals, files and sockets: a hanging workload, SIGTERM in
the middle of a sweep, outputs that cannot be written, unusable settings, bad files in a results folder."""

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest
from conftest import TWO_ENVS, env_options

from jaxmlp.cli import main
from jaxmlp.errors import EXIT_ERROR, EXIT_FAILED, JaxmlpError
from jaxmlp.flows.tensorboard import free_port
from jaxmlp.results.store import layout
from jaxmlp.results.store.reading import MAX_RESULT_BYTES, read_document

ROOT = Path(__file__).parent.parent
FIXTURES = Path(__file__).parent / "fixtures"

# A tiny workload; the Nth process to make it (counted in a file beside it) sleeps STALL seconds first.
WORKLOAD = """
import os, time
from pathlib import Path
import numpy as np

COUNTER = Path(__file__).with_suffix(".count")


def make():
    with COUNTER.open("a") as f:
        f.write("x")
    if len(COUNTER.read_text()) == int(os.environ.get("STALL_AT", "0")):
        time.sleep(float(os.environ.get("STALL", "0")))
    time.sleep(float(os.environ.get("EACH", "0")))
    return (lambda x: x * 2.0), (np.ones(8, np.float32),)
"""


def workload(tmp_path: Path) -> str:
    path = tmp_path / "slow_workload.py"
    path.write_text(WORKLOAD)
    return f"{path}:make"


def sweep_argv(tmp_path: Path, spec: str, *more: str) -> list[str]:
    return ["sweep", *TWO_ENVS, "--workload", spec, "--calls", "2", "--out", str(tmp_path / "out"), *more]


def quick(tmp_path: Path) -> list[str]:
    """`WORKLOAD` in one process of 2 calls a cell, into ``tmp_path/out``."""
    return ["--workload", workload(tmp_path), "--calls", "2", "--processes", "1", "--out", str(tmp_path / "out")]


def processes_running(marker: str) -> list[int]:
    """PIDs of live processes whose command line holds ``marker`` (what a killed run must not leave behind)."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit() and int(proc.name) != os.getpid():
            try:
                cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                state = (proc / "stat").read_text().split()[2]
            except OSError:
                continue
            if marker in cmdline and state != "Z":
                found.append(int(proc.name))
    return found


def test_a_hanging_worker_is_stopped_at_its_limit_and_the_sweep_keeps_the_rest(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("STALL_AT", "3")  # the probes are processes 1 and 2; the first round's first one hangs
    monkeypatch.setenv("STALL", "600")
    spec = workload(tmp_path)
    start = time.monotonic()  # every process's limit: one that does not hang imports JAX and makes a tiny workload
    assert main(sweep_argv(tmp_path, spec, "--processes", "1", "--timeout", "10")) == EXIT_FAILED
    assert time.monotonic() - start < 120
    captured = capsys.readouterr()
    assert "stopped after its time limit of 10 s" in captured.out + captured.err
    (folder,) = (tmp_path / "out").iterdir()
    cells = json.loads((folder / layout.CELLS_FILE).read_text())["cells"]
    assert sorted(c.get("failed", False) for c in cells) == [False, True]  # one cell failed, the other measured
    assert not (folder / layout.INCOMPLETE_FILE).exists()  # every round ran: nothing to resume
    assert processes_running(spec.partition(":")[0]) == []  # the hung process is gone


def test_sigterm_mid_sweep_keeps_the_samples_leaves_no_process_and_resume_finishes(tmp_path, monkeypatch, capsys):
    spec = workload(tmp_path)
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "EACH": "1.5", "TMPDIR": str(temp)}  # each process slow enough to be stopped mid-sweep
    argv = [sys.executable, "-m", "jaxmlp", *sweep_argv(tmp_path, spec, "--processes", "2")]
    run = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 150
    log = None
    while time.monotonic() < deadline and run.poll() is None:  # until the first round's first sample is on disk
        logs = list((tmp_path / "out").glob(f"*/{layout.SAMPLES_FILE}"))
        if logs and len(logs[0].read_text().splitlines()) >= 2:
            log = logs[0]
            break
        time.sleep(0.2)
    assert log is not None, run.communicate()
    run.send_signal(signal.SIGTERM)
    out, err = run.communicate(timeout=30)
    assert run.returncode == 128 + signal.SIGTERM
    assert "Traceback" not in err
    (line,) = [x for x in err.splitlines() if "stopped by SIGTERM" in x]
    assert "kept" in line and "jaxmlp sweep resume" in line
    time.sleep(0.5)
    assert processes_running(spec.partition(":")[0]) == []  # no worker outlives the sweep
    assert not list(temp.glob("jaxmlp-path-*"))  # nor its temporary folders
    folder = log.parent
    assert (folder / layout.INCOMPLETE_FILE).exists() and list(folder.glob("jax-*.json"))  # partial cells written
    monkeypatch.setenv("EACH", "0")  # its processes at full speed: nothing stops this one
    monkeypatch.setenv("TMPDIR", str(temp))
    again = ["--env", f"A={sys.executable}", "--env", f"B={sys.executable}", "--workload", spec]  # chosen again
    assert main(["sweep", "resume", str(folder), *again]) == 0, capsys.readouterr().err  # its workers real
    assert not (folder / layout.INCOMPLETE_FILE).exists()
    cells = json.loads((folder / layout.CELLS_FILE).read_text())
    assert cells["complete"] is True and all(c["status"] == "ok" for c in cells["cells"])


UNWRITABLE = {
    "in /proc": lambda tmp: "/proc/jaxmlp-cannot-write-here/x",
    "under a file": lambda tmp: str(tmp / "a-file" / "x"),
}


@pytest.mark.parametrize("where", sorted(UNWRITABLE))
@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (["train", "--dataset", "synthetic", "--json", "{}.json"], "--json"),
        (["report", "--results", str(FIXTURES), "--out", "{}"], "--out"),
        (["summary", str(FIXTURES / "bench-cpu.json"), "--save", "{}"], "--save"),
        (["profile", "--dataset", "synthetic", "--logdir", "{}"], "--logdir"),
        (["scaling", "--dataset", "synthetic", "--devices", "1", "--out", "{}"], "--out"),
        (["sweep", "--env", "A=python", "--out", "{}"], "--out"),
    ],
)
def test_an_output_that_cannot_be_written_fails_before_any_work(argv, option, where, tmp_path, capsys):
    (tmp_path / "a-file").write_text("")
    place = UNWRITABLE[where](tmp_path)
    assert main([a.replace("{}", place) for a in argv]) == EXIT_ERROR
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and option in err and "Traceback" not in err, err
    assert out == ""  # refused up front: no epoch, no probe, no table printed before it


def test_a_cache_folder_that_is_a_file_is_named_with_its_variable(mnist_dir, tmp_path, monkeypatch, capsys):
    (tmp_path / "cache").write_text("")
    monkeypatch.setenv("JAXMLP_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["train", "--data-dir", str(mnist_dir), "--epochs", "1"]) == EXIT_ERROR
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"JAXMLP_CACHE_DIR {tmp_path / 'cache'}: cannot be used as a folder" in err


def test_a_missing_mnist_file_is_named(mnist_dir, tmp_path, capsys):
    for f in mnist_dir.iterdir():
        if f.name.startswith(("train-", "t10k-images")):
            (tmp_path / f.name).symlink_to(f)
    assert main(["train", "--data-dir", str(tmp_path), "--epochs", "1"]) == EXIT_ERROR
    err = capsys.readouterr().err
    assert f"{tmp_path} lacks t10k-labels-idx1-ubyte[.gz] (has the other 3)" in err and err.count("\n") == 1


def test_tensorboard_says_when_its_port_is_taken_and_port_0_picks_a_free_one(tmp_path, capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["tensorboard", "--logdir", str(tmp_path), "--port", str(port)]) == EXIT_ERROR
        err = capsys.readouterr().err
        assert f"cannot listen on 127.0.0.1:{port}" in err and "--port 0" in err and err.count("\n") == 1
    assert free_port(0) > 0
    with pytest.raises(JaxmlpError, match="a port is 0 to 65535"):
        free_port(70000)


def test_a_huge_or_junk_json_among_the_results_is_skipped_unread(tmp_path, capsys):
    results = tmp_path / "results"
    results.mkdir()
    (results / "bench-cpu.json").write_bytes((FIXTURES / "bench-cpu.json").read_bytes())
    huge = results / "huge.json"
    with huge.open("wb") as f:  # sparse: 200 MB that take no disk
        f.truncate(200 * 2**20)
    (results / "junk.json").write_bytes(b"\x00garbage" * 1000)
    tracemalloc.start()
    with pytest.raises(JaxmlpError, match="larger than any results file"):
        read_document(huge)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < MAX_RESULT_BYTES // 64  # not read into memory
    assert main(["report", "--results", str(results)]) == 0  # the real result still reported
    err = capsys.readouterr().err
    assert "huge.json" in err and "junk.json" in err and "not a JSON object" in err


def test_two_saves_at_the_same_second_take_two_names(tmp_path):
    argv = [sys.executable, "-m", "jaxmlp", "summary", str(FIXTURES / "bench-cpu.json"), "--save", str(tmp_path)]
    runs = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    for run in runs:
        _, err = run.communicate(timeout=120)
        assert run.returncode == 0, err
    saved = sorted(p.name for p in tmp_path.iterdir())
    assert len(saved) == 2 and saved[0] != saved[1]


def fake_release(tmp_path: Path, name: str, body: str) -> str:
    """An environment's python that is a shell script: ``body`` runs with the worker's arguments in "$@"."""
    path = tmp_path / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return str(path)


def test_a_release_that_hangs_or_lacks_jax_at_its_probe_fails_the_sweep_naming_it(tmp_path, capsys):
    hangs = fake_release(tmp_path, "hangs", "exec sleep 600")  # the probe never answers
    no_jax = fake_release(tmp_path, "no-jax", f'exec {sys.executable} -S "$@"')  # its site-packages unseen
    argv = [sys.executable, "-m", "jaxmlp", "sweep", *env_options(good=sys.executable, hangs=hangs, nojax=no_jax)]
    argv += [*quick(tmp_path), "--timeout", "15"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=180)
    assert done.returncode == EXIT_FAILED, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(
        "jaxmlp sweep: not measured: hangs (failed at its probe: stopped after its time limit of 15 s"
    )
    assert "nojax (failed at its probe: " in last and "ModuleNotFoundError" in last, last
    assert "Traceback" not in done.stderr
    (folder,) = (tmp_path / "out").iterdir()
    cells = {c["label"]: c for c in json.loads((folder / layout.CELLS_FILE).read_text())["cells"]}
    assert cells["good"]["status"] == "ok" and list(folder.glob("jax-good*.json"))  # what was measured is kept
    assert cells["hangs"]["status"].startswith("failed at its probe") and cells["nojax"]["status"].startswith("failed")
    main(["summary", str(folder)])  # read in this process (the sweep's processes were real)
    assert "not measured: hangs: failed at its probe" in capsys.readouterr().out  # the report marks it
    assert processes_running(hangs) == []


HELD_TPU = """
import sys
from jax._src import xla_bridge

SAID = sys.argv.pop(1)


def held():  # what libtpu raises when another program has the chip
    raise RuntimeError(SAID)


xla_bridge.register_backend_factory("tpu", held, priority=300, fail_quietly=True)  # as JAX registers the TPU's
from jaxmlp.cli import main

sys.exit(main(sys.argv[1:]))
"""
NEWER = (
    "TPU initialization failed: The TPU is already in use by process with pid 4242. Not attempting to load "
    "libtpu.so in this process."
)
OLDER = "Unable to initialize backend 'tpu': INTERNAL: could not acquire the multi-process lockfile"


@pytest.mark.parametrize(
    ("said", "platforms", "backend", "who"),
    [
        (NEWER, None, [], "process 4242 holds it"),  # JAX would go on with the CPU
        (NEWER, None, ["--backend", "tpu"], "process 4242 holds it"),
        (OLDER, "tpu,cpu", [], "find which with `sudo lsof"),  # JAX raises
    ],
)
def test_a_tpu_held_by_another_program_is_one_line_never_the_cpu(said, platforms, backend, who, tmp_path):
    script = tmp_path / "held_tpu.py"
    script.write_text(HELD_TPU)
    env = {k: v for k, v in os.environ.items() if k != "JAX_PLATFORMS"} | (
        {"JAX_PLATFORMS": platforms} if platforms else {}
    )
    env["PYTHONPATH"] = str(ROOT)
    json_path = tmp_path / "train.json"
    done = subprocess.run(
        [
            sys.executable,
            str(script),
            said,
            "train",
            "--dataset",
            "synthetic",
            "--limit",
            "512",
            "--epochs",
            "1",
            "--json",
            str(json_path),
            *backend,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == EXIT_ERROR and done.stdout == "", done.stdout + done.stderr
    assert done.stderr.startswith("jaxmlp train: error: the TPU is in use by another program: ") and who in done.stderr
    assert done.stderr.count("\n") == 1 and not json_path.exists()  # no CPU numbers filed for the TPU


def test_roofline_refuses_a_held_tpu_in_one_line_before_measuring(tmp_path):
    script = tmp_path / "held_tpu.py"
    script.write_text(HELD_TPU)
    env = {k: v for k, v in os.environ.items() if k != "JAX_PLATFORMS"} | {"PYTHONPATH": str(ROOT)}
    out = tmp_path / "reports"
    done = subprocess.run(
        [sys.executable, str(script), NEWER, "roofline", "--backend", "tpu", "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == EXIT_ERROR and done.stdout == "", done.stdout + done.stderr
    assert done.stderr.startswith("jaxmlp roofline: error: the TPU is in use by another program: ")
    assert "process 4242 holds it" in done.stderr and done.stderr.count("\n") == 1
    assert not list(out.iterdir())  # no CPU ceilings filed for the TPU


OUT_OF_MEMORY = """
import pytest


class XlaRuntimeError(RuntimeError):  # what jax raises, by its name
    pass


def test_too_big():
    raise XlaRuntimeError("RESOURCE_EXHAUSTED: Out of memory while trying to allocate 17179869184 bytes.\\n"
                          "BufferAssignment OOM Debugging.\\n" + "allocation 0: size 16.00G\\n" * 40)


def test_fits():
    assert True
"""


def test_a_benchmark_out_of_device_memory_is_one_line_and_the_others_run(tmp_path):
    (tmp_path / "conftest.py").write_text("from bench.conftest import pytest_runtest_makereport  # noqa: F401\n")
    (tmp_path / "bench_memory.py").write_text(OUT_OF_MEMORY)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(tmp_path / "bench_memory.py"),
            "-p",
            "no:cacheprovider",
            "-q",
            "--rootdir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    assert done.returncode == 1 and "1 failed, 1 passed" in done.stdout, done.stdout
    line = (
        "bench_memory.py::test_too_big: the device ran out of memory asking for 16.0 GiB (RESOURCE_EXHAUSTED: Out "
        "of memory while trying to allocate 17179869184 bytes.)"
    )
    assert line in done.stdout and "allocation 0" not in done.stdout and "Traceback" not in done.stdout, done.stdout


def test_explain_of_a_release_that_cannot_run_names_it_and_fails(tmp_path):
    no_jax = fake_release(tmp_path, "no-jax", f'exec {sys.executable} -S "$@"')
    done = subprocess.run(
        [sys.executable, "-m", "jaxmlp", "sweep", "explain", "good", "nojax"]
        + [*env_options(good=sys.executable, nojax=no_jax), *quick(tmp_path)],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == EXIT_ERROR and "Traceback" not in done.stderr, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("jaxmlp sweep explain: error: not measured: nojax (") and "ModuleNotFoundError" in last, last


def test_a_stop_that_arrives_in_a_gc_callback_is_raised_after_it():
    """Python drops an exception raised in a gc callback (JAX registers one); the stop is delivered again."""
    import gc

    from jaxmlp.errors import Interrupted
    from jaxmlp.stops import stop_on_signals

    def callback(phase, info):
        if phase == "start":
            gc.callbacks.remove(callback)
            signal.raise_signal(signal.SIGINT)  # the handler runs here, inside the callback

    with pytest.raises(Interrupted), stop_on_signals():
        gc.callbacks.append(callback)
        gc.collect()
        for _ in range(1000):
            time.sleep(0.001)


def test_a_stop_that_a_library_drops_is_raised_again():
    """A library that clears the error (as JAX's C++ callbacks may) loses the stop; it is delivered again."""
    from jaxmlp.errors import Interrupted
    from jaxmlp.stops import stop_on_signals

    def library():
        with contextlib.suppress(BaseException):
            signal.raise_signal(signal.SIGTERM)

    with pytest.raises(Interrupted) as raised, stop_on_signals():
        library()
        for _ in range(1000):
            time.sleep(0.001)
    assert raised.value.signum == signal.SIGTERM


def test_a_dropped_stop_is_raised_when_the_command_ends_before_it_is_sent_again():
    from jaxmlp.errors import Interrupted
    from jaxmlp.stops import stop_on_signals

    with pytest.raises(Interrupted), stop_on_signals(), contextlib.suppress(BaseException):
        signal.raise_signal(signal.SIGINT)
    time.sleep(0.05)  # the second sending, too late, does nothing now


def test_a_worker_killed_by_a_signal_is_said_killed_not_by_the_log_line_it_printed_before():
    """The kernel's out-of-memory killer sends signal 9: a worker it killed after a profiler's log line on stderr
    (an "E ..." line is no error of its own) fails saying it was killed, then what it said last."""
    from jaxmlp.measure import workers

    said = "print('E hooks.cc:412] Can\\'t import tensorflow', file=sys.stderr, flush=True)"
    code = f"import os, sys; {said}; os.kill(os.getpid(), 9)"
    with pytest.raises(workers.ChildFailed) as failed:
        workers.run(workers.Child("0.5.0 (pairwise)", [sys.executable, "-c", code], timeout=60))
    assert str(failed.value) == (
        "0.5.0 (pairwise): the worker failed: was killed by signal 9 (out of memory? the kernel's out-of-memory killer "
        "sends it; `dmesg` says); it said last: E hooks.cc:412] Can't import tensorflow"
    )
    assert workers.ended(2, "jaxmlp: error: no such workload\n") == "no such workload"
