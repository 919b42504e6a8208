"""Views of the version sweeps, bisections and trials: pure functions to small tables."""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from jaxmlp import registry
from jaxmlp.results.schema.bisect import BisectDocument
from jaxmlp.results.schema.trials import TrialsDocument
from jaxmlp.results.store import layout
from jaxmlp.results.store.frames import sweep_rows
from jaxmlp.results.store.memo import IndexMemo
from jaxmlp.results.sweep.compared import Compared, Pair, comparisons, flag_pairs, flags_of, pair_result, result_of
from jaxmlp.results.tables import shows
from jaxmlp.stats import RESULT_FIELDS, Comparison

# --- version sweeps -------------------------------------------------------------------------------------------


def sweeps(runs: pd.DataFrame, besides: Iterable[Path] = ()) -> dict[str, pd.DataFrame]:
    """Each sweep's rows by folder; none from under the ``besides`` folders."""
    rows = sweep_rows(runs)
    if rows.empty:
        return {}
    apart = [str(b) for b in besides]
    folders = rows["file"].map(lambda f: str(Path(f).parent))
    kept = ~folders.map(lambda f: any(f.startswith(a + "/") for a in apart))
    return {str(folder): part for folder, part in rows[kept].groupby(folders[kept])}


@shows(*registry.SWEEP)
def sweep_table(rows: pd.DataFrame) -> pd.DataFrame:
    """One sweep's median of each benchmark per cell, with processes, Python and ``results_differ``."""
    timed = rows[rows["test"].isin([b.id for b in registry.SWEEP])].assign(xla_flags=flags_of(rows))
    index = ["release", "xla_flags"]
    table = timed.pivot_table(index=index, columns="name", values="median", aggfunc="first")
    order = sorted(table.index, key=lambda key: (key[1] != "", key[1], registry.version_key(key[0])))
    table = table.loc[order].rename_axis(columns=None)
    table.insert(0, "processes", timed.groupby(index)["rounds"].max())
    if "python" in timed and timed["python"].notna().any():  # the Python its processes ran on
        ran = timed.groupby(index)["python"].agg(lambda p: ", ".join(sorted(set(p.dropna().astype(str)))))
        table.insert(1, "python", ran.reindex(table.index).fillna(""))
    differ = timed.get("results_differ")
    if differ is not None and differ.notna().any():
        marked = timed[differ.notna()].groupby(index)["workload"].agg(lambda w: ", ".join(sorted(set(w))))
        table.insert(1, "results_differ", marked.reindex(table.index).fillna(""))
    table = table.reset_index()
    if not (table["xla_flags"] != "").any():
        table = table.drop(columns="xla_flags")
    return table


def pythons_of(rows: pd.DataFrame) -> dict[str, str]:
    """The Python each release ran on, by release; {} where its files name none."""
    if "python" not in rows or not rows["python"].notna().any():
        return {}
    ran = rows[rows["python"].notna()].groupby("release")["python"]
    return {str(k): ", ".join(sorted(set(v.astype(str)))) for k, v in ran}


STEP_COLUMNS = ["benchmark", "xla_flags", "from", "to", *RESULT_FIELDS]


def _step(pair: Pair, c: Comparison) -> dict[str, Any]:
    said = {"benchmark": pair.name, "xla_flags": pair.flags, "from": pair.old, "to": pair.new}
    return {**said, **pair_result(pair, c)}


@shows(*registry.SWEEP_COMPARED)
def sweep_steps(
    rows: pd.DataFrame, samples: pd.DataFrame, done: Compared | None = None, memo: IndexMemo | None = None
) -> pd.DataFrame:
    """Each release against the previous one, by benchmark and XLA-flags column (``done``, ``memo``: `comparisons`)."""
    steps = [_step(pair, c) for pair, c in comparisons(rows, samples, memo, done)]
    table = pd.DataFrame(steps, columns=STEP_COLUMNS)
    return table.drop(columns="xla_flags") if not (table["xla_flags"] != "").any() else table


VERDICT_COLUMNS = ["workload", "xla_flags", "release", "median", "ratio", "ci_low", "ci_high", "p", "verdict"]


