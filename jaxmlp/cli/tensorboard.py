"""``jaxmlp tensorboard``: TensorBoard with its profile plugin on 127.0.0.1, over a folder of captures."""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys

from jaxmlp.cli import options
from jaxmlp.errors import JaxmlpError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = "Start TensorBoard (with its profile plugin) on 127.0.0.1 over --logdir; stop it with Ctrl-C."
    options.add(parser, options.LOGDIR)
    parser.add_argument("--port", type=options.whole_number, default=6006, help="(default: %(default)s)")
    parser.set_defaults(run=run)


def tensorboard_command(logdir: str, port: int) -> list[str]:
    """TensorBoard with the profile plugin, bound to 127.0.0.1 only."""
    return [sys.executable, "-m", "tensorboard.main", "--logdir", str(logdir), "--host", "127.0.0.1", "--port",
            str(port)]  # fmt: skip


def run(args: argparse.Namespace) -> int:
    for module, package in (("tensorboard", "tensorboard"), ("xprof", "tensorboard-plugin-profile")):
        if importlib.util.find_spec(module) is None:
            raise JaxmlpError(f"{package} is not installed: pip install {package} (or pip install -e .)")
    if not os.path.isdir(args.logdir):
        raise JaxmlpError(f"no traces folder {args.logdir}: capture one with jaxmlp profile --logdir {args.logdir}")
    print(f"TensorBoard on http://127.0.0.1:{args.port}/#profile over {args.logdir} (Ctrl-C stops it)", flush=True)
    try:
        return subprocess.run(tensorboard_command(args.logdir, args.port)).returncode
    except KeyboardInterrupt:
        return 0
