"""Views of the version sweeps, bisections and the detector's trials: pure functions from the tidy DataFrame
(`jaxmlp.results.store.frames`) and the documents to small tables, as `jaxmlp.results.tables` does for benchmark
files."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from jaxmlp import changepoints, registry
from jaxmlp.changepoints import Change
from jaxmlp.registry import ALPHA, THRESHOLD
from jaxmlp.results.schema.bisect import BisectDocument
from jaxmlp.results.schema.trials import TrialsDocument
from jaxmlp.results.store import layout
from jaxmlp.results.store.frames import sweep_rows
from jaxmlp.results.tables.base import shows
from jaxmlp.stats import Comparison, compare_within

# --- version sweeps -------------------------------------------------------------------------------------------


def sweeps(runs: pd.DataFrame, besides: Iterable[Path] = ()) -> dict[str, pd.DataFrame]:
    """Each sweep's rows (a folder of one file per cell), by folder; none from under the ``besides`` folders
    (a bisection's probes, which its own section shows)."""
    rows = sweep_rows(runs)
    if rows.empty:
        return {}
    apart = [str(b) for b in besides]
    folders = rows["file"].map(lambda f: str(Path(f).parent))
    kept = ~folders.map(lambda f: any(f.startswith(a + "/") for a in apart))
    return {str(folder): part for folder, part in rows[kept].groupby(folders[kept])}


def flags_of(rows: pd.DataFrame) -> pd.Series:
    """Each row's XLA flags, "" for none (so that it can be grouped on)."""
    return rows["xla_flags"].fillna("").astype(str) if "xla_flags" in rows else pd.Series("", index=rows.index)


@shows(*registry.SWEEP)
def sweep_table(rows: pd.DataFrame) -> pd.DataFrame:
    """One sweep's median of each benchmark per cell (release, XLA flags), oldest release first, with the
    processes a cell; a workload whose values differed from the reference cell's is named in ``results_differ``."""
    timed = rows[rows["test"].isin([b.id for b in registry.SWEEP])].assign(xla_flags=flags_of(rows))
    index = ["release", "xla_flags"]
    table = timed.pivot_table(index=index, columns="name", values="median", aggfunc="first")
    order = sorted(table.index, key=lambda key: (key[1] != "", key[1], registry.version_key(key[0])))
    table = table.loc[order].rename_axis(columns=None)
    table.insert(0, "processes", timed.groupby(index)["rounds"].max())
    differ = timed.get("results_differ")
    if differ is not None and differ.notna().any():
        marked = timed[differ.notna()].groupby(index)["workload"].agg(lambda w: ", ".join(sorted(set(w))))
        table.insert(1, "results_differ", marked.reindex(table.index).fillna(""))
    table = table.reset_index()
    if not (table["xla_flags"] != "").any():
        table = table.drop(columns="xla_flags")
    return table


STEP_COLUMNS = ["benchmark", "xla_flags", "from", "to", "ratio", "ci_low", "ci_high", "p_slower", "p_faster", "verdict"]


def _with_nodes(part: pd.DataFrame, nodes: Any) -> pd.DataFrame:
    """One cell's samples with the node that measured each (``nodes``: the cell's, comma-separated, one a process;
    one node, "", where its file names none)."""
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


def _differs(rows: pd.DataFrame) -> set[tuple[str, str, str]]:
    """(release, flags, benchmark) of each row whose workload's values differed from the reference cell's."""
    if "results_differ" not in rows:
        return set()
    marked = rows[rows["results_differ"].notna()].assign(xla_flags=flags_of(rows))
    return {(str(v), str(f), str(n)) for v, f, n in zip(marked["release"], marked["xla_flags"], marked["name"])}


class _Pair(NamedTuple):
    """Two cells of one benchmark to compare: ``old`` is the baseline; ``differ`` if either side's values differed
    from the reference cell's."""

    name: str
    flags: str
    old: str
    new: str
    a: pd.Series
    b: pd.Series
    differ: bool
    a_nodes: tuple[str, ...] = ()
    b_nodes: tuple[str, ...] = ()

    def compared(self, threshold: float, alpha: float) -> Comparison:
        """The two sides compared within each node (`jaxmlp.stats.compare_within`: `compare` with one node)."""
        return compare_within(self.a, self.b, self.a_nodes, self.b_nodes, threshold, alpha)


def _side(cell: pd.DataFrame, name: str) -> tuple[pd.Series, tuple[str, ...]]:
    """One benchmark's samples of a cell, and the node of each."""
    part = cell.loc[cell["name"] == name]
    return part["seconds"], tuple(part["node"]) if "node" in part else ("",) * len(part)


def _pairs(rows: pd.DataFrame, samples: pd.DataFrame) -> Iterator[_Pair]:
    """Each release and the one before it, benchmark by benchmark within each XLA-flags column, oldest first."""
    cells = _cell_samples(rows, samples)
    differ = _differs(rows)
    compared = rows.loc[rows["test"].isin([b.id for b in registry.SWEEP_COMPARED]), "name"]
    for flags in sorted({f for _, f in cells}):
        versions = sorted((v for v, f in cells if f == flags), key=registry.version_key)
        for name in sorted(compared.unique()):
            for old, new in zip(versions[:-1], versions[1:]):
                (a, a_nodes), (b, b_nodes) = (_side(cells[(v, flags)], name) for v in (old, new))
                marked = (old, flags, name) in differ or (new, flags, name) in differ
                yield _Pair(name, flags, old, new, a, b, marked, a_nodes, b_nodes)


def _step(pair: _Pair, c: Comparison) -> dict[str, Any]:
    verdict = "results differ" if pair.differ else c.verdict
    return {
        "benchmark": pair.name,
        "xla_flags": pair.flags,
        "from": pair.old,
        "to": pair.new,
        "ratio": c.ratio,
        "ci_low": c.ci_low,
        "ci_high": c.ci_high,
        "p_slower": c.p_slower,
        "p_faster": c.p_faster,
        "verdict": verdict,
    }


@shows(*registry.SWEEP_COMPARED)
def sweep_steps(
    rows: pd.DataFrame, samples: pd.DataFrame, threshold: float = THRESHOLD, alpha: float = ALPHA
) -> pd.DataFrame:
    """Each release against the previous one, benchmark by benchmark and within each XLA-flags column, from the
    raw per-process samples. A pair where either side's values differed from the reference is "results differ"."""
    steps = [_step(pair, pair.compared(threshold, alpha)) for pair in _pairs(rows, samples)]
    return _without_empty_flags(pd.DataFrame(steps, columns=STEP_COLUMNS))


VERDICT_COLUMNS = ["workload", "xla_flags", "release", "median", "ratio", "ci_low", "ci_high", "p", "verdict"]


@shows(*registry.SWEEP_COMPARED)
def release_verdicts(
    rows: pd.DataFrame, samples: pd.DataFrame, threshold: float = THRESHOLD, alpha: float = ALPHA
) -> pd.DataFrame:
    """A sweep's answer: per XLA-flags column and workload, each release oldest first with its steady-state median
    and its `sweep_steps` comparison with the release before (none for the first; "results differ" without a ratio)."""
    steady = rows[rows["test"] == registry.SWEEP_STEADY.id].assign(xla_flags=flags_of(rows))
    medians = {
        (str(n), str(f), str(v)): m
        for n, f, v, m in zip(steady["name"], steady["xla_flags"], steady["release"], steady["median"])
    }
    workloads = dict(zip(steady["name"].astype(str), steady["workload"].astype(str)))
    compared = {(p.name, p.flags, p.new): (p, p.compared(threshold, alpha)) for p in _pairs(rows, samples)}
    nan = float("nan")
    found = []
    for flags in sorted(set(steady["xla_flags"])):
        for name in sorted(set(steady.loc[steady["xla_flags"] == flags, "name"].astype(str))):
            releases = sorted((v for n, f, v in medians if (n, f) == (name, flags)), key=registry.version_key)
            for release in releases:
                row: dict[str, Any] = {
                    "workload": workloads[name],
                    "xla_flags": flags,
                    "release": release,
                    "median": medians[(name, flags, release)],
                    "ratio": nan,
                    "ci_low": nan,
                    "ci_high": nan,
                    "p": nan,
                    "verdict": None,
                }
                if (name, flags, release) in compared:
                    pair, c = compared[(name, flags, release)]
                    if pair.differ:
                        row["verdict"] = "results differ"
                    else:
                        row.update(
                            ratio=c.ratio, ci_low=c.ci_low, ci_high=c.ci_high, p=c.p_one_sided(), verdict=c.in_words()
                        )
                found.append(row)
    return pd.DataFrame(found, columns=VERDICT_COLUMNS)


def flag_effects(
    rows: pd.DataFrame, samples: pd.DataFrame, threshold: float = THRESHOLD, alpha: float = ALPHA
) -> pd.DataFrame:
    """Does a flag change things? Each release with each XLA-flags value against the same release without flags
    (``from`` is the release without, ``to`` the same release with them), benchmark by benchmark."""
    cells = _cell_samples(rows, samples)
    differ = _differs(rows)
    compared = rows.loc[rows["test"].isin([b.id for b in registry.SWEEP_COMPARED]), "name"]
    steps = []
    for version, flags in sorted(cells, key=lambda key: (registry.version_key(key[0]), key[1])):
        if not flags or (version, "") not in cells:
            continue
        for name in sorted(compared.unique()):
            (a, a_nodes), (b, b_nodes) = (_side(cells[(version, f)], name) for f in ("", flags))
            marked = (version, flags, name) in differ or (version, "", name) in differ
            pair = _Pair(name, flags, version, version, a, b, marked, a_nodes, b_nodes)
            steps.append(_step(pair, pair.compared(threshold, alpha)))
    return pd.DataFrame(steps, columns=STEP_COLUMNS)


class TimelineColumn(NamedTuple):
    """One workload and XLA-flags column of a release timeline: its releases (oldest first), each one's samples
    (one process's steady state each) and the changes `jaxmlp.changepoints` finds in them."""

    workload: str
    xla_flags: str
    releases: tuple[str, ...]
    samples: tuple[tuple[float, ...], ...]
    changes: tuple[Change, ...]


def is_timeline(folder: str | Path) -> bool:
    """Whether a sweep folder is a release timeline (`jaxmlp sweep timeline`, named ``timeline-<time>``)."""
    return Path(folder).name.startswith(f"{layout.TIMELINE}-")


def timeline_columns(
    rows: pd.DataFrame, samples: pd.DataFrame, benchmark: registry.Benchmark = registry.SWEEP_STEADY
) -> list[TimelineColumn]:
    """A timeline's columns, each with its changes (`jaxmlp.changepoints.detect` over every release's samples of
    ``benchmark``: the steady state, or the compile time a corpus case is about); a column where some release's
    values differed from the reference cell's is still shown, its changes found."""
    cells = _cell_samples(rows, samples)
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
            changes = changepoints.detect(labels, measured, nodes=nodes)
            found.append(TimelineColumn(workloads[name], flags, tuple(labels), tuple(measured), tuple(changes)))
    return found


def _without_empty_flags(table: pd.DataFrame) -> pd.DataFrame:
    return table.drop(columns="xla_flags") if not (table["xla_flags"] != "").any() else table


BISECT_COLUMNS = [
    "probe",
    "from",
    "to",
    "from_median_s",
    "to_median_s",
    "ratio",
    "ci_low",
    "ci_high",
    "p_slower",
    "p_faster",
    "verdict",
    "decision",
]


def bisection_table(doc: BisectDocument) -> pd.DataFrame:
    """A row per comparison a bisection made: each probe's neighbour pairs, and what the probe decided."""
    rows = []
    for p in doc.bisection.probes:
        for s in p.steps:
            c = s.comparison
            rows.append(
                (
                    p.number,
                    s.from_,
                    s.to,
                    p.medians[s.from_],
                    p.medians[s.to],
                    c.ratio,
                    c.ci_low,
                    c.ci_high,
                    c.p_slower,
                    c.p_faster,
                    c.verdict,
                    p.decision,
                )
            )
    return pd.DataFrame(rows, columns=BISECT_COLUMNS)


PROBE_COLUMNS = ["probe", "release", "median", "ratio", "ci_low", "ci_high", "p", "verdict", "decision"]


def probe_verdicts(doc: BisectDocument) -> pd.DataFrame:
    """A bisection's answer, probe by probe: the releases each measured, in its order, with their median and,
    against the release before them in the probe, the ratio, 95% interval, one-sided p and verdict in words, as
    `release_verdicts` gives them for a sweep; and what the probe decided."""
    nan = float("nan")
    rows: list[tuple[Any, ...]] = []
    for p in doc.bisection.probes:
        against = {s.to: s.comparison for s in p.steps}
        for release in p.releases:
            c = against.get(release)
            compared = (
                (nan, nan, nan, nan, None)
                if c is None
                else (c.ratio, c.ci_low, c.ci_high, c.p_one_sided(), c.in_words())
            )
            rows.append((p.number, release, p.medians[release], *compared, p.decision))
    return pd.DataFrame(rows, columns=PROBE_COLUMNS)


def bisection_medians(doc: BisectDocument) -> pd.DataFrame:
    """Each probed release's median in each probe that measured it, in release order (for the plot)."""
    rows = [(r, p.number, p.medians[r]) for p in doc.bisection.probes for r in p.releases]
    table = pd.DataFrame(rows, columns=["release", "probe", "median_s"])
    order = {r: i for i, r in enumerate(doc.bisection.candidates)}
    return table.assign(position=table["release"].map(order)).sort_values(["position", "probe"]).reset_index(drop=True)


def sweep_sampling(rows: pd.DataFrame) -> dict[str, Any]:
    """How one sweep's samples were measured: processes a cell, CPUs each, the workloads' calls a process (for the
    built-in epochs, epochs of how many images)."""
    first = rows.iloc[0]
    processes = first.get("processes")
    calls = rows.groupby("workload")["calls"].first() if {"workload", "calls"} <= set(rows) else pd.Series()
    return {
        "host": first.get("host"),
        "cpu_model": first.get("cpu_model"),
        "python": first.get("python"),
        "dataset": first.get("dataset"),
        "cpu_affinity": _whole(first.get("cpu_affinity")),
        "processes": int(processes if pd.notna(processes) else first["rounds"]),
        "epochs": _whole(first.get("epochs")),
        "samples": _whole(first.get("samples")),
        "calls": {str(w): int(c) for w, c in calls.items() if pd.notna(c)},
    }


def _whole(value: Any) -> int | None:
    """A count as the tidy frame holds it (a float where its column has gaps) as a whole number; None where missing."""
    return None if value is None or pd.isna(value) else int(value)


# --- the detector's trials ------------------------------------------------------------------------------------


TRIALS_COLUMNS = ["trial", "injected_ratio", "injected_p", "injected_verdict", "aa_ratio", "aa_p", "aa_verdict"]


def trials_table(doc: TrialsDocument) -> pd.DataFrame:
    """A row per detector trial: the injected slowdown's and the A/A comparison's ratio, p and verdict (each p the
    one-sided one in the direction its medians moved, `Comparison.p_one_sided`: a verdict's own p)."""
    rows = [
        (
            t.trial,
            t.injected.ratio,
            t.injected.p_one_sided(),
            t.injected.verdict,
            t.aa.ratio,
            t.aa.p_one_sided(),
            t.aa.verdict,
        )
        for t in doc.trials
    ]
    return pd.DataFrame(rows, columns=TRIALS_COLUMNS)