@shows(*registry.SWEEP_COMPARED)
def release_verdicts(rows: pd.DataFrame, samples: pd.DataFrame, done: Compared | None = None) -> pd.DataFrame:
    """A sweep's answer: each release with its median and comparison with the one before (``done``)."""
    steady = rows[rows["test"] == registry.SWEEP_STEADY.id].assign(xla_flags=flags_of(rows))
    medians = {
        (str(n), str(f), str(v)): m
        for n, f, v, m in zip(steady["name"], steady["xla_flags"], steady["release"], steady["median"])
    }
    workloads = dict(zip(steady["name"].astype(str), steady["workload"].astype(str)))
    by_release = {(p.name, p.flags, p.new): (p, c) for p, c in comparisons(rows, samples, done=done)}
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
                if (name, flags, release) in by_release:
                    pair, c = by_release[(name, flags, release)]
                    if pair.differ:
                        row["verdict"] = "results differ"
                    else:
                        row.update(
                            ratio=c.ratio, ci_low=c.ci_low, ci_high=c.ci_high, p=c.p_one_sided(), verdict=c.in_words()
                        )
                found.append(row)
    return pd.DataFrame(found, columns=VERDICT_COLUMNS)


def flag_effects(rows: pd.DataFrame, samples: pd.DataFrame) -> pd.DataFrame:
    """Each release with each XLA-flags value against the same release without flags (`flag_pairs`)."""
    steps = [_step(pair, pair.compared()) for pair in flag_pairs(rows, samples)]
    return pd.DataFrame(steps, columns=STEP_COLUMNS)


def is_timeline(folder: str | Path) -> bool:
    """Whether a sweep folder is a release timeline (`jaxmlp sweep timeline`, named ``timeline-<time>``)."""
    return Path(folder).name.startswith(f"{layout.TIMELINE}-")


BISECT_COLUMNS = [
    "probe",
    "from",
    "to",
    "from_median_s",
    "to_median_s",
    *RESULT_FIELDS,
    "decision",
]


def bisection_table(doc: BisectDocument) -> pd.DataFrame:
    """A row per comparison a bisection made: each probe's neighbour pairs, and what the probe decided."""
    rows = []
    for p in doc.bisection.probes:
        for s in p.steps:
            c = s.comparison
            medians = {"from_median_s": p.medians[s.from_], "to_median_s": p.medians[s.to]}
            said = {"probe": p.number, "from": s.from_, "to": s.to, **medians, **result_of(c)}
            rows.append({**said, "decision": p.decision})
    return pd.DataFrame(rows, columns=BISECT_COLUMNS)


PROBE_COLUMNS = ["probe", "release", "median", "ratio", "ci_low", "ci_high", "p", "verdict", "decision"]


def probe_verdicts(doc: BisectDocument) -> pd.DataFrame:
    """A bisection's answer, probe by probe: each release's median, comparison, and the decision."""
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
    """How one sweep's samples were measured: processes a cell, CPUs, calls a process."""
    first = rows.iloc[0]
    processes = first.get("processes")
    calls = rows.groupby("workload")["calls"].first() if {"workload", "calls"} <= set(rows) else pd.Series()
    return {
        registry.HOST: first.get(registry.HOST),
        registry.CPU_MODEL: first.get(registry.CPU_MODEL),
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


TRIALS_COLUMNS = [
    "trial",
    *(
        f"{side}_{column}"
        for side in ("injected", "aa")
        for column in ("ratio", "p", "verdict", "processes", "seconds")
    ),
]


def trials_table(doc: TrialsDocument) -> pd.DataFrame:
    """A row per detector trial: each comparison's ratio, one-sided p in its direction, and verdict."""
    rows = [
        (
            t.trial,
            *(
                value
                for side, c in (("injected", t.injected), ("aa", t.aa))
                for value in (
                    c.ratio,
                    c.p_one_sided(),
                    c.word,
                    min(c.n_baseline, c.n_new),
                    (t.seconds or {}).get(side, math.nan),
                )
            ),
        )
        for t in doc.trials
    ]
    return pd.DataFrame(rows, columns=TRIALS_COLUMNS)
