"""What a resumed sweep may run: only what this machine chose (docs/reference/trust.md)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from jaxmlp.errors import JaxmlpError
from jaxmlp.measure.sweep.matrix import Runner
from jaxmlp.measure.sweep.settings import Measuring, is_builtin
from jaxmlp.measure.workload_names import workload_name


def _plain(path: str | os.PathLike[str]) -> Path:
    """``path`` absolute, its ``..`` parts taken out, its symbolic links kept (an environment's python is one)."""
    return Path(os.path.normpath(os.path.abspath(path)))


def in_envs(python: str, envs: Path) -> bool:
    """Whether ``python`` lies inside the environments folder ``envs`` (and exists)."""
    return _plain(python).is_relative_to(_plain(envs)) and Path(python).is_file()


def measuring(recorded: Measuring, given: Sequence[str], log: Path, folder: Path) -> Measuring:
    """``recorded`` with each own workload replaced by the ``given`` spec, or a `JaxmlpError` naming one not given."""
    by_name = {workload_name(spec): spec for spec in given}
    specs = []
    for spec in recorded.workloads:
        if is_builtin(spec):
            specs.append(spec)
        elif workload_name(spec) in by_name:
            specs.append(by_name[workload_name(spec)])
        else:
            raise JaxmlpError(
                f"{log} names the workload {spec!r}: a resumed sweep runs only code given on its command line; "
                f"give it again (--workload PATH.py:make)"
            )
    if recorded.profile_dir and not _plain(recorded.profile_dir).is_relative_to(_plain(folder)):
        raise JaxmlpError(f"{log} traces into {recorded.profile_dir!r}, outside the sweep's folder: not resumed")
    return dataclasses.replace(recorded, workloads=tuple(specs))


def runners(
    recorded: Sequence[Runner], envs: Path, given: Mapping[str, str], workloads: Sequence[str], log: Path
) -> tuple[Runner, ...]:
    """``recorded`` cells with the interpreters this machine chose; a `JaxmlpError` (exit 2) naming one it did not."""
    out = []
    for runner in recorded:
        python = given.get(runner.label, runner.python)
        if runner.label not in given and not in_envs(python, envs):
            raise JaxmlpError(
                f"{log} names the interpreter {python!r} for {runner.label}, not in this machine's environments "
                f"folder {envs}: give it again (--env {runner.label}=PYTHON) or --envs the folder that holds it"
            )
        out.append(
            dataclasses.replace(
                runner, python=python, measuring=measuring(runner.measuring, workloads, log, log.parent)
            )
        )
    return tuple(out)
