"""``jaxmlp tensorboard``: TensorBoard with its profile plugin on 127.0.0.1, over a folder of captures."""

from __future__ import annotations

import argparse
import importlib.util
import os
import socket
import subprocess
import sys

from jaxmlp import errors
from jaxmlp.cli import options
from jaxmlp.errors import JaxmlpError
from jaxmlp.measure.workers import guarded
from jaxmlp.stops import deaf_to_ctrl_c


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Start TensorBoard (with its profile plugin) on 127.0.0.1 over --logdir; stop it with Ctrl-C (exit 130)."
    )
    options.add(
        parser,
        options.LOGDIR,
        options.own(
            "--port", "port on 127.0.0.1; 0 picks a free one (default: %(default)s)", 6006, options.whole_number
        ),
    )


def tensorboard_command(logdir: str, port: int) -> list[str]:
    """TensorBoard with the profile plugin, bound to 127.0.0.1 only."""
    return [sys.executable, "-m", "tensorboard.main", "--logdir", str(logdir), "--host", HOST, "--port", str(port)]


HOST = "127.0.0.1"


def free_port(port: int) -> int:
    """``port`` if nothing listens on it on 127.0.0.1 (a free one for 0), else one line saying what to do."""
    if not 0 <= port <= 65535:
        raise JaxmlpError(f"--port {port}: a port is 0 to 65535 (0 picks a free one)")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((HOST, port))
        except OSError as e:
            raise JaxmlpError(
                f"--port {port}: cannot listen on {HOST}:{port} ({e.strerror}): another program "
                f"(another TensorBoard?) has it; give another --port, or --port 0 for a free one"
            ) from None
        return int(probe.getsockname()[1])


def run(args: argparse.Namespace) -> int:
    for module, package in (("tensorboard", "tensorboard"), ("xprof", "tensorboard-plugin-profile")):
        if importlib.util.find_spec(module) is None:
            raise JaxmlpError(f"{package} is not installed: pip install {package} (or pip install 'jaxmlp[tutorial]')")
    errors.file_not_folder(
        "--logdir", args.logdir, "give the folder `jaxmlp profile --logdir DIR` captured its traces into"
    )
    if not os.path.isdir(args.logdir):
        raise JaxmlpError(f"no traces folder {args.logdir}: capture one with jaxmlp profile --logdir {args.logdir}")
    port = free_port(args.port)  # checked before announcing it (the probe is closed again for TensorBoard)
    print(f"TensorBoard on http://{HOST}:{port}/#profile over {args.logdir} (Ctrl-C stops it)", flush=True)
    with deaf_to_ctrl_c():  # a terminal's Ctrl-C would reach TensorBoard while it imports: this command stops it
        server = subprocess.Popen(guarded(tensorboard_command(args.logdir, port)))  # it dies with this command
    try:
        code = server.wait()
        return 128 - code if code < 0 else code  # killed by signal N: 128 + N, as a shell says it
    finally:  # Ctrl-C or SIGTERM (`Interrupted`): TensorBoard stopped before the one line
        stop(server)


def stop(server: subprocess.Popen[bytes], grace: float = 5.0) -> None:
    """``server`` ended: asked (SIGTERM), then killed after ``grace`` seconds."""
    if server.poll() is None:
        server.terminate()
        try:
            server.wait(grace)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
