"""A workload's spec and the name its results carry: plain text, no JAX."""

from __future__ import annotations

import ast
import os
import sys
from collections.abc import Iterable
from importlib.machinery import PathFinder
from pathlib import Path

from jaxmlp.errors import JaxmlpError
from jaxmlp.registry import SWEEP_WORKLOADS

__all__ = ["check_specs", "parse_spec", "spec_name", "workload_name"]


def parse_spec(spec: str) -> tuple[str, str]:
    """``file.py:make`` or ``module:make`` as (where, function); the function is ``make`` when not named."""
    where, _, attribute = spec.rpartition(":") if ":" in spec else (spec, "", "make")
    if not where or not attribute.isidentifier():
        raise JaxmlpError(f"workload {spec!r}: name it as path/to/file.py:make or package.module:make")
    return where, attribute


def spec_name(spec: str) -> str:
    """The name a user workload's results carry (``bench/workloads/scan_heavy.py:make`` -> ``scan_heavy``)."""
    where, attribute = parse_spec(spec)
    stem = Path(where).stem if where.endswith(".py") else where.rpartition(".")[2]
    return stem if attribute == "make" else f"{stem}.{attribute}"


def workload_name(spec: str) -> str:
    """The name a workload's results carry: a built-in's own, else `spec_name`."""
    return spec if spec in SWEEP_WORKLOADS else spec_name(spec)


def _binds(body: list[ast.stmt], name: str) -> bool:
    for node in body:
        if isinstance(node, (ast.If, ast.Try, ast.With)):
            handlers = [h.body for h in node.handlers] if isinstance(node, ast.Try) else []
            parts = [node.body, *handlers, *(getattr(node, k, []) for k in ("orelse", "finalbody"))]
            if any(_binds(part, name) for part in parts):
                return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return True
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(n, ast.Name) and n.id == name for t in targets for n in ast.walk(t)):
                return True
        if isinstance(node, (ast.Import, ast.ImportFrom)) and any(
            (a.asname or a.name.split(".")[0]) == name or a.name == "*" for a in node.names
        ):
            return True
    return False


def check_spec(spec: str) -> None:
    """A user workload's file found and its function defined, unrun; a one-line `JaxmlpError` where not."""
    where, attribute = parse_spec(spec)
    if not where.endswith(".py"):
        top = where.split(".")[0]  # found without importing it: the worker processes import it from this folder
        if top not in sys.builtin_module_names and PathFinder.find_spec(top, [os.getcwd(), *sys.path]) is None:
            raise JaxmlpError(
                f"--workload {spec!r}: no module {top} in this folder or on the path: give path/to/file.py:make or "
                "an importable module"
            )
        return
    path = Path(where)
    if not path.is_file():
        raise JaxmlpError(
            f"--workload {spec!r}: no file {where}: give the path of a Python file defining {attribute}()"
        )
    try:
        tree = ast.parse(path.read_bytes(), filename=where)
    except (OSError, SyntaxError, ValueError) as e:
        raise JaxmlpError(f"--workload {spec!r}: {where} cannot be imported ({type(e).__name__}: {e})") from None
    if not _binds(tree.body, attribute):  # also under an if, try or with
        raise JaxmlpError(f"--workload {spec!r}: {where} defines no function {attribute}: add def {attribute}():")


def check_specs(specs: Iterable[str]) -> None:
    """Each user workload of ``specs`` checked (`check_spec`); the built-ins need none."""
    for spec in specs:
        if spec not in SWEEP_WORKLOADS:
            check_spec(spec)
