"""The codec of plain records: fields in order, tuples as lists, NaN as null, older files' missing fields defaulted."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass

from jaxmlp.jsonio import Plain, from_json, to_json
from jaxmlp.stats import compare


@dataclass(frozen=True)
class Inner:
    band: tuple[float, float] | None
    names: tuple[str, ...] = ()


@dataclass(frozen=True)
class Outer(Plain):
    name: str
    seconds: tuple[float, ...]
    inner: Inner
    by: Mapping[str, tuple[int, ...]]
    note: str = ""
    limit: int | None = None
    spread: float = math.nan


def test_round_trip_and_older_forms() -> None:
    record = Outer("a", (1.0, math.nan), Inner((0.5, 2.0), ("x",)), {"k": (1, 2)}, "n", 3, 0.25)
    doc = json.loads(json.dumps(record.to_json(), allow_nan=False))
    assert doc == {
        "name": "a",
        "seconds": [1.0, None],
        "inner": {"band": [0.5, 2.0], "names": ["x"]},
        "by": {"k": [1, 2]},
        "note": "n",
        "limit": 3,
        "spread": 0.25,
    }
    back = Outer.from_json(doc)
    assert back.seconds[0] == 1.0 and math.isnan(back.seconds[1])
    assert back.inner == record.inner and back.by == record.by and back.spread == 0.25
    older = Outer.from_json({"name": "a", "seconds": [], "inner": {"band": None}, "by": {}, "note": None, "x": 1})
    assert (older.note, older.limit, older.inner.names, older.inner.band) == ("", None, (), None)
    assert math.isnan(older.spread)


def test_nested_record_with_its_own_form() -> None:
    @dataclass(frozen=True)
    class Found:
        comparison: object

    c = compare([1.0, 1.1, 0.9, 1.05], [1.0, 1.1, 0.95, 1.02])
    assert to_json(Found(c)) == {"comparison": c.to_json()}
    assert from_json(Inner, {"band": [1, 2]}) == Inner((1.0, 2.0))
