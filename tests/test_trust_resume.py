"""A resumed sweep runs only what this machine chose (docs/reference/trust.md): a log (``samples.jsonl``) that names
an interpreter outside this machine's environments folder, or a workload of one's own not given again, or no cell
at all, is one line and exit 2, before any process starts."""

import json
import sys
from pathlib import Path

import pytest

from jaxmlp.cli import main
from jaxmlp.measure.sweep import chosen
from jaxmlp.measure.sweep.matrix import Probed, Runner
from jaxmlp.measure.sweep.settings import Matrix, Measuring
from jaxmlp.results.store import layout
from jaxmlp.results.sweep.files import Plan, RunLog


def _stopped_sweep(folder: Path, python: str, workloads=("scan",), runners: bool = True) -> Path:
    measuring = Measuring(workloads=tuple(workloads))
    cells = (Runner("0.7.1", python, measuring),) if runners else ()
    plan = Plan(cells, Probed({r.name: r for r in cells}, {}, {}, {}), {}, Matrix(processes=2), 60.0)
    folder.mkdir()
    (folder / layout.SAMPLES_FILE).write_text(json.dumps(plan.to_json() if runners else _empty(plan)) + "\n")
    (folder / layout.INCOMPLETE_FILE).write_text("stopped\n")
    return folder


def _empty(plan: Plan) -> dict:
    full = Plan((Runner("x", "x", Measuring()),), plan.probed, {}, plan.matrix, plan.limit).to_json()
    return {**full, "runners": []}


def test_resume_runs_no_interpreter_the_log_names_outside_this_machine_s_environments(tmp_path, capsys, monkeypatch):
    ran = tmp_path / "it-ran"
    script = tmp_path / "evil.sh"
    script.write_text(f"#!/bin/sh\ntouch {ran}\n")
    script.chmod(0o755)
    monkeypatch.setenv("JAXMLP_ENVS", str(tmp_path / "envs"))
    folder = _stopped_sweep(tmp_path / "sweep-20261207T000000", str(script))
    assert main(["sweep", "resume", str(folder)]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert str(script) in line and "--env 0.7.1=PYTHON" in line
    assert not ran.exists()


def test_resume_runs_no_workload_file_not_given_again(tmp_path, capsys):
    envs = tmp_path / "envs"
    python = envs / "jax-0.7.1-py311" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.symlink_to(sys.executable)
    spec = f"{tmp_path / 'evil.py'}:make"
    folder = _stopped_sweep(tmp_path / "sweep-20261207T000000", str(python), (spec,))
    assert main(["sweep", "resume", str(folder), "--envs", str(envs)]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "evil.py" in line and "--workload" in line
    (recorded,) = Plan.from_json(_json_line(folder)).runners
    (mine,) = chosen.runners([recorded], envs, {}, [spec], folder / layout.SAMPLES_FILE)
    assert mine.python == str(python) and mine.measuring.workloads == (spec,)
    (given,) = chosen.runners([recorded], tmp_path / "elsewhere", {"0.7.1": sys.executable}, [spec], folder)
    assert given.python == sys.executable
    escaped = Runner("0.7.1", str(envs / ".." / "evil.sh"), recorded.measuring)
    with pytest.raises(Exception, match="not in this machine's environments"):
        chosen.runners([escaped], envs, {}, [spec], folder)


def _json_line(folder: Path) -> dict:
    return json.loads((folder / layout.SAMPLES_FILE).read_text().splitlines()[0])


def test_resume_of_a_plan_without_cells_says_so_in_one_line(tmp_path, capsys):
    folder = _stopped_sweep(tmp_path / "sweep-20261207T000000", sys.executable, runners=False)
    assert RunLog(folder).read()[0].runners == ()
    assert main(["sweep", "resume", str(folder)]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "no cells" in line


def _stopped_track(tmp_path: Path, argv: list[str]) -> Path:
    out = tmp_path / "out"
    folder = out / "track-20261207T000000-m-1"
    folder.mkdir(parents=True)
    (folder / layout.INCOMPLETE_FILE).write_text("stopped\n")
    call = {"argv": ["track", *argv, "--out", str(out)], "cwd": str(tmp_path)}
    (folder / layout.TRACK_CALL).write_text(json.dumps(call))
    return folder


@pytest.mark.parametrize(
    ("named", "said"),
    [
        (["--workload", "{evil}:make"], "--workload PATH.py:make"),
        (["--python", "{evil}"], "--python"),
        (["--wheels", "{wheels}"], "--wheels"),  # inside the results folder
    ],
    ids=["workload", "python", "wheels"],
)
def test_resume_of_a_track_call_runs_no_workload_or_interpreter_its_call_file_names(tmp_path, capsys, named, said):
    """A stopped track call's ``call.json`` is data: a workload of one's own not given again, or an interpreter it
    names, is one line and exit 2; nothing it names runs."""
    ran = tmp_path / "it-ran"
    evil = tmp_path / "evil.py"
    evil.write_text(f"open({str(ran)!r}, 'w')\ndef make():\n    return (lambda: None), ()\n")
    wheels = tmp_path / "out" / "wheels"  # a folder of wheels a results branch could hold: installed, then run
    wheels.mkdir(parents=True)
    folder = _stopped_track(tmp_path, [a.format(evil=evil, wheels=wheels) for a in named])
    assert main(["sweep", "resume", str(folder)]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert str(folder / layout.TRACK_CALL) in line and said in line
    assert not ran.exists()


def test_resume_of_a_track_call_whose_call_file_is_a_fifo_is_one_line_not_a_wait(tmp_path):
    """``call.json`` is read only where it is a regular file: a FIFO (or a link to a device) is never opened to wait."""
    import os
    import subprocess

    folder = _stopped_track(tmp_path, [])
    (folder / layout.TRACK_CALL).unlink()
    os.mkfifo(folder / layout.TRACK_CALL)
    done = subprocess.run(
        [sys.executable, "-m", "jaxmlp", "sweep", "resume", str(folder)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert layout.TRACK_CALL in done.stderr


def test_a_track_call_goes_on_only_from_a_stopped_folder_that_runs_what_it_chose(tmp_path):
    """A stopped call's folder in the results folder (a shared branch) is gone on with only where each interpreter
    it names lies in this machine's environments folder and its workloads are this call's own specs; else the call
    measures anew (the folder's interpreter and workload files never run)."""
    import shutil

    from jaxmlp.results.sweep.track_plan import stopped_call

    envs = tmp_path / "envs"
    python = envs / "jax-0.7.1-py311" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.symlink_to(sys.executable)
    out = tmp_path / "out"
    out.mkdir()
    planted = out / "evil" / "python"  # a script a results branch holds
    planted.parent.mkdir()
    planted.write_text("#!/bin/sh\n")
    name, stopped = "track-20261207T010000-m-1", out / "track-20261207T000000-m-1"
    for named, workloads in ((planted, ("scan",)), (python, ("scan", "mine.py:make"))):
        _stopped_sweep(stopped, str(named), workloads)
        assert stopped_call(out, name, ["0.7.1"], ("scan",), envs) is None
        shutil.rmtree(stopped)
    _stopped_sweep(stopped, str(python), ("scan",))
    assert stopped_call(out, name, ["0.7.1"], ("scan",), envs) == stopped
