"""`jaxmlp` on the command line: one module per command, each parsing its arguments into settings and calling the
library, imported only when that command runs (`_command`). Bad input ends in one line and a non-zero exit, never a
traceback."""

from __future__ import annotations

import argparse
import importlib
import os
import platform
import signal
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from types import ModuleType
from typing import Any

from jaxmlp.errors import EXIT_ERROR, Interrupted, JaxmlpError
from jaxmlp.report.escape import terminal, terminal_output
from jaxmlp.stops import stop_on_signals

COMMANDS = {
    "train": "train the tutorial's MLP and print its per-epoch lines",
    "profile": "capture an XLA profiler trace of training steps, for TensorBoard",
    "tensorboard": "serve TensorBoard with the profile plugin on 127.0.0.1 over a traces folder",
    "summary": "the answer of a results file or folder: a benchmark run, a sweep's verdicts, a bisection, training",
    "report": "render every result under a folder as summary.md, index.html (with plots) and CSV tables",
    "compare": "is NEW slower than BASELINE? ratio of medians with Moses's interval, Mann-Whitney U",
    "scaling": "data-parallel scaling: the sharded epoch, step and compile time for 1, 2, 4, 8 devices",
    "tta": "time to accuracy (MLPerf style): wall time from a run's start until the test accuracy reaches a target",
    "sweep": "did a jax/jaxlib release make a workload slower? the version matrix, bisection, XLA flags",
    "track": "measure each new jax/jaxlib release against the last one tracked and the pinned one: a CI gate",
    "roofline": "each workload against this machine's FLOP rate and memory bandwidth: which ceiling binds",
}
"""Each command and its line in ``jaxmlp --help``; its module is ``jaxmlp.cli.<command>``."""


class Parser(argparse.ArgumentParser):
    """argparse with errors as one line pointing to --help, said by the innermost (sub)command they concern."""

    def error(self, message: str):  # type: ignore[no-untyped-def]  # argparse's NoReturn
        self.exit(EXIT_ERROR, f"{self.prog}: error: {message} (see {self.prog} --help)\n")

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[no-untyped-def]  # argparse's
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras


class Deferred(Parser):
    """A subcommand's parser whose module adds its description, arguments and ``run`` when first needed (``load``)."""

    def __init__(self, *args: Any, load: Callable[[argparse.ArgumentParser], None] | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._load = load

    def load(self) -> None:
        """Its module's part added, once."""
        load, self._load = self._load, None
        if load is not None:
            load(self)

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[no-untyped-def]  # argparse's
        self.load()
        return super().parse_known_args(args, namespace)  # type: ignore[no-untyped-call]  # Parser's, as argparse's

    def format_help(self) -> str:
        self.load()
        return super().format_help()


def version_line() -> str:
    """``jaxmlp --version``: this package's version and its JAX's, read from metadata without importing them."""

    from importlib import metadata  # here, not at the top: it takes a while, and a stop is handled once main runs

    def of(package: str) -> str:
        try:
            return metadata.version(package)
        except metadata.PackageNotFoundError:
            return "not installed"

    return f"jaxmlp {of('jaxmlp')} (jax {of('jax')}, jaxlib {of('jaxlib')}; Python {platform.python_version()})"


def _command(name: str) -> ModuleType:
    """The command's module, imported with stops `held` (a stop inside jaxlib's extension modules would abort)."""
    from jaxmlp.stops import held

    with held():
        return importlib.import_module(f"jaxmlp.cli.{name}")


def build_parser(commands: Iterable[str] = COMMANDS) -> Parser:
    """The ``jaxmlp`` parser; the arguments of ``commands`` only (the others are listed, not loaded)."""
    wanted = set(commands)
    parser = Parser(prog="jaxmlp", description="Benchmark and profile the JAX MNIST tutorial's training pipeline.")
    parser.add_argument(
        "--version", action="version", version=version_line(), help="print jaxmlp's version and jax's, and exit"
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser, metavar="COMMAND")
    for name, help in COMMANDS.items():
        command = sub.add_parser(name, help=help, description=help[0].upper() + help[1:] + ".")
        if name in wanted:
            module = _command(name)
            module.add_arguments(command)
            command.set_defaults(run=getattr(module, "run", None))  # sweep's: its subcommand's
    _name_commands(parser)
    return parser


def every_parser(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ("jaxmlp",)
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Each (command path, parser) from ``parser`` down, its subcommands' included, each `Deferred` one loaded."""
    if isinstance(parser, Deferred):
        parser.load()
    yield path, parser
    for action in parser._actions:  # argparse keeps its subparsers only here
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from every_parser(sub, (*path, name))


def _name_commands(parser: argparse.ArgumentParser) -> None:
    """Each parser's ``prog`` as the default ``prog`` of what it parses, so the innermost command names its errors."""
    parser.set_defaults(prog=parser.prog)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                _name_commands(sub)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command ``argv`` names; a stop, from the first line on, ends it in one line and exit 128 + the signal."""
    given = list(sys.argv[1:] if argv is None else argv)
    name = next((a for a in given if not a.startswith("-")), None)
    prog = f"jaxmlp {name}" if name in COMMANDS else "jaxmlp"  # until the arguments name the (sub)command
    try:
        with stop_on_signals(), terminal_output():  # a result file's text never reaches the terminal as codes
            if name in COMMANDS:
                given = getattr(_command(name), "normalized", list)(given)
            args = build_parser([name] if name in COMMANDS else []).parse_args(given)
            args.argv = given  # as given: the processes of a distributed run are started with the same arguments
            prog = args.prog
            return int(args.run(args))
    except JaxmlpError as e:
        print(terminal(f"{prog}: error: {e}"), file=sys.stderr)
        return e.exit_code
    except ModuleNotFoundError as e:  # torch, grain...: the light install (`pip install jaxmlp`) leaves them out
        from jaxmlp.installs import tutorial_line

        if (line := tutorial_line(e.name)) is None:
            raise
        print(f"{prog}: error: {line}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:  # `jaxmlp summary reports | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error when Python flushes at exit
        return 128 + signal.SIGPIPE
    except KeyboardInterrupt as e:  # Ctrl-C, or SIGTERM/SIGHUP (`Interrupted`): our children are stopped by now
        stop_children()  # and the libraries' (DataLoader's, Grain's workers)
        stopped = e if isinstance(e, Interrupted) else Interrupted()
        print(f"{prog}: stopped by {stopped}; {stopped.kept or 'nothing was written'}", file=sys.stderr)
        return stopped.exit_code


def stop_children(grace: float = 3.0) -> None:
    """Every `multiprocessing` child of this process killed and reaped, so none outlives an interrupted command."""
    import multiprocessing

    children = multiprocessing.active_children()
    for child in children:
        child.kill()
    for child in children:
        child.join(grace)
