"""The report's plots: each `Figure` of a section drawn with matplotlib, as a base64 PNG for the HTML page."""

from __future__ import annotations

import base64
import io
from collections.abc import Callable, Iterable
from typing import Any

import pandas as pd

from jaxmlp import registry, units
from jaxmlp.measure.bisection import WORDS
from jaxmlp.report.sections import Figure
from jaxmlp.results import history, sweep_tables, tables
from jaxmlp.results.schema.bisect import BisectDocument
from jaxmlp.results.schema.roofline import RooflineDocument


def _figure() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(6.4, 3.6), dpi=100)


def _png(fig: Any) -> str:
    """The figure as a base64 PNG of at most 256 colours (a third of the bytes of a full-colour one, and the same
    to the eye for line plots): the page stays small enough to open anywhere."""
    import matplotlib.pyplot as plt
    from PIL import Image

    buffer = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    buffer.seek(0)
    small = io.BytesIO()
    Image.open(buffer).convert("RGB").quantize(colors=256).save(small, format="PNG", optimize=True)
    return base64.b64encode(small.getvalue()).decode("ascii")


def plot_by_batch_size(table: pd.DataFrame, lines: Iterable[tuple[str, str]], ylabel: str, title: str) -> str:
    """Log-log lines of median times against batch size; ``lines`` are (column, label) pairs."""
    fig, ax = _figure()
    for column, label in lines:
        ax.plot(table["batch_size"], table[column], marker="o", label=label)
    ax.set(xscale="log", yscale="log", xlabel="batch size", ylabel=ylabel, title=title)
    sizes = sorted(int(s) for s in table["batch_size"])
    ax.minorticks_off()
    ax.set_xticks(sizes, [str(s) for s in sizes])
    ax.legend()
    return _png(fig)


def plot_update(table: pd.DataFrame) -> str:
    lines = (("jit_ms", "jit"), ("eager_ms", "eager (no jit)"), ("dispatch_ms", "jit, dispatch only"))
    return plot_by_batch_size(table, lines, "median step time (ms)", "Update step")


def plot_predict(table: pd.DataFrame) -> str:
    lines = (("loop_ms", "Python loop"), ("vmap_ms", "vmap"), ("jit_vmap_ms", "jit(vmap)"))
    return plot_by_batch_size(table, lines, "median time (ms)", "Prediction")


def plot_loader_ladder(table: pd.DataFrame) -> str:
    """One backend's loader ladder: input alone and the training epoch per loader and worker count (median, bars to
    the quartiles), the scan epoch and the compute floor as lines."""
    fig, ax = _figure()
    fig.set_figheight(max(3.6, 0.3 * len(table) + 1.6))
    labels = [
        f"{p}, {w} worker{'' if w == 1 else 's'}" if p in registry.WORKER_PIPELINES else p
        for p, w in zip(table["pipeline"], table["workers"])
    ]
    positions = range(len(table))
    for offset, name, text in ((-0.2, "loader", "input alone"), (0.2, "epoch", "training epoch")):
        median, iqr = table[f"{name}_s"], table[f"{name}_iqr_s"].fillna(0)
        ax.barh([p + offset for p in positions], median, height=0.4, xerr=iqr / 2, capsize=2, label=text)
    floor = table["epoch_s"] / table["epoch_x_floor"]
    scan = table["epoch_s"] / table["epoch_x_scan"]
    for line, color, text in ((floor, "C3", "compute floor"), (scan, "C2", "scan epoch")):
        if line.notna().any():
            value = float(line.dropna().iloc[0])
            ax.axvline(value, color=color, linestyle="--", label=f"{text} {value:.3g} s")
    ax.set_yticks(list(positions), labels)
    ax.invert_yaxis()
    ax.set(
        xscale="log", xlabel="median seconds an epoch", title=f"Loader ladder ({table['backend'].iloc[0] or 'host'})"
    )
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=2)  # below: it hides no bar
    return _png(fig)


