"""The Python each release's environment is made with: interpreters found on PATH, in pyenv's versions and given
with ``--python`` (fake ones here: scripts that answer the probe), one Python for a series where its releases allow
it, and a release no interpreter here supports named in one line before any environment is made."""

import json
import stat
import sys
from pathlib import Path

import pytest

from jaxmlp.cli import main
from jaxmlp.errors import JaxmlpError
from jaxmlp.measure.environments import envs, pythons
from jaxmlp.measure.environments.envs import Interpreter, Source

HERE = pythons.running()


def fake_python(path: Path, version: str, implementation: str = "cpython", venv: bool = True) -> Path:
    """A script that answers `pythons.PROBE` as an interpreter of ``version`` would."""
    said = {
        "executable": str(path),
        "version": [int(x) for x in version.split(".")],
        "implementation": implementation,
        "venv": venv,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho '{json.dumps(said)}'\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


@pytest.fixture
def machine(tmp_path, monkeypatch):
    """A PATH and a pyenv of fake interpreters (and no uv), the found interpreters forgotten before and after."""
    bin_ = tmp_path / "bin"
    fake_python(bin_ / "python3.12", "3.12.4")
    fake_python(bin_ / "python3.11", "3.11.2", implementation="pypy")  # not CPython: left out
    fake_python(bin_ / "python3.14", "3.14.0", venv=False)  # no venv module: left out
    root = tmp_path / "pyenv"
    fake_python(root / "versions" / "3.13.1" / "bin" / "python3", "3.13.1")
    fake_python(root / "versions" / "3.9.18" / "bin" / "python3", "3.9.18")  # older than jaxmlp's: not even asked
    monkeypatch.setenv("PATH", str(bin_))
    monkeypatch.setenv("PYENV_ROOT", str(root))
    pythons.interpreters.cache_clear()
    yield tmp_path
    pythons.interpreters.cache_clear()


def test_interpreters_are_found_on_path_and_in_pyenv_the_running_one_first(machine):
    found = pythons.interpreters()
    assert [i.version for i in found] == [HERE.version, (3, 12, 4), (3, 13, 1)]
    assert found[0].path == sys.executable and found[1].path == str(machine / "bin" / "python3.12")
    given = fake_python(machine / "mine" / "python", "3.12.9")
    assert pythons.interpreters((str(given),))[0] == Interpreter(str(given), (3, 12, 9))


def test_a_given_python_that_cannot_make_an_environment_is_one_line(machine):
    old = fake_python(machine / "old" / "python", "3.10.4")
    with pytest.raises(
        JaxmlpError, match=r"--python .*old/python: cannot make an environment with it: it is Python 3.10.4"
    ):
        pythons.interpreters((str(old),))
    with pytest.raises(JaxmlpError, match="it does not run"):
        pythons.interpreters((str(machine / "nothing"),))


P311, P312, P313 = (Interpreter(f"/p/3.{n}", (3, n, 0)) for n in (11, 12, 13))


def test_one_python_for_a_series_where_its_releases_allow_it_the_running_one_first():
    every = {(3, 11), (3, 12), (3, 13)}
    newer = {(3, 12), (3, 13)}
    assert set(pythons.choose(["0.9.0", "0.10.2"], {"0.9.0": every, "0.10.2": every}, [P311, P312, P313]).values()) == {
        P311
    }
    chosen = pythons.choose(
        ["0.10.2", "0.11.0", "0.12.1"], {"0.10.2": every, "0.11.0": newer, "0.12.1": newer}, [P311, P313, P312]
    )
    assert set(chosen.values()) == {P312}  # the nearest to the running one that supports them all


def test_a_series_that_must_cross_a_python_change_changes_once_and_the_step_is_marked():
    supported = {"0.4.30": {(3, 11)}, "0.5.0": {(3, 11), (3, 12)}, "0.6.0": {(3, 12)}, "0.7.0": {(3, 12)}}
    chosen = pythons.choose(list(supported), supported, [P311, P312])
    assert chosen == {"0.4.30": P311, "0.5.0": P311, "0.6.0": P312, "0.7.0": P312}
    assert pythons.crossings({v: i.words for v, i in chosen.items()}) == [("0.5.0", "0.6.0")]
    assert "0.4.30-0.5.0 on Python 3.11.0" in pythons.python_line(chosen)


def test_a_release_no_interpreter_here_supports_is_named_with_the_python_it_needs():
    supported = {"0.10.2": {(3, 11), (3, 12)}, "0.12.1": {(3, 12), (3, 13)}}
    with pytest.raises(JaxmlpError) as e:
        pythons.choose(["0.10.2", "0.12.1"], supported, [P311])
    assert str(e.value) == (
        "jax 0.12.1 needs Python 3.12 or 3.13, and no interpreter found here is one (found Python 3.11.0 on PATH, "
        "pyenv and uv): give one with --python /path/to/python3.12"
    )


def test_environments_of_two_pythons_are_two_and_old_ones_are_still_found(tmp_path):
    assert envs.env_path("0.12.1", tmp_path, python=P312).name == "jax-0.12.1-py312"
    assert envs.env_path("0.12.1", tmp_path, python=P313) != envs.env_path("0.12.1", tmp_path, python=P312)
    assert envs.env_path("0.9.0", tmp_path) == envs.env_path("0.9.0", tmp_path, python=HERE)  # the names made before
    folder = tmp_path / "wheels"
    assert envs.release_of("jax-0.12.1-py312") == "0.12.1"
    assert envs.release_of(envs.env_path("0.7.0", tmp_path, Source(folder), P312).name) is None  # not the index's
    assert envs.release_of(envs.env_path("0.7.0", tmp_path, Source(folder), P312).name, Source(folder)) == "0.7.0"
    made = envs.env_path("0.12.1", tmp_path, python=P312)
    made.mkdir()
    (made / envs.COMPLETE).write_text("1.0\n")
    assert envs.made_any("0.12.1", tmp_path) and not envs.is_made("0.12.1", tmp_path)
    assert pythons.made_under(["0.12.1"], [P311, P312], tmp_path, envs.INDEX) == P312


def wheels_for(folder: Path, version: str, tag: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"jax-{version}-py3-none-any.whl").write_bytes(b"")
    (folder / f"jaxlib-{version}-{tag}-{tag}-manylinux_2_27_x86_64.whl").write_bytes(b"")
    return folder


def test_a_release_needing_a_newer_python_is_refused_before_any_environment_is_made(machine, capsys, monkeypatch):
    """Only the running Python is found: a wheel folder's release whose jaxlib is for 3.15 only is named in one
    line with what it needs; nothing is made."""
    monkeypatch.setenv("PATH", str(machine / "empty"))
    monkeypatch.setenv("PYENV_ROOT", str(machine / "no-pyenv"))
    folder = wheels_for(machine / "wheels", "0.12.1", "cp315")
    root = machine / "envs"
    assert main(["sweep", "env", "0.12.1", "--wheels", str(folder), "--envs", str(root)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert "jax 0.12.1 needs Python 3.15" in err and "--python /path/to/python3.15" in err
    assert not any(root.glob("jax-*"))


def test_a_wheel_folder_release_gets_the_python_its_jaxlib_wheels_are_for(machine, tmp_path):
    folder = wheels_for(tmp_path / "wheels", "0.12.1", "cp312")
    chosen = pythons.for_releases(["0.12.1"], Source(folder), root=tmp_path / "envs", say=lambda line: None)
    assert chosen["0.12.1"].version == (3, 12, 4)


def test_the_python_option_is_declared_once_and_taken_by_every_sweep_command():
    from jaxmlp.cli import options

    assert options.PYTHON in options.SHARED and options.PYTHON.flags == ("--python",)


def test_the_python_of_each_release_is_shown_and_a_step_across_a_change_of_python_marked():
    import pandas as pd

    from jaxmlp.report.sweep_summaries import python_lines
    from jaxmlp.results.sweep.views import pythons_of

    rows = pd.DataFrame({"release": ["0.10.2", "0.10.2", "0.12.1"], "python": ["3.12.1", "3.12.1", "3.12.1"]})
    assert python_lines(pythons_of(rows)) == ("Python 3.12.1 for every release",)
    ran = {"0.5.0": "3.11.7", "0.4.30": "3.11.7", "0.6.0": "3.12.1"}
    assert python_lines(ran) == (
        "Python 3.11.7 for 0.4.30, 0.5.0; Python 3.12.1 for 0.6.0",
        "the step 0.5.0 -> 0.6.0 crosses a change of Python (3.11.7 -> 3.12.1): what it shows may be the Python's",
    )
    assert pythons_of(pd.DataFrame({"release": ["0.4.30"], "python": [None]})) == {}  # files naming no Python


def test_a_given_python_is_preferred_to_environments_made_before_on_another(machine, tmp_path):
    folder = wheels_for(tmp_path / "wheels", "0.7.0", "cp311")
    wheels_for(folder, "0.7.0", "cp312")
    root = tmp_path / "envs"
    made = envs.env_path("0.7.0", root, Source(folder))  # on the running Python, made before
    made.mkdir(parents=True)
    (made / envs.COMPLETE).write_text("1.0\n")
    quiet = {"root": root, "say": lambda line: None}
    assert pythons.for_releases(["0.7.0"], Source(folder), **quiet)["0.7.0"] == HERE
    given = str(machine / "bin" / "python3.12")
    assert pythons.for_releases(["0.7.0"], Source(folder), (given,), **quiet)["0.7.0"].path == given
