"""The report's plots: each `Figure` of a section drawn with matplotlib, as a base64 PNG for the HTML page.

Each kind has a builder (``*_figure``: data in, a matplotlib figure out, for tests to inspect), drawn as a PNG by
`PLOTTERS`; how they look (size, fonts, units, legends) is `jaxmlp.report.plot_style`'s. Histories and release
timelines are drawn in `jaxmlp.report.plots_history`, version sweeps, bisections and the roofline in
`jaxmlp.report.plots_sweep`.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterable
from typing import Any

import pandas as pd

from jaxmlp import registry, units
from jaxmlp.report import plot_style
from jaxmlp.report.content import Figure
from jaxmlp.report.plot_style import SMALL_PT, bars_height, human_axis, legend_above, slots, wrap
from jaxmlp.report.plots_history import history_figure, timeline_figure
from jaxmlp.report.plots_sweep import bisection_figure, roofline_figure, sweep_figure
from jaxmlp.results.schema.roofline import RooflineDocument

PRECISION_COLOURS = {"f32": "C0", "bf16": "C1"}
PRECISION_LINES = {"f32": "--", "bf16": ":"}
PAIR = 1.5
"""Label lines a pair of bars takes."""


def _precision(value: object) -> str:
    """A row's precision; none recorded (older rows, the floors' f32 matmul) is float32."""
    return "f32" if value is None or (isinstance(value, float) and pd.isna(value)) or value == "" else str(value)


def _precisions(table: pd.DataFrame) -> pd.Series:
    return pd.Series("f32", index=table.index) if "precision" not in table else table["precision"].map(_precision)


def _bar_limits(ax: Any, values: Iterable[float]) -> None:
    """Room right of the longest bar for its value's label."""
    finite = [float(v) for v in values if pd.notna(v) and float(v) > 0]
    if not finite:
        return
    if ax.get_xscale() == "log":
        ax.set_xlim(min(finite) / 2, max(finite) * 6)
    else:
        ax.set_xlim(0, max(finite) * 1.25)


def _bar_label(ax: Any, text: str, at: tuple[float, float]) -> None:
    """``text`` just right of a horizontal bar's end ``at``."""
    ax.annotate(text, at, xytext=(4, 0), textcoords="offset points", va="center", fontsize=SMALL_PT)


def by_batch_size_figure(table: pd.DataFrame, lines: Iterable[tuple[str, str]], ylabel: str, title: str) -> Any:
    """Log-log lines of median times (``*_ms`` columns) against batch size; ``lines`` are (column, label) pairs."""
    fig, ax = plot_style.figure(3.2, 8.0)
    for column, label in lines:
        ax.plot(table["batch_size"], table[column] / 1e3, marker="o", label=label)
    ax.set(xscale="log", yscale="log", xlabel="batch size", ylabel=ylabel, title=title)
    sizes = sorted(int(s) for s in table["batch_size"])
    ax.minorticks_off()
    ax.set_xticks(sizes, [str(s) for s in sizes])
    human_axis(ax, "y")
    legend_above(fig)
    return fig


def update_figure(table: pd.DataFrame) -> Any:
    lines = (("jit_ms", "jit"), ("eager_ms", "eager (no jit)"), ("dispatch_ms", "jit, dispatch only"))
    return by_batch_size_figure(table, lines, "median step time", f"Update step ({table['backend'].iloc[0]})")


def predict_figure(table: pd.DataFrame) -> Any:
    lines = (("loop_ms", "Python loop"), ("vmap_ms", "vmap"), ("jit_vmap_ms", "jit(vmap)"))
    return by_batch_size_figure(table, lines, "median time", f"Prediction ({table['backend'].iloc[0]})")


