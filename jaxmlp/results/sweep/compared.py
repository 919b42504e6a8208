"""A sweep's cells compared and each timeline column's changes, from the raw samples, kept in the folder's index."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from jaxmlp import changepoints, registry
from jaxmlp.bimodal import Groups, groups_of
from jaxmlp.blocks import compare_within
from jaxmlp.changepoints import Change
from jaxmlp.measure.sweep.matrix import cell_name
from jaxmlp.measure.sweep.pairs import named
from jaxmlp.registry import ALPHA, THRESHOLD
from jaxmlp.results.schema.sweep import PAIRWISE
from jaxmlp.results.store.memo import IndexMemo, samples_key
from jaxmlp.stats import RESULT_FIELDS, RESULTS_DIFFER, Comparison, compare, verdict_line
from jaxmlp.units import duration, size


def flags_of(rows: pd.DataFrame) -> pd.Series:
    """Each row's XLA flags, "" for none (so that it can be grouped on)."""
    return rows["xla_flags"].fillna("").astype(str) if "xla_flags" in rows else pd.Series("", index=rows.index)


def _with_nodes(part: pd.DataFrame, nodes: Any) -> pd.DataFrame:
    """One cell's samples with the node that measured each ("" where its file names none)."""
    where = str(nodes).split(",") if isinstance(nodes, str) and nodes else []
    return part.assign(node=[where[r] if r < len(where) else "" for r in part["round"]])


def _cell_samples(rows: pd.DataFrame, samples: pd.DataFrame) -> dict[tuple[str, str], pd.DataFrame]:
    cells = rows.assign(xla_flags=flags_of(rows)).drop_duplicates(["release", "xla_flags"])
    mine = samples[samples["file"].isin(set(cells["file"]))]  # one pass over every run's samples, not one a cell
    nodes = dict(zip(cells["file"].astype(str), cells["nodes"])) if "nodes" in cells else {}
    by_file = {str(file): _with_nodes(part, nodes.get(str(file))) for file, part in mine.groupby("file", sort=False)}
    return {
        (str(v), str(f)): by_file.get(str(file), samples.iloc[0:0])
        for v, f, file in zip(cells["release"], cells["xla_flags"], cells["file"])
    }


Records = dict[tuple[str, str, str], tuple[str, bool]]
"""Each row's record of the results that differ, by (release, flags, benchmark): the record, and whether it names the
cells its cell is compared with (`schema.sweep.PAIRWISE`) or, an older file's, the first cell only."""


def _records(rows: pd.DataFrame) -> Records:
    """Each row whose values differed, with its record (`Records`)."""
    if "results_differ" not in rows:
        return {}
    marked = rows[rows["results_differ"].notna()].assign(xla_flags=flags_of(rows))
    pairwise = marked[PAIRWISE].eq(True) if PAIRWISE in marked else pd.Series(False, index=marked.index)
    return {
        (str(v), str(f), str(n)): (str(record), bool(p))
        for v, f, n, record, p in zip(
            marked["release"], marked["xla_flags"], marked["name"], marked["results_differ"], pairwise
        )
    }


def apart(records: Records, old: tuple[str, str], new: tuple[str, str], name: str) -> bool:
    """Whether the two sides of a comparison (``old`` and ``new``: release and flags) differ on benchmark ``name``:
    either side's record names the other (`jaxmlp.measure.sweep.pairs.named`); an older file's record, against the
    first cell only, marks every comparison of its cell, as it was read."""
    for cell, other in ((new, old), (old, new)):
        record, pairwise = records.get((*cell, name), ("", True))
        if (record and not pairwise) or cell_name(*other) in named(record):
            return True
    return False


class Pair(NamedTuple):
    """Two cells of one benchmark to compare, ``old`` the baseline; ``differ`` where either side's values differed."""

    name: str
    flags: str
    old: str
    new: str
    a: pd.Series
    b: pd.Series
    differ: bool
    a_nodes: tuple[str, ...] = ()
    b_nodes: tuple[str, ...] = ()

    def compared(self) -> Comparison:
        """The two sides compared within each node (`jaxmlp.blocks.compare_within`: `compare` with one node)."""
        return compare_within(self.a, self.b, self.a_nodes, self.b_nodes, THRESHOLD, ALPHA)


