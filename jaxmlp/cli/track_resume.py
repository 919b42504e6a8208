"""``jaxmlp sweep resume FOLDER`` of a stopped ``jaxmlp track`` call: the call run again from its ``call.json``."""

from __future__ import annotations

import argparse
import contextlib
import json
from collections.abc import Sequence
from pathlib import Path

from jaxmlp.errors import JaxmlpError
from jaxmlp.measure.sweep.settings import is_builtin
from jaxmlp.measure.workload_names import workload_name
from jaxmlp.results.store import confined, layout


def resume(folder: Path, workloads: Sequence[str] = (), envs_folder: Path | None = None) -> int:
    """The stopped call in ``folder`` gone on with, its arguments parsed as ``jaxmlp track`` parses them; its exit code
    (the gate's). ``call.json`` is data (docs/reference/trust.md): what would run or write elsewhere is this command
    line's (`chosen_call`)."""
    from jaxmlp.cli import Parser
    from jaxmlp.cli import track as command

    if not (folder / layout.INCOMPLETE_FILE).is_file() or (folder / layout.TRACK_FILE).exists():
        raise JaxmlpError(
            f"{folder} is no stopped `jaxmlp track` call (no {layout.INCOMPLETE_FILE}): nothing to resume"
        )
    try:
        call = json.loads(confined.read_text(folder / layout.TRACK_CALL))  # a regular file only: never a FIFO
        argv, cwd = [str(a) for a in call["argv"]], str(call["cwd"])
    except (OSError, ValueError, KeyError, TypeError, confined.Refused) as e:
        raise JaxmlpError(
            f"{folder}: its {layout.TRACK_CALL} cannot be read ({type(e).__name__}): run the call's `jaxmlp track` "
            "again, with its options, which goes on from this folder"
        ) from None
    parser = Parser(prog="jaxmlp track")
    command.add_arguments(parser)
    args = chosen_call(parser.parse_args(argv[1:]), workloads, envs_folder, folder / layout.TRACK_CALL)
    args.argv = argv
    if not Path(cwd).is_dir():
        raise JaxmlpError(f"{folder}: the folder its call ran in, {cwd}, is gone: run `jaxmlp track` again there")
    with contextlib.chdir(cwd):
        if Path(args.out).resolve() != folder.resolve().parent:
            raise JaxmlpError(f"{folder} is no longer under the call's --out {args.out}: run `jaxmlp track` there")
        if args.wheels is not None and Path(args.wheels).resolve().is_relative_to(folder.resolve().parent):
            raise JaxmlpError(
                f"{folder / layout.TRACK_CALL} names wheels inside the results folder (--wheels {args.wheels}): a "
                "resumed call installs none the folder holds; run `jaxmlp track` again with its options"
            )
        print(f"Going on with the stopped call: jaxmlp {' '.join(argv)} (in {cwd})")
        return int(command.run(args))


def chosen_call(
    args: argparse.Namespace, workloads: Sequence[str], envs_folder: Path | None, call: Path
) -> argparse.Namespace:
    """A recorded call's arguments with what runs or writes taken from this command line (docs/reference/trust.md); a
    `JaxmlpError` where a workload of one's own is not given again."""
    given = {workload_name(spec): spec for spec in workloads}
    own = [spec for spec in args.workload or () if not is_builtin(spec)]
    for spec in own:
        if workload_name(spec) not in given:
            raise JaxmlpError(
                f"{call} names the workload {spec!r}: a resumed call runs only code given on its command line; "
                "give it again (--workload PATH.py:make)"
            )
    if args.python:
        raise JaxmlpError(
            f"{call} names interpreters to make environments with (--python): a resumed call runs none a file "
            "names; run `jaxmlp track` again with its options, which goes on from this folder"
        )
    args.workload = [given.get(workload_name(spec), spec) for spec in args.workload or ()]
    args.envs, args.site, args.message = envs_folder, None, None
    return args
