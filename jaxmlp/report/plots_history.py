"""The report's plots over time: a test's benchmarks across runs (a line per machine, the machine named) and a
release timeline's workload. Their look is `jaxmlp.report.plot_style`'s."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from jaxmlp import units
from jaxmlp.report import plot_style
from jaxmlp.report.plot_style import SMALL_PT, human_axis, legend_above
from jaxmlp.results import history
from jaxmlp.results.sweep.compared import TimelineColumn
from jaxmlp.stats import FASTER, SLOWER

COLUMNS = 4
"""Small multiples a row."""
CELL_IN = (plot_style.WIDTH_IN / COLUMNS, 1.85)
"""Each small plot's width and height."""
TICKS = 6
"""At most this many runs numbered on a history's x axis (a small plot is a quarter of the page wide: more run
together)."""
MACHINE_COLOURS = ("C0", "C1", "C4", "C9", "C5", "C6", "C7", "C8")
"""A colour per machine; red (C3) and green (C2) mark the changes."""
TITLE_CHARS = 24
LABEL_BOX = {"facecolor": "white", "edgecolor": "none", "alpha": 0.85, "pad": 1}
"""Behind a change's label: the line it names stays visible, the label readable."""


def machines(points: pd.DataFrame) -> pd.Series:
    """Each point's machine (and the settings that make runs comparable): its ``machine`` where the history
    names one, else its ``setting``."""
    key = "machine" if "machine" in points else "setting"
    return points[key].fillna("?").astype(str)


def history_figure(points: pd.DataFrame, changes: pd.DataFrame) -> Any:
    """One test's benchmarks across runs, a small plot each: a line per machine of the median per run with its
    interquartile band, runs in time order (x: run number, each run's date, commit and jax below), flagged
    changes marked (regressions red, improvements green). The machine is named above the plots."""
    import matplotlib.pyplot as plt

    points = points.assign(_machine=machines(points))
    names = sorted(points["benchmark"].unique())
    kinds = list(dict.fromkeys(points.sort_values("timestamp")["_machine"]))
    runs = points.drop_duplicates("file").sort_values("timestamp")
    labels = [history.run_label(r) for r in runs.itertuples()]
    position = {file: i for i, file in enumerate(runs["file"])}
    columns = min(COLUMNS, len(names))
    rows = -(-len(names) // columns)
    key = [f"{n + 1} = {label}" for n, label in enumerate(labels)]
    key_lines = [";  ".join(key[i : i + 3]) for i in range(0, len(key), 3)]
    height = CELL_IN[1] * rows + 0.5 + 0.2 * len(key_lines) + 0.2 * (len(kinds) + 2)
    fig, axes = plt.subplots(rows, columns, figsize=(plot_style.WIDTH_IN, height), layout="constrained", squeeze=False)
    step = max(1, math.ceil(len(labels) / TICKS))
    for ax, name in zip(axes.flat, names):
        mine = points[points["benchmark"] == name]
        for m, part in mine.groupby("_machine", sort=False):
            colour = MACHINE_COLOURS[kinds.index(str(m)) % len(MACHINE_COLOURS)]
            part = part.sort_values("timestamp")
            x = [position[f] for f in part["file"]]
            ax.fill_between(x, part["q1"], part["q3"], alpha=0.25, color=colour, linewidth=0)
            ax.plot(x, part["median"], marker="o", markersize=3, color=colour, label=f"machine: {m}")
            where = part["setting"].iloc[0]
            marks = changes[(changes["benchmark"] == name) & (changes["setting"] == where)]
            for verdict, color in ((SLOWER, "C3"), (FASTER, "C2")):
                for to in marks.loc[marks["verdict"] == verdict, "to_file"]:
                    if to in set(part["file"]):
                        ax.plot(
                            position[to],
                            part.loc[part["file"] == to, "median"].iloc[0],
                            marker="X",
                            markersize=9,
                            color=color,
                            linestyle="none",
                            label=f"flagged {verdict}",
                        )
        title = str(name).removeprefix("test_")  # its parameters on a line of their own where it is long
        ax.set_title(title.replace("[", "\n[", 1) if len(title) > TITLE_CHARS else title, fontsize=SMALL_PT)
        human_axis(ax, "y", values=[*mine["q1"], *mine["q3"]])
    for i, ax in enumerate(axes.flat):
        ax.set_visible(i < len(names))
        ax.set_xticks(range(0, len(labels), step), [str(n + 1) for n in range(0, len(labels), step)])
        ax.set_xlim(-0.3, len(labels) - 0.7)
    legend_above(fig)
    fig.supxlabel("runs: " + "\n".join(key_lines), fontsize=SMALL_PT)
    return fig


def _label(ax: Any, text: str, at: tuple[float, float], color: str, rise: float | None = None) -> None:
    """A change's label at ``at`` (``rise`` points above it, where given), in the change's colour."""
    above = {} if rise is None else {"textcoords": "offset points", "xytext": (0, rise)}
    ax.annotate(text, at, ha="center", fontsize=SMALL_PT, color=color, bbox=LABEL_BOX, **above)


def timeline_figure(column: TimelineColumn) -> Any:
    """A release timeline's workload: the median per release with its interquartile band, releases in order (their
    labels slanted, all shown); a step drawn as a dashed line between the releases either side, a transient as a
    cross on its release, a drift as a shaded span; slower red, faster green, each with its ratio."""
    import numpy as np

    x = np.arange(len(column.releases))
    q1, median, q3 = (np.array([np.quantile(s, q) for s in column.samples]) for q in (0.25, 0.5, 0.75))
    fig, ax = plot_style.figure(4.0, min(plot_style.WIDTH_IN, max(6.0, 0.55 * len(x) + 2.5)))
    ax.fill_between(x, q1, q3, alpha=0.25, color="C0", linewidth=0, label="interquartile range")
    ax.plot(x, median, marker="o", markersize=4, color="C0", label="median")
    low, top = float(np.min(q1)), float(np.max(q3))
    ax.set_ylim(low - 0.08 * (top - low), top + 0.3 * (top - low))  # headroom for the changes' labels
    for change in column.changes:
        color = "red" if change.comparison.verdict == "regression" else "green"
        text = units.ratio(change.comparison.ratio)
        if change.kind == "transient":
            ax.plot(change.index, median[change.index], marker="X", markersize=11, color=color, linestyle="none")
            _label(ax, f"transient {text}", (change.index, median[change.index]), color, 8)
        elif change.kind == "drift":
            start = column.releases.index(change.before)
            ax.axvspan(start, change.index, color=color, alpha=0.12)
            _label(ax, f"drift {text}", ((start + change.index) / 2, top), color)
        else:
            ax.axvline(change.index - 0.5, color=color, linestyle="--", linewidth=1.2)
            _label(ax, f"{change.at} {text}", (change.index - 0.5, top), color, 6)
    ax.set_xticks(x, column.releases, rotation=45, ha="right")
    human_axis(ax, "y")
    flags = f", XLA_FLAGS={column.xla_flags}" if column.xla_flags else ""
    ax.set_title(f"{column.workload}{flags}: steady state by release")
    legend_above(fig)
    return fig