def _side(cell: pd.DataFrame, name: str) -> tuple[pd.Series, tuple[str, ...]]:
    """One benchmark's samples of a cell, and the node of each."""
    part = cell.loc[cell["name"] == name]
    return part["seconds"], tuple(part["node"]) if "node" in part else ("",) * len(part)


def _compared_names(rows: pd.DataFrame) -> list[str]:
    """The benchmarks a sweep compares (`registry.SWEEP_COMPARED`), by name."""
    return sorted(rows.loc[rows["test"].isin([b.id for b in registry.SWEEP_COMPARED]), "name"].unique())


def pairs(rows: pd.DataFrame, samples: pd.DataFrame) -> Iterator[Pair]:
    """Each release and the one before it, benchmark by benchmark within each XLA-flags column, oldest first."""
    cells = _cell_samples(rows, samples)
    records = _records(rows)
    for flags in sorted({f for _, f in cells}):
        versions = sorted((v for v, f in cells if f == flags), key=registry.version_key)
        for name in _compared_names(rows):
            for old, new in zip(versions[:-1], versions[1:]):
                (a, a_nodes), (b, b_nodes) = (_side(cells[(v, flags)], name) for v in (old, new))
                marked = apart(records, (old, flags), (new, flags), name)
                yield Pair(name, flags, old, new, a, b, marked, a_nodes, b_nodes)


def flag_pairs(rows: pd.DataFrame, samples: pd.DataFrame) -> Iterator[Pair]:
    """Each release with each XLA-flags value against the same release without flags, benchmark by benchmark."""
    cells = _cell_samples(rows, samples)
    records = _records(rows)
    for version, flags in sorted(cells, key=lambda key: (registry.version_key(key[0]), key[1])):
        if not flags or (version, "") not in cells:
            continue
        for name in _compared_names(rows):
            (a, a_nodes), (b, b_nodes) = (_side(cells[(version, f)], name) for f in ("", flags))
            marked = apart(records, (version, ""), (version, flags), name)
            yield Pair(name, flags, version, version, a, b, marked, a_nodes, b_nodes)


def cell_groups(rows: pd.DataFrame, samples: pd.DataFrame) -> list[tuple[str, str, str, Groups]]:
    """Each bimodal cell of a sweep: (workload, XLA flags, release, its groups), oldest release first."""
    cells = _cell_samples(rows, samples)
    steady = rows[rows["test"] == registry.SWEEP_STEADY.id]
    workloads = dict(zip(steady["name"].astype(str), steady["workload"].astype(str)))
    found = []
    for (release, flags), cell in sorted(cells.items(), key=lambda kv: (kv[0][1], registry.version_key(kv[0][0]))):
        for name in sorted(workloads):
            if (groups := groups_of(list(_side(cell, name)[0]))) is not None:
                found.append((workloads[name], flags, release, groups))
    return found


COMPARISONS_KIND = "comparisons"
"""What `comparisons` keeps in a folder's index: each pair of a sweep's cells compared, under its folder's name."""
Compared = list[tuple[Pair, Comparison]]
"""A sweep's pairs (`pairs`), each with its comparison: computed once (`comparisons`), read by every table of it."""


def pair_key(pair: Pair) -> str:
    """A hash of all a pair's comparison follows from: both sides' samples and nodes, thresholds, code and libraries."""
    said = [changepoints.DETECTOR, THRESHOLD, ALPHA, list(pair.a_nodes), list(pair.b_nodes)]
    return samples_key(said, (pair.a, pair.b))


def _kind(kind: str, rows: pd.DataFrame) -> str:
    """A memo's kind for one sweep's values: ``kind`` and the sweep folder's name."""
    return f"{kind} {Path(str(rows['file'].iloc[0])).parent.name}" if len(rows) else kind


def comparisons(
    rows: pd.DataFrame, samples: pd.DataFrame, memo: IndexMemo | None = None, done: Compared | None = None
) -> Compared:
    """Each release and the one before it compared (``done`` where given; ``memo``: pairs compared before are kept)."""
    if done is not None:
        return done
    found = list(pairs(rows, samples))
    keys = [pair_key(pair) for pair in found]
    kind = _kind(COMPARISONS_KIND, rows)
    kept = memo.recall(kind, keys) if memo is not None else {}
    made = {k: p.compared().to_json() for p, k in zip(found, keys) if k not in kept}
    if memo is not None:
        memo.keep(kind, made, keys)
    known = {**kept, **made}
    return [(pair, Comparison.from_json(known[key])) for pair, key in zip(found, keys)]