def plot_ladder(ladder: pd.DataFrame) -> str:
    fig, ax = _figure()
    floors = ladder[ladder["rung"].isin(tables.FLOORS)]
    rungs = ladder[~ladder["rung"].isin(tables.FLOORS)]
    ax.barh(rungs["rung"], rungs["epoch_s"], color="C0")
    for (_, floor), style in zip(floors.iterrows(), ("--", ":")):
        name = "compute floor" if floor["rung"] == tables.FLOOR else "best floor"
        ax.axvline(floor["epoch_s"], color="C3", linestyle=style,
                   label=f"{name} ({floor['library']}) {floor['epoch_s']:.3g} s")  # fmt: skip
    ax.invert_yaxis()
    ax.set(xlabel="median epoch (s)", title=f"Epoch ladder ({ladder['backend'].iloc[0]})")
    ax.legend(loc="upper right")
    return _png(fig)


def plot_scaling(table: pd.DataFrame) -> str:
    """One backend's scaling: speed-up and efficiency against N (log 2), a line per process count P, the ideal
    line dashed."""
    fig, ax = _figure()
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
    ax.legend(fontsize=8)
    return _png(fig)


def plot_cpu_accelerator(table: pd.DataFrame) -> str:
    """The epoch ladder's rungs (floors, the step's matmuls, pipelines) on the CPU and the accelerator."""
    table = table[~table["benchmark"].str.contains(":")]  # the ladder's rungs; the other benchmarks are in the table
    fig, ax = _figure()
    positions = range(len(table))
    ax.barh([p - 0.2 for p in positions], table["cpu_s"], height=0.4, label="CPU")
    ax.barh([p + 0.2 for p in positions], table["accelerator_s"], height=0.4, label="accelerator")
    ax.set_yticks(list(positions), table["benchmark"])
    ax.set(xscale="log", xlabel="median epoch (s)", title="CPU vs accelerator")
    ax.invert_yaxis()
    ax.legend()
    return _png(fig)


def plot_sweep(rows: pd.DataFrame, steps: pd.DataFrame) -> str:
    """Steady state per release (median, IQR) of each workload and flags column, flagged steps marked
    (regressions red, improvements green)."""
    fig, ax = _figure()
    steady = rows[rows["test"] == registry.SWEEP_STEADY.id].assign(flags=sweep_tables.flags_of(rows))
    versions = sorted(steady["release"].unique(), key=registry.version_key)
    labels: set[str] = set()
    for i, ((name, flags), part) in enumerate(steady.groupby(["name", "flags"])):
        part = part.set_index("release")
        x = [versions.index(v) for v in part.index]
        yerr = [part["median"] - part["q1"], part["q3"] - part["median"]]
        label = f"{name} [{flags}]" if flags else name
        ax.errorbar(x, part["median"], yerr=yerr, marker="o", capsize=3, label=label, color=f"C{i}")
        mine = steps[steps["benchmark"] == name]
        if "xla_flags" in steps:
            mine = mine[mine["xla_flags"] == flags]
        for verdict, color in (("regression", "red"), ("improvement", "green")):
            for to in mine.loc[mine["verdict"] == verdict, "to"]:
                ax.plot(versions.index(to), part.loc[to, "median"], marker="X", markersize=14, color=color,
                        linestyle="none", label=f"flagged {verdict}" if verdict not in labels else None)  # fmt: skip
                labels.add(verdict)
    ax.set_xticks(range(len(versions)), versions)
    ax.set(xlabel="jax / jaxlib release", ylabel="steady state (s)", yscale="log", title="Steady state by release")
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)  # below: it hides no point
    return _png(fig)


def plot_bisection(medians: pd.DataFrame, doc: BisectDocument) -> str:
    """Each probed release's median, probe by probe, on the releases' axis; the answer marked."""
    fig, ax = _figure()
    candidates = list(doc.bisection.candidates)
    for number, part in medians.groupby("probe"):
        ax.plot(part["position"], part["median_s"], marker="o", label=f"probe {number}")
    b = doc.bisection
    if b.status == "found" and b.first is not None:
        ax.axvline(candidates.index(b.first), color="red" if b.direction == "regression" else "green",
                   linestyle="--", label=f"first {WORDS.get(b.direction or '', '')}: {b.first}")  # fmt: skip
    ax.set_xticks(range(len(candidates)), candidates, rotation=45)
    ax.set(xlabel="jax / jaxlib release", ylabel=f"steady {doc.settings.get('workload')} (s)",
           title="Bisection probes")  # fmt: skip
    ax.legend(fontsize=8)
    return _png(fig)


