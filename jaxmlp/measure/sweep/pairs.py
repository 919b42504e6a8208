"""Which cells a sweep or timeline compares, and each cell's record of the results that differ from the cells it is
compared with (`Measured.apart`: a comparison's own two sides, as `jaxmlp track` marks its comparisons)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from jaxmlp.measure.sweep.matrix import DIFFER_FROM, Measured
from jaxmlp.registry import version_key

Cell = tuple[str, str]
"""A cell of a matrix: its release (or ``--env`` label) and its XLA flags ("" for none)."""


def baselines(cells: Iterable[Cell]) -> dict[Cell, tuple[Cell, ...]]:
    """Each cell and the cells it is compared with as the newer side: the release before it in its XLA-flags column
    (a timeline's neighbour), and for a cell with flags the same release without them."""
    cells = list(cells)
    found: dict[Cell, tuple[Cell, ...]] = {}
    for label, flags in cells:
        column = sorted((other for other, f in cells if f == flags), key=version_key)
        at = column.index(label)
        before = ((column[at - 1], flags),) if at else ()
        found[(label, flags)] = (*before, *(((label, ""),) if flags and (label, "") in cells else ()))
    return found


def recorded(measured: Measured) -> dict[str, dict[str, str]]:
    """Each cell's workloads whose values differ from a cell it is compared with (`baselines`), and why, by cell name:
    what its file records (several cells' whys joined by "; ")."""
    runners = {name: r for name, r in measured.probed.runners.items() if name in measured.processes}
    names = {(r.label, r.xla_flags): name for name, r in runners.items()}
    found: dict[str, dict[str, str]] = {}
    for cell, before in baselines(names).items():
        whys: dict[str, list[str]] = {}
        for other in before:
            for workload, why in measured.apart(names[other], names[cell]).items():
                whys.setdefault(workload, []).append(why)
        if whys:
            found[names[cell]] = {workload: "; ".join(said) for workload, said in whys.items()}
    return found


def named(record: str) -> set[str]:
    """The cells a record (`recorded`'s, or an older file's) says the values differ from, by name."""
    return set(re.findall(f"{re.escape(DIFFER_FROM)}(.+?): ", record))
