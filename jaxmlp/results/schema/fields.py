"""The types of a result file's fields, checked when it is read: a wrong one is a `JaxmlpError` naming it."""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar, cast

from jaxmlp import jsonio, registry
from jaxmlp.errors import JaxmlpError

T = TypeVar("T")

NUMBER = "a number"
WHOLE = "a whole number"
TEXT = "text"
FLAG = "true or false"
OBJECT = "an object"
LIST = "a list"
WHOLE_LIMIT = 2**53
"""The largest whole number a result file may hold (any count jaxmlp writes is far below it)."""

METADATA_FIELDS: Mapping[str, str | None] = {
    **dict.fromkeys(
        ("jax", "jaxlib", "torch", "torchvision", "python", "numpy", "commit", registry.HOST, registry.CPU_MODEL), TEXT
    ),
    **dict.fromkeys(("cpu_count", "cpu_affinity"), WHOLE),
    **dict.fromkeys(
        ("xla_flags", "jax_default_matmul_precision", "size", "rounds_asked", "sweep", "sweep_label"), None
    ),
    "processes": WHOLE,
    "injected_slowdown": None,
    **dict.fromkeys(("backend", "device_kind", "precision"), TEXT),
    "partial": None,
    "machine_cpu": TEXT,
    "machine_cores": WHOLE,
    **dict.fromkeys(("machine_backend", "machine_device", "machine_name"), TEXT),
}
"""A run's metadata that each of its benchmark rows carries (`jaxmlp.results.store.rows.METADATA`, in this order),
each field with its type where one is checked (None: any scalar, or a number by its name's ending)."""

ROW_FIELDS: Mapping[str, str] = {
    **dict.fromkeys(
        (
            "batch_size",
            "workers",
            "devices",
            "process_count",
            "process_index",
            "global_device_count",
            "epoch",
            "epochs",
            "steps",
            "samples",
            "seed",
            "calls",
            "round_calls",
            "rounds",
            "m",
            "n",
            "k",
            "torch_threads",
            "scan_unroll",
        ),
        WHOLE,
    ),
    **dict.fromkeys(
        (
            "pipeline",
            "variant",
            "library",
            "workload",
            "kernel",
            "shape",
            "dataset",
            "timestamp",
            "peak_rss_scope",
        ),
        TEXT,
    ),
    **{f"config_{key}": WHOLE for key in ("batch_size", "workers", "epochs", "seed", "limit", "processes")},
    **{f"config_{key}": TEXT for key in ("pipeline", "precision", "dataset", "backend")},  # `jaxmlp train`'s settings
    **dict.fromkeys(("reached", "diverged"), FLAG),
    **{key: wanted for key, wanted in METADATA_FIELDS.items() if wanted is not None},
}
"""The type of each field the tables read by name (null allowed); others by `NUMBER_ENDINGS`, else any scalar."""

NUMBER_ENDINGS = (
    "seconds",
    "_bytes",
    "flops",
    "_per_second",
    "_share",
    "_ratio",
    "_difference",
    "_accuracy",
    "_loss",
    "transcendentals",
    "step_size",
    "slowdown",
    "target",
)
"""The endings of the field names that hold a number (``compile_seconds``, ``peak_rss_bytes``, ``step_size``...)."""


def shown(value: object) -> str:
    """How a wrong value is named in the error: null, a list, an object, or the value itself (cut short)."""
    if value is None:
        return "null"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, (list, tuple)):
        return "a list"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


class DamagedField(JaxmlpError):
    """A results file with a field of the wrong type: its line names the field and the fix, and says all."""


def wrong(where: str, value: object, wanted: str) -> DamagedField:
    """The one line for a field of the wrong type."""
    return DamagedField(
        f"field {where} is {shown(value)}, not {wanted}: the file was damaged or edited; "
        "restore it, or move it out of the results folder and measure again"
    )


def missing(where: str) -> JaxmlpError:
    """The one line for a field that is not there."""
    return JaxmlpError(
        f"field {where} is missing: the file was damaged or edited, or is not one jaxmlp wrote; "
        "restore it, or move it out of the results folder and measure again"
    )


def is_a(value: object, wanted: str) -> bool:
    """Whether ``value`` is of the type ``wanted`` names (`NUMBER`, `WHOLE`, `TEXT`, `FLAG`, `OBJECT`, `LIST`)."""
    if wanted == NUMBER:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if wanted == WHOLE:
        if not is_a(value, NUMBER):
            return False
        count = cast(float, value)  # a count: within what a 64-bit integer column and a float hold exactly
        return abs(count) <= WHOLE_LIMIT and float(count).is_integer()
    if wanted == TEXT:
        return isinstance(value, str)
    if wanted == FLAG:
        return isinstance(value, bool)
    if wanted == OBJECT:
        return isinstance(value, Mapping)
    if wanted == LIST:
        return isinstance(value, list)
    raise AssertionError(wanted)


