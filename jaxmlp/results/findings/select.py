"""Which runs answer a question: each machine's merged evidence and the newest decisive run of other kinds."""

from __future__ import annotations

from collections.abc import Callable, Container, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd

from jaxmlp import registry
from jaxmlp.registry import Benchmark
from jaxmlp.results.schema.machines import ENVIRONMENT, MACHINE, environment
from jaxmlp.results.schema.machines import machine as machine
from jaxmlp.results.schema.machines import machine_of as machine_of
from jaxmlp.results.store import layout
from jaxmlp.results.tables import RunTables, is_scaling

UNTIMED_SIZES = ("smoke",)
"""Benchmark sizes that run every step once to check it works: too short to answer how fast."""


def stamp_of(rows: pd.DataFrame) -> str:
    """Rows' time: their newest run's, the one in its file's name, else its timestamp."""
    return max(
        layout.stamp_in(str(file)) or layout.stamp(str(when))
        for file, when in rows[["file", "timestamp"]].drop_duplicates("file").itertuples(index=False)
    )


OLDER = "older_environment"
"""The column saying where a row comes from when not its machine's newest plain environment; "" for the newest's."""


def _key(row: pd.Series, keys: Sequence[str]) -> tuple[str, ...]:
    return tuple("" if pd.isna(row.get(k)) else str(row.get(k)) for k in keys)


def evidence(runs_by_file: Mapping[str, pd.DataFrame], timed_only: bool = True) -> dict[str, pd.DataFrame]:
    """Per machine, newest first, its benchmark rows merged across its runs by the rule of
    docs/methods/which-run-answers.md, each row keeping its ``file``; scaling runs (and with ``timed_only`` smoke-size
    runs) left out."""
    by_machine: dict[tuple[str, ...], list[pd.DataFrame]] = {}
    for rows in runs_by_file.values():  # newest first
        if (timed_only and not timed(rows)) or is_scaling(rows):
            continue
        by_machine.setdefault(_key(rows.iloc[0], MACHINE), []).append(rows)
    return {str(files[0]["file"].iloc[0]): _merged(files) for files in by_machine.values()}


def _merged(files: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """One machine's runs (newest first) as one set of rows: `evidence`'s rule."""
    plain = [rows for rows in files if _plain(rows.iloc[0])]
    ranks: dict[tuple[str, ...], int] = {}
    frames, marks = [], []
    for rows in [*plain, *(rows for rows in files if not _plain(rows.iloc[0]))]:  # a plain run before a flagged one
        rank = ranks.setdefault(_key(rows.iloc[0], ENVIRONMENT), len(ranks))
        frames.append(rows)
        marks.append(pd.DataFrame({"_rank": rank, OLDER: _said(rows.iloc[0], rank)}, index=range(len(rows))))
    rows = pd.concat(frames, ignore_index=True)  # the marks' columns joined at once: no frame grown column by column
    rows = pd.concat([rows, pd.concat(marks, ignore_index=True)], axis=1).sort_values("_rank", kind="stable")
    floor = rows["test"].isin(registry.FLOOR_PRODUCTS)  # a precision's floor: whole from one environment
    if floor.any():
        precision = rows["precision"].fillna("f32") if "precision" in rows else pd.Series("f32", index=rows.index)
        unit = rows["backend"].astype(str) + "/" + precision.astype(str)
        first = rows[floor].groupby(unit[floor])["_rank"].transform("min")
        rows = rows.drop(index=first.index[rows.loc[first.index, "_rank"] != first])
    return rows.drop_duplicates("name", keep="first").drop(columns="_rank").reset_index(drop=True)


def _plain(row: pd.Series) -> bool:
    """Whether a run ran with the default settings: no XLA flags, the default float32 matmul precision."""
    flags, precision = row.get("xla_flags"), row.get("jax_default_matmul_precision")
    return (pd.isna(flags) or not flags) and (pd.isna(precision) or precision in ("", "default"))


def _said(row: pd.Series, rank: int) -> str:
    """What an answer says of a row from this run's environment (`OLDER`): nothing for the newest plain one."""
    if not _plain(row):
        return f"a run with other settings ({environment(row)})"
    return f"an older environment ({environment(row)})" if rank else ""


def runs_of(rows: pd.DataFrame) -> list[str]:
    """The runs (files) rows come from, newest first."""
    files = rows[["file", "timestamp"]].drop_duplicates("file")
    return [str(f) for f in files.sort_values("timestamp", ascending=False, kind="stable")["file"]]


def timed(rows: pd.DataFrame) -> bool:
    """Whether a benchmark run's times can answer how fast (not a smoke-size run)."""
    return not ("size" in rows and rows["size"].isin(UNTIMED_SIZES).any())


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


@dataclass(frozen=True, eq=False)
class Parts:
    """Runs (newest first), each split by backend with its tables once, for one call's questions only."""

    runs_by_file: Mapping[str, pd.DataFrame]
    _made: dict[str, dict[str, RunTables]] = field(default_factory=dict, init=False, repr=False)

    def of(self, key: str, done: Container[str] = ()) -> Iterator[tuple[str, RunTables]]:
        """The parts of ``runs_by_file[key]`` by backend, the backends in ``done`` left out."""
        if key not in self._made:
            rows = self.runs_by_file[key]
            if not any(str(b) not in done for b in rows.get("backend", pd.Series(dtype=object)).dropna().unique()):
                return  # every backend of the file answered already: nothing to split
            self._made[key] = {backend: RunTables(part) for backend, part in _split(rows)}
        yield from ((b, t) for b, t in self._made[key].items() if b not in done)


def newest_per_backend(
    parts: Parts,
    answers: Callable[[RunTables], bool],
    timed_only: bool = True,
    needs: Sequence[Benchmark] = (),
) -> dict[str, RunTables]:
    """Per backend, the newest timed run (or `evidence`) whose part ``answers``, holding one of ``needs``."""
    found: dict[str, RunTables] = {}
    ids = [b.id for b in needs]
    for key, rows in parts.runs_by_file.items():
        if ids and not rows["test"].isin(ids).any():
            continue
        for backend, part in parts.of(key, found):
            if backend not in found and (timed(part.rows) or not timed_only) and answers(part):
                found[backend] = part
    return found
