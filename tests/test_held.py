"""Packages held below a release in every release environment from the index (`jaxmlp.installs.HELD`): an
environment made before the hold gets it at its next use, one from a wheel folder keeps what the folder holds, and a
hold pip cannot install leaves the environment as it is, said in one line."""

import os
import stat
from pathlib import Path

from jaxmlp import installs
from jaxmlp.measure.environments import envs
from jaxmlp.measure.environments.envs import Source

PIP = """#!/bin/sh
# a stand-in for the environment's python: `-m pip install ... ml_dtypes<0.7` moves the dist-info to 0.6.0
echo "$@" >> "{env}/pip-calls"
{action}
"""


def made_before_the_hold(root: Path, version: str, action: str) -> Path:
    """A complete environment of ``version`` with ml_dtypes 0.7.0, whose python runs ``action`` for pip."""
    env = envs.env_path(version, root)
    site = env / "lib" / "python3.11" / "site-packages"
    (site / "ml_dtypes-0.7.0.dist-info").mkdir(parents=True)
    (site / "numpy-2.4.6.dist-info").mkdir()
    (env / envs.COMPLETE).write_text("1.0\n")
    python = envs.python_of(env)
    python.parent.mkdir(parents=True)
    python.write_text(PIP.format(env=env, action=action.format(env=env)))
    python.chmod(python.stat().st_mode | stat.S_IEXEC)
    return env


def test_the_hold_is_one_list_for_the_tests_and_the_environments():
    assert installs.held() == [f"{name}<{below}" for name, below in installs.HELD.items()] == ["ml_dtypes<0.7"]
    assert Source(None).held() == installs.held()
    assert Source(Path("wheels")).held() == []  # a wheel folder's environment has what the folder holds


def test_an_environment_made_before_the_hold_gets_it_at_its_next_use(tmp_path):
    site = "lib/python3.11/site-packages"
    env = made_before_the_hold(
        tmp_path, "0.4.33", f'mv "{{env}}/{site}/ml_dtypes-0.7.0.dist-info" "{{env}}/{site}/ml_dtypes-0.6.0.dist-info"'
    )
    assert envs.unheld(env) == ["ml_dtypes"] and envs.unheld(env, Source(tmp_path)) == []
    said: list[str] = []
    assert envs.make_env("0.4.33", tmp_path, said.append) == envs.python_of(env)
    assert said == ["Holding ml_dtypes<0.7 in the environment of jax 0.4.33 (made before the hold)"]
    assert envs.unheld(env) == [] and "ml_dtypes<0.7" in (env / "pip-calls").read_text()
    envs.make_env("0.4.33", tmp_path, said.append)  # held now: nothing more said, pip not run again
    assert len(said) == 1 and len((env / "pip-calls").read_text().splitlines()) == 1


def test_a_hold_pip_cannot_install_leaves_the_environment_as_it_is(tmp_path):
    env = made_before_the_hold(tmp_path, "0.4.33", "exit 1")
    said: list[str] = []
    assert envs.make_env("0.4.33", tmp_path, said.append) == envs.python_of(env)
    assert said[-1] == (
        f"could not install ml_dtypes<0.7 into {env}: kept as it is, not tried again (its processes import ml_dtypes "
        f"slower; remove {envs.UNHELD} there to try again)"
    )
    envs.make_env("0.4.33", tmp_path, said.append)  # not tried again: nothing said, pip not run
    assert len(said) == 2 and len((env / "pip-calls").read_text().splitlines()) == 1
    assert (env / envs.COMPLETE).exists() and os.path.isdir(env / "lib/python3.11/site-packages/numpy-2.4.6.dist-info")
