"""bench/accelerator/run.sh, the accelerator check in one command: what it refuses, in one line and exit 2, before
anything is installed or measured (its runs are on a GPU or TPU machine and in its CPU dry run)."""

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
