"""How jaxmlp's JSON holds numbers and plain records: NaN as null, a frozen dataclass as an object of its fields."""

from __future__ import annotations

import dataclasses
import functools
import math
import types
import typing
from collections.abc import Mapping
from typing import Any, Self, TypeVar

T = TypeVar("T")


def number(value: object) -> float:
    """A JSON number as a float; null (how NaN is stored) as NaN."""
    return math.nan if value is None else float(value)  # type: ignore[arg-type]


def json_number(value: float) -> float | None:
    """A float as JSON allows it: NaN as null."""
    return None if math.isnan(value) else value


def to_json(record: Any) -> dict[str, Any]:
    """A dataclass's fields in order as JSON: tuples as lists, NaN as null, nested records by their own ``to_json``."""
    return {f.name: _encode(getattr(record, f.name)) for f in dataclasses.fields(record)}


def _encode(value: Any) -> Any:
    if isinstance(value, float):
        return json_number(value)
    if hasattr(value, "to_json"):  # a record with a JSON form of its own
        return value.to_json()
    if dataclasses.is_dataclass(value):
        return to_json(value)
    if isinstance(value, (tuple, list)):
        return [_encode(v) for v in value]
    return {k: _encode(v) for k, v in value.items()} if isinstance(value, Mapping) else value


def from_json(cls: type[T], doc: Mapping[str, Any]) -> T:
    """A dataclass from its JSON form, each field its annotated type (a missing one its default); other keys ignored."""
    annotated = hints(cls)  # type: ignore[arg-type]
    given = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        value, kind = doc.get(f.name), annotated[f.name]
        defaulted = f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
        nullable = kind is float or kind is Any or type(None) in typing.get_args(kind)
        if f.init and not (defaulted and (f.name not in doc or (value is None and not nullable))):
            given[f.name] = _decode(kind, doc[f.name])
    return cls(**given)


@functools.cache
def hints(cls: type) -> dict[str, Any]:
    """``cls``'s annotations, resolved (kept: each class is asked once)."""
    return typing.get_type_hints(cls)


def _decode(kind: Any, value: Any) -> Any:
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin in (typing.Union, types.UnionType):
        (kind,) = (a for a in args if a is not type(None))  # X | None
        return None if value is None else _decode(kind, value)
    if kind is float:
        return number(value)
    if kind in (int, str, bool):
        return kind(value)
    if isinstance(kind, type) and hasattr(kind, "from_json"):  # a record with a JSON form of its own
        return kind.from_json(value)
    if dataclasses.is_dataclass(kind):
        return from_json(kind, value)  # type: ignore[arg-type]
    if origin is tuple:
        each = args[:1] * len(value) if args[1:] == (...,) else args
        return tuple(_decode(k, v) for k, v in zip(each, value, strict=True))
    if origin is list:
        return [_decode(args[0], v) for v in value]
    return {_decode(args[0], k): _decode(args[1], v) for k, v in value.items()} if origin in (dict, Mapping) else value


class Plain:
    """A frozen dataclass whose JSON form is its fields as they are (`to_json`, `from_json`)."""

    def to_json(self) -> dict[str, Any]:
        return to_json(self)

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Self:
        return from_json(cls, doc)