def result_of(c: Comparison, verdict: str = "") -> dict[str, Any]:
    """A comparison's `RESULT_FIELDS`, as every table shows them: its verdict in words (``verdict`` where given)."""
    return {**{field: getattr(c, field) for field in RESULT_FIELDS}, "verdict": verdict or c.word}


def pair_result(pair: Pair, c: Comparison) -> dict[str, Any]:
    """A pair's `RESULT_FIELDS`: its comparison's, or where its two sides' results differ ``results differ`` and
    nothing on time."""
    return {**dict.fromkeys(RESULT_FIELDS, math.nan), "verdict": RESULTS_DIFFER} if pair.differ else result_of(c)


class TimelineColumn(NamedTuple):
    """One workload and XLA-flags column of a release timeline: its releases, samples and changes."""

    workload: str
    xla_flags: str
    releases: tuple[str, ...]
    samples: tuple[tuple[float, ...], ...]
    changes: tuple[Change, ...]
    benchmark: str = registry.SWEEP_STEADY.id  # what its samples are: a time, or bytes (`registry.SWEEP_BYTES`)
    differ: tuple[tuple[str, str], ...] = ()  # neighbouring releases whose results differ (`apart`), older first


def across(column: TimelineColumn, first: str, last: str) -> list[tuple[str, str]]:
    """The neighbouring releases whose results differ (``column.differ``) from release ``first`` to ``last``."""
    at = column.releases.index
    return [(a, b) for a, b in column.differ if at(first) <= at(a) < at(last)]


def change_apart(column: TimelineColumn, change: Change) -> bool:
    """Whether a change compares across results that differ: its release against the one before it (a drift: from
    its start; a transient: and against the one after), so that it has no verdict on time."""
    after = column.releases.index(change.at) + 1
    last = column.releases[after] if change.kind == "transient" and after < len(column.releases) else change.at
    return bool(across(column, change.before, last))


def column_words(column: TimelineColumn) -> list[str]:
    """A timeline column's verdicts in words for the gate: ``results differ`` a pair of neighbours whose results
    differ, then those of `column_verdicts` that compare no such pair."""
    timed = [c for c in column.changes if not change_apart(column, c)]
    ends = not column.changes and not across(column, column.releases[0], column.releases[-1])
    words = [c.comparison.word for c in timed] + ([column_verdicts(column)[0].word] if ends else [])
    return [RESULTS_DIFFER] * len(column.differ) + words


def shown_of(benchmark: str) -> Callable[[Any], str]:
    """How a value of ``benchmark`` is shown: a size for peak memory, else a time."""
    return size if benchmark in {b.id for b in registry.SWEEP_BYTES} else duration


MEMORY_WORDS = {"slower": "larger", "faster": "smaller"}
"""A change's direction as a memory column says it (the detector's words are a time's)."""


def column_groups(column: TimelineColumn) -> dict[str, Groups]:
    """Each release of ``column`` whose processes split into two groups (`jaxmlp.bimodal.groups_of`)."""
    found = {r: groups_of(values) for r, values in zip(column.releases, column.samples)}
    return {r: g for r, g in found.items() if g is not None}


def pooled_groups(column: TimelineColumn, change: Change) -> str:
    """Where a change's ratio pools a bimodal release, each group against the other release; "" where none."""
    groups = column_groups(column)
    said = []
    for release, other, before in ((change.at, change.before, True), (change.before, change.at, False)):
        if release in groups and other in column.releases:
            median = statistics.median(column.samples[column.releases.index(other)])
            said.append(
                f"the ratio pools {release}'s two groups (against {other}: {groups[release].against(median, before)})"
            )
    return "; ".join(said)


def change_said(column: TimelineColumn, change: Change) -> str:
    """One change of ``column`` in a line, with what its ratio pools beside a bimodal release."""
    line = change.line()
    if column.benchmark in {b.id for b in registry.SWEEP_BYTES} and change.direction in MEMORY_WORDS:
        line = line.replace(f" {change.direction}", f" {MEMORY_WORDS[change.direction]}", 1)
    pooled = pooled_groups(column, change)
    return f"{line}; {pooled}" if pooled else line


