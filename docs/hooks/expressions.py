"""What a figure's expression may say, and the value a path of keys reaches in a file.

An expression is calls of the figure functions, numbers, strings and + - * / between them: nothing else
(`evaluate`). ``get``'s path walks a file's keys and lists (`walk`).
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import Any


class FigureError(Exception):
    """A figure that cannot be read from its file."""


def entry(mapping: dict[str, Any], name: str) -> Any:
    """``mapping[name]``; a name it lacks is a `FigureError` naming those it has."""
    if name not in mapping:
        raise FigureError(f"no {name!r} among {sorted(mapping)}")
    return mapping[name]


def walk(value: Any, parts: list[str], where: str) -> Any:
    """The value ``parts`` reach from ``value`` (the path's syntax: `figure_functions.Figures.get`)."""
    for i, part in enumerate(parts):
        if part == "*":
            return [walk(item, parts[i + 1 :], where) for item in value]
        if ":" in part and isinstance(value, list):  # a slice: ``1:`` all but the first
            start, stop = (int(s) if s else None for s in part.split(":", 1))
            value = value[start:stop]
        elif part.startswith("?") and isinstance(value, list):  # ``?a=1``: every item with those values
            wanted = [condition.split("=", 1) for condition in part[1:].split("&")]
            value = [item for item in value if all(str(item.get(k)) == v for k, v in wanted)]
            if not value:
                raise FigureError(f"no items with {part[1:]} in {where}")
        elif "=" in part and isinstance(value, list):
            wanted = [condition.split("=", 1) for condition in part.split("&")]  # ``a=1&b=2``: both
            found = [item for item in value if all(str(item.get(k)) == v for k, v in wanted)]
            if len(found) != 1:
                raise FigureError(f"{len(found)} items with {part} in {where}")
            value = found[0]
        elif isinstance(value, list):
            value = value[int(part)]
        elif isinstance(value, dict):
            value = entry(value, part)
        else:
            raise FigureError(f"{part!r} in {where}: {value!r} has no parts")
    return value


_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


def evaluate(node: ast.expr, functions: dict[str, Callable[..., Any]]) -> Any:
    """Calls of the figure functions, numbers, strings and + - * / between them: nothing else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float | str):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left, right = evaluate(node.left, functions), evaluate(node.right, functions)
        return _OPERATORS[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -evaluate(node.operand, functions)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in functions:
        args = [evaluate(a, functions) for a in node.args]
        kwargs = {k.arg: evaluate(k.value, functions) for k in node.keywords if k.arg}
        return functions[node.func.id](*args, **kwargs)
    raise FigureError(f"not a figure expression: {ast.unparse(node)}")
