"""Tracking's plot (`jaxmlp track --site`): one machine's workload across releases against the pinned one."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from jaxmlp import registry, units
from jaxmlp.report import plot_style
from jaxmlp.report.plot_style import human_axis, legend_above
from jaxmlp.results.sweep.track_answers import (
    PINNED,
    python_changes,
    release_order,
    within,
)
from jaxmlp.stats import FASTER, INCONCLUSIVE, SAME, SLOWER

LOOK = {
    SLOWER: {"color": "C3", "marker": "^"},
    FASTER: {"color": "C2", "marker": "v"},
    SAME: {"color": "C0", "marker": "o"},
    INCONCLUSIVE: {"color": "C7", "marker": "s"},
}
"""Each verdict's colour and mark: slower red (up), faster green (down), the same blue, inconclusive grey."""
PINNED_LOOK = {"color": "black", "marker": "D"}


def _times(value: float, _: Any = None) -> str:
    """A ratio's tick without trailing zeros: ``×1.1``, ``×0.95``."""
    number = units.number(value)
    return "×" + (number.rstrip("0").rstrip(".") if "." in number else number)


def track_figure(rows: pd.DataFrame, threshold: float = registry.THRESHOLD) -> Any:
    """One machine's workload against its pinned release: the medians above, the ratios and verdicts below."""
    import matplotlib.pyplot as plt

    mine = rows[rows["against"] == PINNED]
    pinned = sorted(set(mine["baseline"].astype(str)), key=registry.version_key)
    versions = release_order([*mine["release"].astype(str), *pinned])
    at = {v: i for i, v in enumerate(versions)}
    fig, (top, bottom) = plt.subplots(
        2, 1, figsize=(plot_style.WIDTH_IN, 5.6), layout="constrained", sharex=True, height_ratios=(1, 1.3)
    )
    base = f"{', '.join(pinned)} (pinned)"
    _times_panel(top, mine, pinned, at, base)
    _ratio_panel(bottom, mine, pinned, at, threshold)
    bottom.set(ylabel="time / pinned (95% interval)", title=f"Against {base}: the shaded band is {within(threshold)}")
    bottom.set_xticks(range(len(versions)), versions, rotation=30 if len(versions) > 8 else 0)
    bottom.set_xlabel("jax / jaxlib release")
    bottom.set_xlim(-0.5, len(versions) - 0.5)
    _python_changes(top, bottom, mine, at)
    legend_above(fig)
    return fig


def _times_panel(top: Any, mine: pd.DataFrame, pinned: list[str], at: dict[str, int], base: str) -> None:
    """Each release's median time and the pinned release's measured beside it, on an axis from zero."""
    x = [at[str(r)] for r in mine["release"]]
    beside = {"linestyle": "none", "markerfacecolor": "none", **PINNED_LOOK}
    top.plot(x, mine["baseline_median_s"], label=f"{base}, measured beside it", **beside)
    top.plot(x, mine["median_s"], linestyle="none", marker="o", color="#333", label="the release's median")
    top.set(ylabel="median time", title=f"Time by release, against {base}")
    for p in pinned:  # the pinned release's own column: its medians, each measured beside a release
        own = mine[mine["baseline"].astype(str) == p]["baseline_median_s"]
        top.plot([at[p]] * len(own), own, **beside)
    times = [float(v) for v in (*mine["median_s"], *mine["baseline_median_s"]) if math.isfinite(float(v))]
    human_axis(top, "y", values=times)
    if top.get_yscale() == "linear" and times:
        top.set_ylim(0, max(times) * 1.12)  # from zero: a 1% change looks like 1%; the highest marker whole


def _ratio_panel(bottom: Any, mine: pd.DataFrame, pinned: list[str], at: dict[str, int], threshold: float) -> None:
    """Each release's ratio to the pinned one with its 95% interval and verdict, the threshold's band shaded."""
    low, high = 1 / (1 + threshold), 1 + threshold
    bottom.axhspan(low, high, color="C0", alpha=0.08, linewidth=0)
    bottom.axhline(1.0, color="grey", linewidth=0.8)
    for p in pinned:
        bottom.plot(at[p], 1.0, linestyle="none", **PINNED_LOOK)
        bottom.annotate("pinned", (at[p], 1.0), xytext=(0, -16), textcoords="offset points", ha="center")
    for verdict, look in LOOK.items():
        part = mine[mine["verdict"] == verdict]
        if part.empty:
            continue
        ratio = part["ratio"].astype(float)
        errors = [(ratio - part["low"].astype(float)).clip(lower=0), (part["high"].astype(float) - ratio).clip(lower=0)]
        x = [at[str(r)] for r in part["release"]]
        bottom.errorbar(x, ratio, yerr=errors, linestyle="none", capsize=4, markersize=7, label=verdict, **look)
    finite = [float(v) for v in (*mine["low"], *mine["high"], low, high) if math.isfinite(float(v))]
    pad = (max(finite) - min(finite)) * 0.12
    bottom.set_ylim(min(finite) - pad, max(finite) + pad)
    bottom.yaxis.set_major_formatter(_times)


def _python_changes(top: Any, bottom: Any, mine: pd.DataFrame, at: dict[str, int]) -> None:
    """A dashed line on both panels before each release measured on another Python than the one before it."""
    for release, python in python_changes(mine):
        for ax in (top, bottom):
            ax.axvline(at[release] - 0.5, color="C1", linestyle="--", linewidth=1)
        top.annotate(
            f"Python {python} from here",
            (at[release] - 0.5, 1),
            xycoords=("data", "axes fraction"),
            xytext=(4, -4),
            textcoords="offset points",
            va="top",
            color="C1",
        )


def plot_track(rows: pd.DataFrame, threshold: float = registry.THRESHOLD) -> str:
    """`track_figure` as a base64 PNG."""
    with plot_style.style():
        return plot_style.png(track_figure(rows, threshold))
