"""Which run answers a question: per machine (`jaxmlp.results.machines`), the newest run on it that can decide it
(the rule: ARCHITECTURE.md, "Which run answers")."""

from __future__ import annotations

from collections.abc import Callable, Container, Iterator, Mapping, Sequence

import pandas as pd

from jaxmlp.registry import Benchmark
from jaxmlp.results import layout
from jaxmlp.results.machines import MACHINE, machine, machine_of

__all__ = ["MACHINE", "machine", "machine_of", "newest_per_backend", "stamp_of", "timed"]

UNTIMED_SIZES = ("smoke",)
"""Benchmark sizes that run every step once to check it works: too short to answer how fast."""


def stamp_of(rows: pd.DataFrame) -> str:
    """One file's rows' time: the one in its name, else its run's timestamp."""
    return layout.stamp_in(str(rows["file"].iloc[0])) or layout.stamp(str(rows["timestamp"].iloc[0]))


def timed(rows: pd.DataFrame) -> bool:
    """Whether a benchmark run's times can answer how fast (not a smoke-size run)."""
    return not ("size" in rows and rows["size"].isin(UNTIMED_SIZES).any())


def by_backend(
    runs_by_file: Mapping[str, pd.DataFrame], done: Container[str] = ()
) -> Iterator[tuple[str, pd.DataFrame]]:
    """Each benchmark file's rows split by backend (a file may hold several; its host-only rows, the loaders', go
    with each), newest file first; the backends in ``done`` left out."""
    for rows in runs_by_file.values():
        yield from _split(rows, done)


def _split(rows: pd.DataFrame, done: Container[str] = ()) -> Iterator[tuple[str, pd.DataFrame]]:
    if "backend" not in rows:
        return
    backends = [b for b in rows["backend"].dropna().unique() if str(b) not in done]
    if not backends:  # every backend of the file answered already: nothing to split
        return
    host = rows[rows["backend"].isna()]
    for backend, part in rows.groupby("backend", sort=True):
        if str(backend) not in done:
            yield str(backend), pd.concat([part, host]) if len(host) else part


def newest_per_backend(
    runs_by_file: Mapping[str, pd.DataFrame],
    answers: Callable[[pd.DataFrame], bool],
    timed_only: bool = True,
    needs: Sequence[Benchmark] = (),
) -> dict[str, pd.DataFrame]:
    """Per backend, the newest timed run whose rows ``answers`` (the machine is that run's: an older run on another
    machine of the same backend is the history's, not the answer's). ``needs``: benchmarks of which a run must hold
    one to answer at all (a run without any is passed over unasked: a folder of many runs asks few)."""
    found: dict[str, pd.DataFrame] = {}
    ids = [b.id for b in needs]
    for rows in runs_by_file.values():
        if ids and not rows["test"].isin(ids).any():
            continue
        for backend, part in _split(rows, found):
            if backend not in found and (timed(part) or not timed_only) and answers(part):
                found[backend] = part
    return found
