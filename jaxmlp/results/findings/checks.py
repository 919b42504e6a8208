"""The findings that check a machine's runs: the goals, peak memory, and how fast a large results folder reads."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from jaxmlp import registry
from jaxmlp.results import tables
from jaxmlp.results.findings.bench import per_backend
from jaxmlp.results.findings.citing import (
    older_note,
    runs_read,
)
from jaxmlp.results.findings.model import ANCHOR, Finding, Table
from jaxmlp.results.findings.questions import GOALS_MET, LARGE_FOLDER, PEAK_MEMORY
from jaxmlp.results.findings.select import Parts, machine_of, newest_per_backend, timed
from jaxmlp.results.tables import RunTables
from jaxmlp.units import duration, size

DEVICE_PEAK = "the device's peak, where the backend keeps one, since its process started (JAX cannot reset it)"
MEMORY_CAPTION = (
    f"Peak memory of each benchmark (host resident set, its peak reset before each benchmark; {DEVICE_PEAK}), "
    "largest first"
)
PROCESS_MEMORY_CAPTION = (
    "Memory at each benchmark, as the run's file lists them: its process's peak host resident set since that process "
    "started (it could not be reset before each benchmark here, so a value holds every benchmark its process ran "
    f"before it, and none is a benchmark's own); {DEVICE_PEAK}"
)


def goals_frame(goals: list[dict[str, Any]]) -> pd.DataFrame:
    """The goals as a table of words: goal, state, the numbers."""
    state = {True: "met", False: "MISSED", None: "not measured"}
    return pd.DataFrame([(g["goal"], state[g["met"]], g["text"]) for g in goals], columns=["goal", "state", "numbers"])


def goals(
    parts: Parts,
    accuracy: Mapping[str, float],
    folder: Path | None = None,
    timed_only: bool = True,
) -> list[Finding]:
    """Per backend, the goals of its newest timed run with an epoch ladder, under the heading of what they are."""
    found = newest_per_backend(parts, lambda tabled: bool(tabled.goals(accuracy)), timed_only, (registry.EPOCH,))
    out = []
    for backend, tabled in found.items():
        part, mine = tabled.rows, tabled.goals(accuracy)
        met = sum(bool(g["met"]) for g in mine)
        measured = sum(g["met"] is not None for g in mine)
        missed = [g["goal"] for g in mine if g["met"] is False]
        text = (
            f"{met} of {measured} met" + (f"; missed: {'; '.join(missed)}" if missed else "") + "." + older_note(part)
        )
        out.append(
            Finding(
                tables.goal_group(backend),
                text,
                ANCHOR.goals,
                True,
                runs_read(part, folder),
                machine_of(part),
                (Table("Goals, read from this run's epochs and GEMMs", goals_frame(mine)),),
            )
        )
    return out or [
        Finding(GOALS_MET.text, "No run with the epoch ladder yet: `nox -s bench`.", GOALS_MET.anchor, False)
    ]


def memory(parts: Parts, folder: Path | None = None, timed_only: bool = True) -> list[Finding]:
    def answer(tabled: RunTables, table: pd.DataFrame) -> tuple[str, tuple[Table, ...]]:
        part = tabled.rows
        if not tables.peaks_are_own(part):
            runs = part["file"].nunique()
            return (
                f"The largest host peak {'the run' if runs == 1 else f'the {runs} runs'} recorded is "
                f"{size(table['peak_rss_bytes'].max())}, over "
                f"{len(table)} benchmarks, and no benchmark's own: the peak could not be reset before each "
                "benchmark here, so each records its process's peak since that process started.",
                (Table(PROCESS_MEMORY_CAPTION, table, long=True),),
            )
        top = table.iloc[0]
        return (
            f"The largest host peak is {top.benchmark}'s, {size(top.peak_rss_bytes)}, of {len(table)} benchmarks "
            "(each its own: the peak reset before each).",
            (Table(MEMORY_CAPTION, table, long=True),),
        )

    found = per_backend(parts, PEAK_MEMORY, tables.memory_table, "", answer, folder, timed_only)
    return [f for f in found if f.answered]


RESULTS_FOLDER_CAPTION = (
    "A large results folder: each command a fresh process, read again (median time) and read first, its own peak memory"
)


def results_folder(
    runs_by_file: Mapping[str, pd.DataFrame], folder: Path | None = None, timed_only: bool = True
) -> list[Finding]:
    """Per machine, how long `jaxmlp summary` and `jaxmlp report` took over a generated folder, and its goals."""
    found: dict[str, pd.DataFrame] = {}
    for rows in runs_by_file.values():
        if (rows["test"] == registry.RESULTS_FOLDER.id).any() and (timed(rows) or not timed_only):
            found.setdefault(machine_of(rows), rows)
    out = []
    for name, rows in found.items():
        table = tables.results_folder_table(rows)
        said = [
            f"{row['command']} took {duration(row['median_s'])} and {size(row['command_peak_bytes'])} warm"
            + (f", {duration(row['cold_s'])} and {size(row['cold_peak_bytes'])} cold" if row["cold_s"] > 0 else "")
            + f" over {row['folder_runs']:.0f} runs"
            + (f" (warm {row['warm_goal']}; cold {row['cold_goal']})" if row["warm_goal"] else "")
            for _, row in table.iterrows()
        ]
        out.append(
            Finding(
                LARGE_FOLDER.text,
                "; ".join(said) + ".",
                ANCHOR.benchmarks,
                True,
                runs_read(rows, folder),
                name,
                (Table(RESULTS_FOLDER_CAPTION, table),),
            )
        )
    return out