def loader_ladder_figure(table: pd.DataFrame) -> Any:
    """One backend's loader ladder: input alone and the training epoch per loader, worker count and precision
    (median, bars to the quartiles; a kind no row measured is not drawn, nor named), the scan epoch and the compute
    floor of each precision as lines; a log axis where bars and lines span decades."""
    table = table.reset_index(drop=True)
    precision = _precisions(table)
    several = precision.nunique() > 1
    labels = [
        (f"{p}, {w} worker{'' if w == 1 else 's'}" if p in registry.WORKER_PIPELINES else str(p))
        + (f", {q}" if several else "")
        for p, w, q in zip(table["pipeline"], table["workers"], precision)
    ]
    fig, ax = plot_style.figure(bars_height(labels, PAIR, extra_in=1.9))
    positions, length = slots(labels, PAIR)
    measured = (("loader", "input alone", "C0"), ("epoch", "training epoch", "C1"))
    kinds = [(name, text, colour) for name, text, colour in measured if table[f"{name}_s"].notna().any()]
    for i, (name, text, colour) in enumerate(kinds):
        offset = 0.0 if len(kinds) == 1 else 0.6 * i - 0.3
        median, iqr = table[f"{name}_s"], table[f"{name}_iqr_s"].fillna(0)
        ax.barh([p + offset for p in positions], median, height=0.6, xerr=iqr / 2, capsize=2, label=text, color=colour)
    lines = []
    for q, rows in table.groupby(precision, sort=False):
        for ratio, color, text in (("epoch_x_floor", "C3", "compute floor"), ("epoch_x_scan", "C2", "scan epoch")):
            line = (rows["epoch_s"] / rows[ratio]).dropna()
            if len(line):
                value = float(line.iloc[0])
                lines.append(value)
                named = f"{text}, {q}" if "precision" in table else text  # else the table's runs are one line
                ax.axvline(
                    value,
                    color=color,
                    linestyle=PRECISION_LINES.get(str(q), "-."),
                    label=f"{named}: {units.duration(value)}",
                )
    ax.set_yticks(positions, labels)
    ax.set_ylim(length, 0)
    values = [v for name, _, _ in kinds for v in table[f"{name}_s"]] + lines
    human_axis(ax, "x", values=values)
    _bar_limits(ax, values)
    human_axis(ax, "x")
    log = " (log scale)" if ax.get_xscale() == "log" else ""
    ax.set(xlabel=f"median time an epoch{log}", title=f"Loader ladder ({table['backend'].iloc[0] or 'host'})")
    legend_above(fig)
    return fig


def ladder_figure(ladder: pd.DataFrame) -> Any:
    """One backend's epoch ladder: a bar per rung (the floors hatched), coloured by precision, each labelled with
    its time; the best floor of each precision a dashed line."""
    from matplotlib.patches import Patch

    ladder = ladder.reset_index(drop=True)
    precision = _precisions(ladder)
    floor = ladder["library"].fillna("").astype(str) != ""  # a floor names the library whose rate it divides by
    labels = [wrap(r) for r in ladder["rung"]]
    fig, ax = plot_style.figure(bars_height(labels))
    positions, length = slots(labels)
    colours = [PRECISION_COLOURS.get(q, "C2") for q in precision]
    bars = ax.barh(positions, ladder["epoch_s"], height=0.7, color=colours, edgecolor="white", linewidth=0)
    for bar, is_floor in zip(bars, floor):
        bar.set_hatch("//" if is_floor else "")
    for y, value in zip(positions, ladder["epoch_s"]):
        if pd.notna(value) and value > 0:
            _bar_label(ax, units.duration(value), (value, y))
    for q, rows in ladder[floor].groupby(precision[floor], sort=False):
        best = rows.sort_values("epoch_s").iloc[0]
        ax.axvline(
            best["epoch_s"],
            color=PRECISION_COLOURS.get(str(q), "C2"),
            linestyle="--",
            linewidth=1.2,
            label=f"{q} floor ({best['library']}): {units.duration(best['epoch_s'])}",
        )
    ax.set_yticks(positions, labels)
    ax.set_ylim(length, 0)
    human_axis(ax, "x", values=ladder["epoch_s"])
    _bar_limits(ax, ladder["epoch_s"])
    human_axis(ax, "x")
    ax.set(xlabel="median epoch", title=f"Epoch ladder ({ladder['backend'].iloc[0]})")
    handles = [Patch(color=PRECISION_COLOURS.get(q, "C2"), label=q) for q in dict.fromkeys(precision)]
    handles.append(Patch(facecolor="grey", hatch="//", edgecolor="white", label="floor (epoch FLOPs / a GEMM rate)"))
    lines, names = ax.get_legend_handles_labels()
    fig.legend(
        [*handles, *lines],
        [h.get_label() for h in handles] + names,
        loc="outside upper center",
        ncols=min(3, len(handles) + len(lines)),
        frameon=False,
    )
    return fig


