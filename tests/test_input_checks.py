"""Bad input is one line naming the problem and the fix, checked before any work: a batch larger than the data,
a workload that is not one, a file where a folder belongs, a --name with a folder in it, a threshold that is not a
finite number; and what a file lacks is left out of its summary, not printed as None."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jaxmlp.cli import main
from jaxmlp.errors import EXIT_ERROR

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["roofline", "--limit", "100", "--workload", "scan"], "--limit 100 is fewer training images than one batch"),
        (["scaling", "--limit", "100", "--devices", "1"], "--limit 100 is fewer training images than one batch"),
        (["roofline", "--dataset", "synthetic", "--workload", "nosuch"], "--workload 'nosuch': neither a built-in"),
        (["roofline", "--workload", "missing.py:make"], "workload 'missing.py:make': no file missing.py"),
    ],
)
def test_roofline_and_scaling_check_their_workloads_and_batch_before_any_work(argv, said, tmp_path, capsys):
    out = tmp_path / "out"
    assert main([*argv, "--out", str(out)]) == EXIT_ERROR
    err = capsys.readouterr().err.strip()
    assert said in err and len(err.splitlines()) == 1
    assert not out.exists()  # nothing measured, nothing made


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["report", "--results", "{file}"], "results folder {file} is a file, not a folder: give the folder"),
        (["tensorboard", "--logdir", "{file}"], "--logdir {file} is a file, not a folder: give the folder"),
        (["train", "--data-dir", "{file}", "--epochs", "2"], "MNIST data folder {file} is a file, not a folder"),
    ],
)
def test_a_file_where_a_folder_belongs_says_so(argv, said, capsys):
    file = str(FIXTURES / "train-cpu.json")
    assert main([a.format(file=file) for a in argv]) == EXIT_ERROR
    err = capsys.readouterr().err.strip()
    assert said.format(file=file) in err and len(err.splitlines()) == 1


def test_summary_saves_a_tta_file_and_refuses_a_name_with_a_folder_before_any_work(tmp_path, capsys):
    tta = FIXTURES / "tta-synthetic.json"
    saved = tmp_path / "saved"
    assert main(["summary", str(tta), "--save", str(saved)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"Saved {saved / 'tta-20261206T060958-synthetic.json'}"
    for name in ("../escape.json", "sub/x.json", ".."):
        assert main(["summary", str(tta), "--save", str(tmp_path / "other"), "--name", name]) == EXIT_ERROR
        out, err = capsys.readouterr()
        assert out == "" and f"--name {name!r} must be a plain file name" in err
    assert not (tmp_path / "other").exists() and not (tmp_path / "escape.json").exists()
    bisect = FIXTURES / "runs" / "bisect-20261203T054016" / "bisect.json"
    assert main(["summary", str(bisect), "--save", str(tmp_path / "other")]) == EXIT_ERROR
    assert f"{bisect} is a bisect file: leave --save out" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("option", "value"),
    [("--memory-threshold", "nan"), ("--threshold", "inf"), ("--memory-threshold", "-0.1"), ("--threshold", "nan")],
)
def test_compare_refuses_a_threshold_that_is_not_a_finite_ratio(option, value, capsys):
    bench = str(FIXTURES / "bench-cpu.json")
    assert main(["compare", bench, bench, option, value]) == EXIT_ERROR
    err = capsys.readouterr().err.strip()
    assert f"{option} must be a finite number of 0 or more" in err and len(err.splitlines()) == 1


def test_a_summary_leaves_out_what_a_file_lacks(tmp_path, capsys):
    tta = json.loads((FIXTURES / "tta-synthetic.json").read_text())
    tta["metadata"] = {}
    file = tmp_path / "tta.json"
    file.write_text(json.dumps(tta))
    assert main(["summary", str(file)]) == 0
    line = capsys.readouterr().out.splitlines()[1]
    assert "None" not in line and line.startswith("target 97.0% test accuracy, 1 run each (seeds)")
    train = json.loads((FIXTURES / "train-cpu.json").read_text())
    train["records"] = []
    file.write_text(json.dumps(train))
    assert main(["summary", str(file)]) == EXIT_ERROR
    assert f"{file}: holds no epoch records" in capsys.readouterr().err
