"""``jaxmlp sweep resume FOLDER`` of a stopped ``jaxmlp track`` call: the call run again with its own arguments, in
its own folder (``call.json``), so that it goes on from the stopped folder's samples and files its ``track.json``
as the next ``jaxmlp track`` would."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from jaxmlp.errors import JaxmlpError
from jaxmlp.results.store import layout


def resume(folder: Path) -> int:
    """The stopped call in ``folder`` gone on with: its arguments parsed as ``jaxmlp track`` parses them, run from
    the folder it was run in; its exit code (the gate's)."""
    from jaxmlp.cli import Parser
    from jaxmlp.cli import track as command

    if not (folder / layout.INCOMPLETE_FILE).is_file() or (folder / layout.TRACK_FILE).exists():
        raise JaxmlpError(
            f"{folder} is no stopped `jaxmlp track` call (no {layout.INCOMPLETE_FILE}): nothing to resume"
        )
    try:
        call = json.loads((folder / layout.TRACK_CALL).read_text(encoding="utf-8"))
        argv, cwd = [str(a) for a in call["argv"]], str(call["cwd"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise JaxmlpError(
            f"{folder}: its {layout.TRACK_CALL} cannot be read ({type(e).__name__}): run the call's `jaxmlp track` "
            "again, with its options, which goes on from this folder"
        ) from None
    parser = Parser(prog="jaxmlp track")
    command.add_arguments(parser)
    args = parser.parse_args(argv[1:])
    args.argv = argv
    if not Path(cwd).is_dir():
        raise JaxmlpError(f"{folder}: the folder its call ran in, {cwd}, is gone: run `jaxmlp track` again there")
    with contextlib.chdir(cwd):
        if Path(args.out).resolve() != folder.resolve().parent:
            raise JaxmlpError(f"{folder} is no longer under the call's --out {args.out}: run `jaxmlp track` there")
        print(f"Going on with the stopped call: jaxmlp {' '.join(argv)} (in {cwd})")
        return int(command.run(args))