def cpu_accelerator_figure(table: pd.DataFrame) -> Any:
    """The epoch ladder's rungs (floors, the step's matmuls, pipelines) timed on both the CPU and the accelerator,
    a pair of bars each (log axis), with the CPU's time over the accelerator's."""
    rungs = table[~table["benchmark"].str.contains(":")]  # the ladder's rungs; the other benchmarks are in the table
    rungs = rungs[rungs["cpu_s"].notna() & rungs["accelerator_s"].notna()].reset_index(drop=True)
    labels = [wrap(b) for b in rungs["benchmark"]]
    fig, ax = plot_style.figure(bars_height(labels, PAIR, extra_in=1.9))
    positions, length = slots(labels, PAIR)
    cpu, accelerator = rungs["cpu_s"], rungs["accelerator_s"]
    ax.barh([p - 0.3 for p in positions], cpu, height=0.6, label="CPU")
    ax.barh([p + 0.3 for p in positions], accelerator, height=0.6, label="accelerator")
    for y, c, a in zip(positions, cpu, accelerator):
        for at, value, text in ((y - 0.3, c, ""), (y + 0.3, a, f" (the CPU takes {units.ratio(c / a)})")):
            _bar_label(ax, units.duration(value) + text, (value, at))
    ax.set_yticks(positions, labels)
    ax.set_ylim(length, 0)
    ax.set_xscale("log")
    _bar_limits(ax, [*cpu, *accelerator])
    human_axis(ax, "x")
    ax.set(xlabel="median epoch (log scale)", title="CPU vs accelerator")
    legend_above(fig)
    return fig


def scaling_figure(table: pd.DataFrame) -> Any:
    """One backend's scaling: speed-up and efficiency against N (log 2), a line per process count P, the ideal
    line dashed."""
    fig, ax = plot_style.figure(4.0, 8.0)
    for p, rows in table.groupby("processes"):
        devices = rows["devices"].astype(int)
        one = "" if table["processes"].nunique() == 1 else f", P = {p}"
        ax.plot(devices, rows["speedup"], marker="o", label=f"epoch speed-up over N = 1{one}")
        ax.plot(devices, rows["efficiency"], marker="s", label=f"efficiency (speed-up / N){one}")
    every = sorted(table["devices"].astype(int).unique())
    ax.plot(every, every, color="grey", linestyle="--", label="ideal speed-up")
    ax.set(xscale="log", yscale="log", xlabel="devices N", title=f"Data-parallel scaling ({table['backend'].iloc[0]})")
    ax.minorticks_off()
    ax.set_xticks(every, [str(n) for n in every])
    human_axis(ax, "y", "number")
    legend_above(fig)
    return fig


FIGURES: dict[str, Callable[..., Any]] = {
    "roofline": roofline_figure,
    "update": update_figure,
    "predict": predict_figure,
    "loader_ladder": loader_ladder_figure,
    "ladder": ladder_figure,
    "scaling": scaling_figure,
    "cpu_accelerator": cpu_accelerator_figure,
    "sweep": sweep_figure,
    "bisection": bisection_figure,
    "history": history_figure,
    "timeline": timeline_figure,
}
"""Each kind of `Figure`, and the function that builds its matplotlib figure."""


def _drawn(kind: str, *data: Any) -> str:
    with plot_style.style():
        return plot_style.png(FIGURES[kind](*data))


def roofline_png(doc: RooflineDocument) -> bytes:
    """The roofline as PNG bytes, for a file beside its results."""
    return base64.b64decode(_drawn("roofline", doc))


PLOTTERS: dict[str, Callable[..., str]] = {kind: lambda *data, kind=kind: _drawn(kind, *data) for kind in FIGURES}
"""Each kind of `Figure`, and the function that draws it as a base64 PNG."""


def draw(figure: Figure) -> str:
    """A figure as a base64-encoded PNG."""
    return _drawn(figure.kind, *figure.data)
