"""The report's plots of releases and of the machine's ceilings: a sweep, a bisection's probes, the roofline."""

from __future__ import annotations

from typing import Any

import pandas as pd

from jaxmlp import registry, units
from jaxmlp.measure.bisection import WORDS
from jaxmlp.report import plot_style
from jaxmlp.report.plot_style import SMALL_PT, human_axis, legend_above
from jaxmlp.results.schema.bisect import BisectDocument
from jaxmlp.results.schema.roofline import RooflineDocument
from jaxmlp.results.sweep.compared import flags_of
from jaxmlp.stats import FASTER, SLOWER

DODGE = 0.24
"""How far apart (in releases) the outermost of a sweep's series sit at one release."""


def sweep_figure(rows: pd.DataFrame, steps: pd.DataFrame) -> Any:
    """Steady state per release (median, IQR) of each workload and flags column, flagged steps marked."""
    fig, ax = plot_style.figure(4.5)
    steady = rows[rows["test"] == registry.SWEEP_STEADY.id].assign(flags=flags_of(rows))
    versions = sorted(steady["release"].unique(), key=registry.version_key)
    series = list(steady.groupby(["name", "flags"]))
    labels: set[str] = set()
    for i, ((name, flags), part) in enumerate(series):
        part = part.set_index("release")
        aside = DODGE * (i / (len(series) - 1) - 0.5) if len(series) > 1 else 0.0
        x = [versions.index(v) + aside for v in part.index]
        yerr = [part["median"] - part["q1"], part["q3"] - part["median"]]
        label = f"{name} [{flags}]" if flags else name
        ax.errorbar(x, part["median"], yerr=yerr, marker="o", capsize=3, label=label, color=f"C{i}")
        mine = steps[steps["benchmark"] == name]
        if "xla_flags" in steps:
            mine = mine[mine["xla_flags"] == flags]
        for verdict, color, marker in ((SLOWER, "red", "^"), (FASTER, "green", "v")):
            for to in mine.loc[mine["verdict"] == verdict, "to"]:
                ax.plot(
                    versions.index(to) + aside,
                    part.loc[to, "median"],
                    marker=marker,
                    markersize=12,
                    markerfacecolor="none",
                    markeredgewidth=2,
                    color=color,
                    linestyle="none",
                    label=f"flagged {verdict}" if verdict not in labels else None,
                )
                labels.add(verdict)
    ax.set_xticks(range(len(versions)), versions, rotation=30, ha="right")
    ax.set(xlabel="jax / jaxlib release", ylabel="steady state", title="Steady state by release")
    human_axis(ax, "y", values=[*steady["q1"], *steady["q3"]])
    legend_above(fig, ncols=2)
    return fig


def bisection_figure(medians: pd.DataFrame, doc: BisectDocument) -> Any:
    """Each probed release's median, probe by probe, on the releases' axis; the answer marked."""
    fig, ax = plot_style.figure(4.0)
    candidates = list(doc.bisection.candidates)
    for number, part in medians.groupby("probe"):
        ax.plot(part["position"], part["median_s"], marker="o", label=f"probe {number}")
    b = doc.bisection
    if b.answered and b.first is not None:
        ax.axvline(
            candidates.index(b.first),
            color="red" if b.direction in ("regression", None) else "green",
            linestyle="--",
            label=f"first {WORDS.get(b.direction or '', 'that fails')}: {b.first}",
        )
    ax.set_xticks(range(len(candidates)), candidates, rotation=45, ha="right")
    ax.set(xlabel="jax / jaxlib release", ylabel=f"steady {doc.settings.get('workload')}", title="Bisection probes")
    human_axis(ax, "y")
    legend_above(fig)
    return fig


def roofline_figure(doc: RooflineDocument) -> Any:
    """The roofline: attainable FLOP/s against arithmetic intensity (log-log), each workload a named point."""
    import numpy as np

    fig, ax = plot_style.figure(5.0, 8.0)
    flops, bandwidth = float(doc.ceilings["flops_per_second"]), float(doc.ceilings["bytes_per_second"])
    placed = {k: p for k, p in doc.points.items() if p.get("intensity")}
    lo = min([flops / bandwidth / 100, *(p["intensity"] / 3 for p in placed.values())])
    hi = max([flops / bandwidth * 100, *(p["intensity"] * 3 for p in placed.values())])
    x = np.geomspace(lo, hi, 200)
    ax.plot(x, np.minimum(flops, x * bandwidth), color="black", linewidth=1.5)
    ax.axhline(flops, color="grey", linestyle=":", linewidth=0.8)
    ax.text(hi, flops * 1.08, f"FLOP rate {units.flop_rate(flops)}", ha="right", va="bottom", fontsize=SMALL_PT)
    ax.text(
        lo * 1.3, lo * 1.3 * bandwidth * 1.2, f"bandwidth {units.size(bandwidth)}/s", fontsize=SMALL_PT, va="bottom"
    )
    markers = "osD^vP*X"
    xy = {name: (float(p["intensity"]), float(p["achieved_flops_per_second"])) for name, p in placed.items()}
    drawn = {
        name: ax.scatter(
            *xy[name],
            zorder=3,
            marker=markers[i % len(markers)],
            s=POINT_SIZE,
            label=f"{name}: {units.ratio(p['x_attainable'])} attainable, {p['binds']} binds",
        )
        for i, (name, p) in enumerate(placed.items())
    }
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(top=flops * 3)
    human_axis(ax, "y", "flops")
    human_axis(ax, "x", "number")
    ax.set_xlabel("arithmetic intensity (FLOP per byte accessed, XLA's cost analysis)")
    ax.set_ylabel("FLOP/s")
    ax.set_title("Roofline: each workload against this machine's two ceilings")
    legend_above(fig, ncols=1)
    fig.draw_without_rendering()  # the layout, so the points' places on the canvas are known
    shown = {name: tuple(ax.transData.transform(point)) for name, point in xy.items()}
    for group in coincident(shown):
        for k, name in enumerate(group):
            if k:  # a ring around the ones before it, each larger
                drawn[name].set_facecolor("none")
                drawn[name].set_edgecolor(f"C{list(placed).index(name)}")
                drawn[name].set_linewidth(1.5)
                drawn[name].set_sizes([POINT_SIZE * (1 + 1.2 * k) ** 2])
            ax.annotate(
                name,
                xy[name],
                xytext=(16, 14 * (k - (len(group) - 1) / 2)),
                textcoords="offset points",
                fontsize=SMALL_PT,
                va="center",
                arrowprops={"arrowstyle": "-", "color": "grey", "linewidth": 0.6, "shrinkA": 0, "shrinkB": 2},
            )
    return fig


POINT_SIZE = 40.0
"""A roofline point's area (points²)."""
NEAR_PX = 10.0
"""Two points closer than this on the canvas (pixels, on both axes) sit on one another."""


def coincident(places: dict[str, tuple[float, float]], near: float = NEAR_PX) -> list[list[str]]:
    """The groups (two or more names) of points within ``near`` of their group's first on both axes."""
    groups: list[list[str]] = []
    for name, (x, y) in places.items():
        group = next((g for g in groups if abs(places[g[0]][0] - x) < near and abs(places[g[0]][1] - y) < near), None)
        if group is None:
            groups.append([name])
        else:
            group.append(name)
    return [g for g in groups if len(g) > 1]
