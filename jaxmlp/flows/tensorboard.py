"""TensorBoard with its profile plugin on 127.0.0.1 over a folder of captures (``jaxmlp tensorboard``), stopped with
this command."""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys

from jaxmlp import errors
from jaxmlp.errors import JaxmlpError
from jaxmlp.measure.workers import guarded
from jaxmlp.stops import deaf_to_ctrl_c

HOST = "127.0.0.1"


def tensorboard_command(logdir: str, port: int) -> list[str]:
    """TensorBoard with the profile plugin, bound to 127.0.0.1 only."""
    return [sys.executable, "-m", "tensorboard.main", "--logdir", str(logdir), "--host", HOST, "--port", str(port)]


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


def serve(*, logdir: str, port: int) -> int:
    """TensorBoard over ``logdir`` on ``port`` (0: a free one) until it ends or this command is stopped; its exit
    code (killed by signal N: 128 + N)."""
    for module, package in (("tensorboard", "tensorboard"), ("xprof", "tensorboard-plugin-profile")):
        if importlib.util.find_spec(module) is None:
            raise JaxmlpError(f"{package} is not installed: pip install {package} (or pip install 'jaxmlp[tutorial]')")
    errors.file_not_folder("--logdir", logdir, "give the folder `jaxmlp profile --logdir DIR` captured its traces into")
    if not os.path.isdir(logdir):
        raise JaxmlpError(f"no traces folder {logdir}: capture one with jaxmlp profile --logdir {logdir}")
    port = free_port(port)  # checked before announcing it (the probe is closed again for TensorBoard)
    print(f"TensorBoard on http://{HOST}:{port}/#profile over {logdir} (Ctrl-C stops it)", flush=True)
    with deaf_to_ctrl_c():  # a terminal's Ctrl-C would reach TensorBoard while it imports: this command stops it
        server = subprocess.Popen(guarded(tensorboard_command(logdir, port)))  # it dies with this command
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