def plot_history(points: pd.DataFrame, changes: pd.DataFrame) -> str:
    """One test's benchmarks across runs, a small plot each: the median per run with its interquartile band, runs in
    time order (x: date, commit, jax), flagged changes marked (regressions red, improvements green)."""
    import matplotlib.pyplot as plt

    series = list(points.groupby(["benchmark", "setting"], sort=True))
    runs = points.drop_duplicates("file").sort_values("timestamp")
    labels = [history.run_label(r) for r in runs.itertuples()]
    position = {file: i for i, file in enumerate(runs["file"])}
    columns = min(4, len(series))
    rows = -(-len(series) // columns)
    fig, axes = plt.subplots(
        rows, columns, figsize=(2.55 * columns, 1.3 * rows + 0.3 + 0.15 * len(labels)), dpi=72, squeeze=False
    )
    for ax, ((name, where), part) in zip(axes.flat, series):
        part = part.sort_values("timestamp")
        x = [position[f] for f in part["file"]]
        ax.fill_between(x, part["q1"], part["q3"], alpha=0.25, color="C0", linewidth=0)
        ax.plot(x, part["median"], marker="o", markersize=3, color="C0")
        mine = changes[(changes["benchmark"] == name) & (changes["setting"] == where)]
        for verdict, color in (("regression", "red"), ("improvement", "green")):
            for to in mine.loc[mine["verdict"] == verdict, "to_file"]:
                if to in position:
                    ax.plot(position[to], part.loc[part["file"] == to, "median"].iloc[0], marker="X", markersize=9,
                            color=color, linestyle="none")  # fmt: skip
        ax.set_title(str(name).removeprefix("test_"), fontsize=7)
        ax.tick_params(labelsize=6)
        ax.yaxis.set_major_formatter(lambda v, _: units.duration(v))
    for i, ax in enumerate(axes.flat):
        ax.set_visible(i < len(series))
        ax.set_xticks(range(len(labels)), [str(n + 1) for n in range(len(labels))], fontsize=6)
        ax.set_xlim(-0.3, len(labels) - 0.7)
    legend = [f"{n + 1} = {label}" for n, label in enumerate(labels)]
    fig.supxlabel("runs: " + "\n".join("; ".join(legend[i : i + 3]) for i in range(0, len(legend), 3)), fontsize=7)
    return _png(fig)


def roofline_figure(doc: RooflineDocument) -> Any:
    """The roofline: attainable FLOP/s against arithmetic intensity (both ceilings: the memory slope up to the ridge,
    then the FLOP rate), each workload a point at its intensity and the FLOP/s it reached (log-log)."""
    import numpy as np

    fig, ax = _figure()
    flops, bandwidth = float(doc.ceilings["flops_per_second"]), float(doc.ceilings["bytes_per_second"])
    placed = {k: p for k, p in doc.points.items() if p.get("intensity")}
    lo = min([flops / bandwidth / 100, *(p["intensity"] / 3 for p in placed.values())])
    hi = max([flops / bandwidth * 100, *(p["intensity"] * 3 for p in placed.values())])
    x = np.geomspace(lo, hi, 200)
    ax.plot(x, np.minimum(flops, x * bandwidth), color="black", linewidth=1.5)
    ax.axhline(flops, color="grey", linestyle=":", linewidth=0.8)
    ax.text(hi, flops * 1.08, f"FLOP rate {units.flop_rate(flops)}", ha="right", va="bottom", fontsize=8)
    ax.text(lo * 1.3, lo * 1.3 * bandwidth * 1.2, f"bandwidth {units.size(bandwidth)}/s", rotation=0, fontsize=8,
            va="bottom")  # fmt: skip
    markers = "osD^vP*X"
    for i, (name, p) in enumerate(placed.items()):
        ax.scatter([p["intensity"]], [p["achieved_flops_per_second"]], zorder=3, marker=markers[i % len(markers)],
                   label=f"{name}: {units.ratio(p['x_attainable'])} attainable, {p['binds']} binds")  # fmt: skip
    if placed:
        ax.legend(fontsize=7, loc="lower right")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP per byte accessed, XLA's cost analysis)")
    ax.set_ylabel("FLOP/s")
    ax.set_title("Roofline: each workload against this machine's two ceilings", fontsize=10)
    return fig


def plot_roofline(doc: RooflineDocument) -> str:
    return _png(roofline_figure(doc))


def roofline_png(doc: RooflineDocument) -> bytes:
    """The roofline as PNG bytes, for a file beside its results."""
    return base64.b64decode(plot_roofline(doc))


def plot_timeline(column: sweep_tables.TimelineColumn) -> str:
    """A release timeline's workload: the median per release with its interquartile band, releases in order (their
    labels slanted, all shown); a step drawn as a dashed line between the releases either side, a transient as a
    cross on its release, a drift as a shaded span; slower red, faster green, each with its ratio."""
    import matplotlib.pyplot as plt
    import numpy as np

    x = np.arange(len(column.releases))
    q1, median, q3 = (np.array([np.quantile(s, q) for s in column.samples]) for q in (0.25, 0.5, 0.75))
    fig, ax = plt.subplots(figsize=(max(4.5, 0.5 * len(x) + 1.5), 2.8), dpi=72)
    ax.fill_between(x, q1, q3, alpha=0.25, color="C0", linewidth=0, label="interquartile range")
    ax.plot(x, median, marker="o", markersize=4, color="C0", label="median")
    low, top = float(np.min(q1)), float(np.max(q3))
    ax.set_ylim(low - 0.08 * (top - low), top + 0.22 * (top - low))  # headroom for the changes' labels
    for change in column.changes:
        color = "red" if change.comparison.verdict == "regression" else "green"
        text = units.ratio(change.comparison.ratio)
        if change.kind == "transient":
            ax.plot(change.index, median[change.index], marker="X", markersize=11, color=color, linestyle="none")
            ax.annotate(f"transient {text}", (change.index, median[change.index]), textcoords="offset points",
                        xytext=(0, 8), ha="center", fontsize=7, color=color)  # fmt: skip
        elif change.kind == "drift":
            start = column.releases.index(change.before)
            ax.axvspan(start, change.index, color=color, alpha=0.12)
            ax.annotate(f"drift {text}", ((start + change.index) / 2, top), ha="center", fontsize=7, color=color)
        else:
            ax.axvline(change.index - 0.5, color=color, linestyle="--", linewidth=1.2)
            ax.annotate(f"{change.at} {text}", (change.index - 0.5, top), textcoords="offset points", xytext=(0, 6),
                        ha="center", fontsize=7, color=color)  # fmt: skip
    ax.set_xticks(x, column.releases, rotation=45, ha="right", fontsize=7)
    ax.tick_params(axis="y", labelsize=7)
    ax.yaxis.set_major_formatter(lambda v, _: units.duration(v))
    flags = f", XLA_FLAGS={column.xla_flags}" if column.xla_flags else ""
    ax.set_title(f"{column.workload}{flags}: steady state by release", fontsize=9)
    ax.legend(fontsize=7, loc="best")  # never over the first releases' points
    fig.tight_layout()
    return _png(fig)


PLOTTERS: dict[str, Callable[..., str]] = {
    "roofline": plot_roofline,
    "update": plot_update,
    "predict": plot_predict,
    "loader_ladder": plot_loader_ladder,
    "ladder": plot_ladder,
    "scaling": plot_scaling,
    "cpu_accelerator": plot_cpu_accelerator,
    "sweep": plot_sweep,
    "bisection": plot_bisection,
    "history": plot_history,
    "timeline": plot_timeline,
}
"""Each kind of `Figure`, and the function that draws it."""


def draw(figure: Figure) -> str:
    """A figure as a base64-encoded PNG."""
    return PLOTTERS[figure.kind](*figure.data)