def groups_said(column: TimelineColumn) -> str:
    """Each bimodal release of ``column`` in words; "" where none is."""
    shown = shown_of(column.benchmark)
    return "; ".join(f"{r} {g.line(shown)}" for r, g in column_groups(column).items())


def column_verdicts(column: TimelineColumn) -> tuple[Comparison, ...]:
    """What a timeline column's verdict rests on: its changes, else its last release against its first."""
    if column.changes:
        return tuple(change.comparison for change in column.changes)
    return (compare(column.samples[0], column.samples[-1], THRESHOLD, ALPHA),)


def column_said(column: TimelineColumn) -> str:
    """A timeline column's verdict in a line, then its bimodal releases."""
    groups = groups_said(column)
    if column.changes:
        timed = [change for change in column.changes if not change_apart(column, change)]
        said = "; ".join(change_said(column, change) for change in timed)
    elif across(column, column.releases[0], column.releases[-1]):
        said = "no change found"
    else:
        (ends,) = column_verdicts(column)
        said = f"no change found; {column.releases[-1]} against {column.releases[0]}: {verdict_line(ends)}"
        if split := [r for r in (column.releases[0], column.releases[-1]) if r in column_groups(column)]:
            said += f" (pooling {' and '.join(split)}'s two groups)"
    differ = "; ".join(f"{b} against {a}: {RESULTS_DIFFER}, not compared on time" for a, b in column.differ)
    return "; ".join(part for part in (said, differ, groups) if part)


TIMELINE_KIND = "timeline changes"
"""What `timeline_columns` keeps in a folder's index (`IndexMemo`): each column's changes, per timeline."""


def timeline_columns(
    rows: pd.DataFrame,
    samples: pd.DataFrame,
    benchmark: registry.Benchmark = registry.SWEEP_STEADY,
    memo: IndexMemo | None = None,
) -> list[TimelineColumn]:
    """A timeline's columns, each with its changes in ``benchmark``; ``memo``: columns searched before are kept."""
    found = _timeline_columns(rows, samples, benchmark)
    keys = [samples_key([changepoints.DETECTOR, list(c.releases), nodes], c.samples) for c, nodes in found]
    kind = _kind(f"{TIMELINE_KIND} {benchmark.id}", rows)
    kept = memo.recall(kind, keys) if memo is not None else {}
    made = {
        k: [change.to_json() for change in changepoints.detect(list(c.releases), list(c.samples), nodes=nodes)]
        for (c, nodes), k in zip(found, keys)
        if k not in kept
    }
    if memo is not None:
        memo.keep(kind, made, keys)
    known = {**kept, **made}
    return [
        c._replace(changes=tuple(Change.from_json(change) for change in known[k])) for (c, _), k in zip(found, keys)
    ]


def _timeline_columns(
    rows: pd.DataFrame, samples: pd.DataFrame, benchmark: registry.Benchmark
) -> list[tuple[TimelineColumn, list[tuple[str, ...]]]]:
    """A timeline's columns without their changes, each with its samples' nodes."""
    cells = _cell_samples(rows, samples)
    records = _records(rows)
    steady = rows[rows["test"] == benchmark.id]
    workloads = dict(zip(steady["name"].astype(str), steady["workload"].astype(str)))
    found = []
    for flags in sorted({f for _, f in cells}):
        versions = sorted((v for v, f in cells if f == flags), key=registry.version_key)
        for name in sorted(workloads):
            sides = [_side(cells[(v, flags)], name) for v in versions]
            kept = [(v, tuple(float(x) for x in x_), n) for v, (x_, n) in zip(versions, sides) if len(x_)]
            if len(kept) < 2:
                continue
            labels, measured, nodes = [v for v, _, _ in kept], [x for _, x, _ in kept], [n for _, _, n in kept]
            differ = tuple((a, b) for a, b in zip(labels, labels[1:]) if apart(records, (a, flags), (b, flags), name))
            column = TimelineColumn(workloads[name], flags, tuple(labels), tuple(measured), (), benchmark.id, differ)
            found.append((column, nodes))
    return found