def typed(value: object, where: str, wanted: str, *, null: bool = False) -> Any:
    """``value`` if it is ``wanted`` (or null, where ``null``), else `wrong`."""
    if (value is None and null) or (value is not None and is_a(value, wanted)):
        return value
    raise wrong(where, value, wanted)


def field(doc: Mapping[str, Any], key: str, where: str, wanted: str, *, null: bool = False) -> Any:
    """``doc[key]``, present and ``wanted`` (or null, where ``null``); missing: a `JaxmlpError` naming it."""
    if key not in doc:
        raise missing(where + key)
    return typed(doc[key], where + key, wanted, null=null)


def optional(doc: Mapping[str, Any], key: str, where: str, wanted: str, default: Any = None) -> Any:
    """``doc[key]`` where it is ``wanted``; ``default`` where it is missing or null; else `wrong`."""
    value = doc.get(key)
    return default if value is None else typed(value, where + key, wanted)


def wanted_of(key: str, types: Mapping[str, str] = ROW_FIELDS) -> str | None:
    """The type ``key`` must have (`ROW_FIELDS`, then by its name's ending), or None where any scalar does."""
    if key in types:
        return types[key]
    return NUMBER if key.endswith(NUMBER_ENDINGS) else None


def scalars(
    doc: object,
    where: str,
    nested: Mapping[str, str] | None = None,
    types: Mapping[str, str] = ROW_FIELDS,
) -> dict[str, Any]:
    """``doc`` as a dict of scalar fields (number, text, true/false, null), each of its type (`wanted_of`) where
    one is known; ``nested``: the fields that hold an object or a list instead (null allowed)."""
    fields = typed(doc, where, OBJECT)
    prefix = f"{where}." if where else ""
    for key, value in fields.items():
        if value is None:
            continue
        if nested and key in nested:
            typed(value, prefix + str(key), nested[key])
            continue
        if isinstance(value, (Mapping, list)):
            raise wrong(prefix + str(key), value, "a number, text, true/false or null")
        if (wanted := wanted_of(str(key), types)) is not None:
            typed(value, prefix + str(key), wanted)
    return dict(fields)


def numbers(values: object, where: str) -> tuple[float, ...]:
    """A list of numbers (a benchmark's samples), each checked."""
    items: Sequence[Any] = typed(values, where, LIST)
    return tuple(float(typed(x, f"{where}[{i}]", NUMBER)) for i, x in enumerate(items))


SIMPLE = {str: TEXT, bool: FLAG, int: WHOLE, float: NUMBER}
"""The type each plain annotation reads (a float may be null: NaN, as `jsonio` writes it)."""


def record(cls: type[T], doc: object, where: str = "") -> T:
    """A dataclass from a file's object (`jsonio.from_json`), each field first checked against its annotation."""
    check(cls, doc, where)
    return jsonio.from_json(cls, doc)  # type: ignore[arg-type]


def check(kind: Any, value: object, where: str) -> None:
    """``value`` checked against the type ``kind``: a dataclass's fields (each without a default present, any other
    where not null), a list's items and an object's values in turn; a wrong one is `wrong`, a missing one `missing`."""
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    at = f"{where}." if where else ""
    if origin in (typing.Union, types.UnionType):
        if value is not None:
            (inner,) = (a for a in args if a is not type(None))  # X | None
            check(inner, value, where)
    elif dataclasses.is_dataclass(kind):
        doc, hints = typed(value, where, OBJECT), jsonio.hints(kind)  # type: ignore[arg-type]
        for f in dataclasses.fields(kind):
            required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            if required and f.name not in doc:
                raise missing(at + f.name)
            if required or doc.get(f.name) is not None:
                check(hints[f.name], doc[f.name], at + f.name)
    elif kind in SIMPLE:
        typed(value, where, SIMPLE[kind], null=kind is float)
    elif origin is tuple or origin is list:
        items = typed(value, where, LIST)
        each = args[:1] * len(items) if args[1:] == (...,) or origin is list else args
        if len(each) != len(items):
            raise wrong(where, items, f"a list of {len(each)}")
        for i, (k, v) in enumerate(zip(each, items)):
            check(k, v, f"{where}[{i}]")
    elif origin in (dict, Mapping) or (isinstance(kind, type) and hasattr(kind, "from_json")):
        for k, v in typed(value, where, OBJECT).items():
            check(args[1] if args else Any, v, f"{at}{k}")
