"""The report's plots are readable: every text at least the style's smallest size, no text over another or past the
figure's edge, legends off the data, time axes in human units and on a log scale where the values span decades,
one line per precision and per machine, the machine named on every history plot.

The figures are built from small hand-made tables of the shape each plot takes and inspected as matplotlib draws
them (the browser test looks at the same plots in the page).
"""

import itertools
import random

import pandas as pd
import pytest

from jaxmlp import changepoints, registry
from jaxmlp.report import plot_style, plots
from jaxmlp.results.schema.roofline import RooflineDocument
from jaxmlp.results.sweep.compared import TimelineColumn

LADDER = pd.DataFrame(
    {
        "backend": "tpu",
        "rung": [
            "floor (epoch FLOPs / XLA's 2048^3 matmul rate)",
            "best bf16 floor (epoch FLOPs / the best library's 2048^3 bf16 rate)",
            "the step's matmuls alone",
            "pipeline scan, bf16",
            "pipeline scan",
            "pipeline batched",
            "pipeline prefetch, bf16",
        ],
        "epoch_s": [0.00648, 0.00145, 0.00737, 0.00498, 0.011, 0.286, 0.346],
        "library": ["xla", "xla", None, None, None, None, None],
        "precision": ["", "bf16", "", "bf16", "f32", "f32", "bf16"],
    }
)
LOADER = pd.DataFrame(
    {
        "backend": "cpu",
        "pipeline": ["seed", "seed", "seed", "batched", "batched"],
        "workers": [0, 2, 0, 0, 0],
        "precision": ["f32", "f32", "bf16", "f32", "bf16"],
        "loader_s": [1.3, 1.1, 1.3, 1e-4, 1e-4],
        "loader_iqr_s": [0.02, 0.05, 0.02, 1e-6, 1e-6],
        "epoch_s": [2.3, 2.5, 2.1, 1.5, 1.1],
        "epoch_iqr_s": [0.07, 0.09, 0.06, 0.02, 0.09],
        "epoch_x_floor": [2.3, 2.5, 4.2, 1.5, 2.2],  # the f32 floor 1 s, the bf16 floor 0.5 s
        "epoch_x_scan": [2.3 / 1.17, 2.5 / 1.17, 2.1 / 1.13, 1.5 / 1.17, 1.1 / 1.13],
    }
)
CPU_ACCELERATOR = pd.DataFrame(
    {
        "benchmark": [
            "best bf16 floor (epoch FLOPs / the best library's 2048^3 bf16 rate)",
            "matmul",
            "gemm: library xla, precision f32, shape 128x512x10",
            "pipeline scan",
            "pipeline grain",
        ],
        "cpu_s": [0.466, 0.0856, 3.8e-5, 1.17, 2.18],
        "accelerator_s": [0.00145, 0.000574, 0.000133, 0.011, None],
    }
)
BATCHES = pd.DataFrame(
    {
        "backend": "cpu",
        "batch_size": [1, 32, 128, 1024],
        "jit_ms": [0.1, 0.2, 0.5, 3.0],
        "eager_ms": [5.0, 6.0, 8.0, 20.0],
        "dispatch_ms": [0.01, 0.01, 0.02, 0.02],
        "loop_ms": [0.5, 16.0, 64.0, 512.0],
        "vmap_ms": [0.4, 1.0, 2.0, 9.0],
        "jit_vmap_ms": [0.05, 0.1, 0.3, 2.0],
    }
)
SCALING = pd.DataFrame(
    {"backend": "cpu", "processes": 1, "devices": [1, 2, 4], "speedup": [1.0, 1.8, 3.1], "efficiency": [1.0, 0.9, 0.78]}
)
XEON = "Intel(R) Xeon(R) Processor · 2 CPUs · size quick"
EPYC = "AMD EPYC 7B13 · 2 CPUs · size quick"


def history_points(settings=(XEON,), runs=4):
    rows = []
    for s, setting in enumerate(settings):
        for r, name in itertools.product(range(runs), ("epoch[cpu-scan-0-f32]", "epoch[cpu-seed_batched-4-f32]")):
            median = 1.2 + 0.3 * s + (0.2 if r >= 2 else 0)
            rows.append(
                {
                    "benchmark": name,
                    "group": "",
                    "test": "test_epoch",
                    "setting": setting,
                    "file": f"bench-{s}-{r}.json",
                    "timestamp": pd.Timestamp("2026-12-01", tz="UTC") + pd.Timedelta(hours=10 * r + s),
                    "commit": f"{r:08x}",
                    "jax": "0.10.2",
                    "median": median,
                    "q1": median * 0.98,
                    "q3": median * 1.02,
                    "rounds": 5,
                }
            )
    return pd.DataFrame(rows)


def history_changes(points):
    first = points[points["setting"] == points["setting"].iloc[0]]
    to = sorted(first["file"].unique())[2]
    return pd.DataFrame(
        [
            {
                "benchmark": "epoch[cpu-scan-0-f32]",
                "setting": first["setting"].iloc[0],
                "kind": "step",
                "to_file": to,
                "verdict": "slower",
            }
        ]
    )


def timeline_column():
    rng = random.Random(0)
    releases = tuple(f"0.4.{n}" for n in range(30, 40))
    samples = tuple(
        tuple(rng.gauss(0.065 * (1.2 if i >= 4 else 1.0), 0.0005) for _ in range(8)) for i in range(len(releases))
    )
    found = changepoints.detect(
        list(releases), [list(s) for s in samples], threshold=registry.CHANGE_THRESHOLD, alpha=registry.CHANGE_ALPHA
    )
    return TimelineColumn("batched", "", releases, samples, tuple(found))


RELEASES = ["0.4.31", "0.4.33", "0.4.36", "0.6.2", "0.8.3"]
SWEEP = pd.DataFrame(
    [
        {
            "test": registry.SWEEP_STEADY.id,
            "release": release,
            "name": "sweep_steady[scan_heavy]",
            "xla_flags": flags,
            "median": median,
            "q1": median * 0.99,
            "q3": median * 1.01,
        }
        for flags, medians in (
            ("", (5.59e-3, 12.8e-3, 9.44e-3, 9.55e-3, 6.93e-3)),
            ("--f=1", (6.9e-3, 5.6e-3, 5.9e-3, 6.1e-3, 7.1e-3)),
        )
        for release, median in zip(RELEASES, medians)
    ]
)
SWEEP_STEPS = pd.DataFrame(
    {
        "benchmark": "sweep_steady[scan_heavy]",
        "xla_flags": ["", "", "", "--f=1", "--f=1"],
        "to": ["0.4.33", "0.4.36", "0.8.3", "0.4.36", "0.8.3"],
        "verdict": ["slower", "faster", "faster", "slower", "slower"],
    }
)
ROOFLINE = RooflineDocument(
    {},
    {"flops_per_second": 2.66e11, "bytes_per_second": 9.93e9},
    "ceilings.json",
    {
        "batched": {"intensity": 19.4, "achieved_flops_per_second": 1.5e11, "x_attainable": 1.30, "binds": "memory"},
        "scan": {"intensity": 13.9, "achieved_flops_per_second": 1.8e11, "x_attainable": 0.785, "binds": "memory"},
        "step": {"intensity": 19.4, "achieved_flops_per_second": 1.6e11, "x_attainable": 1.20, "binds": "memory"},
    },
    {},
)

CASES = {
    "ladder": (LADDER,),
    "loader_ladder": (LOADER,),
    "cpu_accelerator": (CPU_ACCELERATOR,),
    "update": (BATCHES,),
    "predict": (BATCHES,),
    "scaling": (SCALING,),
    "history": (history_points((XEON, EPYC)), history_changes(history_points((XEON, EPYC)))),
    "timeline": (timeline_column(),),
    "sweep": (SWEEP, SWEEP_STEPS),
    "roofline": (ROOFLINE,),
}


@pytest.fixture
def built(request):
    """A figure of the kind and data named, drawn (text positions known), closed afterwards."""
    with plot_style.style() as plt:
        fig = plots.FIGURES[request.param[0]](*request.param[1])
        fig.canvas.draw()
        yield fig
        plt.close(fig)


def build(kind):
    return pytest.mark.parametrize("built", [(kind, CASES[kind])], indirect=True, ids=[kind])


def texts(fig):
    """Every visible, non-empty text of the figure, with its box on the canvas."""
    from matplotlib.text import Text

    renderer = fig.canvas.get_renderer()
    undrawn = {id(t) for ax in fig.axes for t in _undrawn_ticks(ax)}
    found = []
    for t in fig.findobj(Text):
        axes = getattr(t, "axes", None)
        if t.get_visible() and t.get_text().strip() and id(t) not in undrawn and (axes is None or axes.get_visible()):
            found.append((t, t.get_window_extent(renderer)))
    return found


def _undrawn_ticks(ax):
    """The tick labels matplotlib keeps but does not draw: those of ticks outside the axis' limits."""
    for axis, index in ((ax.xaxis, 0), (ax.yaxis, 1)):
        low, high = sorted(axis.get_view_interval())
        for label in axis.get_ticklabels(which="both"):
            if not low - 1e-12 <= label.get_position()[index] <= high + 1e-12:
                yield label


every_kind = pytest.mark.parametrize("built", [(k, v) for k, v in CASES.items()], indirect=True, ids=list(CASES))


@every_kind
def test_no_text_is_smaller_than_the_style_says(built):
    small = [(t.get_text(), t.get_fontsize()) for t, _ in texts(built) if t.get_fontsize() < plot_style.MIN_FONT_PT]
    assert not small, f"texts under {plot_style.MIN_FONT_PT} pt: {small[:5]}"
    assert plot_style.MIN_FONT_PX >= 10, "the smallest text is under 10 px at the plot's natural size"


@every_kind
def test_no_text_overlaps_another_or_leaves_the_figure(built):
    boxes = texts(built)
    page = built.bbox
    outside = [
        t.get_text()
        for t, b in boxes
        if b.x0 < page.x0 - 1 or b.x1 > page.x1 + 1 or b.y0 < page.y0 - 1 or b.y1 > page.y1 + 1
    ]
    assert not outside, f"texts past the figure's edge: {outside[:5]}"
    overlapping = [
        (a.get_text(), b.get_text())
        for (a, x), (b, y) in itertools.combinations(boxes, 2)
        if x.overlaps(y) and min(x.x1, y.x1) - max(x.x0, y.x0) > 1 and min(x.y1, y.y1) - max(x.y0, y.y0) > 1
    ]
    assert not overlapping, f"{len(overlapping)} pairs of texts overlap: {overlapping[:5]}"


@every_kind
def test_legends_sit_off_the_data_and_the_figure_fits_the_page(built):
    renderer = built.canvas.get_renderer()
    legends = [*built.legends, *(ax.get_legend() for ax in built.axes if ax.get_legend())]
    for legend in legends:
        box = legend.get_window_extent(renderer)
        over = [ax for ax in built.axes if ax.get_visible() and box.overlaps(ax.get_window_extent(renderer))]
        assert not over, "a legend sits on the plotted data"
    assert built.get_figwidth() * built.dpi <= plot_style.WIDTH_IN * plot_style.DPI


@every_kind
def test_axes_read_in_human_units(built):
    ticks = [t.get_text() for ax in built.axes for t in (*ax.get_xticklabels(), *ax.get_yticklabels())]
    machine = [t for t in ticks if "10^" in t or "$" in t or "e-" in t or "×10" in t]
    assert not machine, f"tick labels in scientific notation: {machine[:5]}"


@build("ladder")
def test_a_ladder_over_decades_is_on_a_log_axis_in_time_units(built):
    ax = built.axes[0]
    assert ax.get_xscale() == "log"
    labels = {t.get_text() for t in ax.get_xticklabels()}
    assert {"10 ms", "100 ms"} <= labels, labels


def test_a_ladder_within_one_decade_stays_linear():
    with plot_style.style() as plt:
        narrow = LADDER.assign(epoch_s=[1.0, 0.47, 1.6, 1.1, 1.2, 1.5, 2.3])
        fig = plots.ladder_figure(narrow)
        assert fig.axes[0].get_xscale() == "linear"
        plt.close(fig)


def test_bars_grow_the_figure_with_their_labels():
    with plot_style.style() as plt:
        short, long = plots.ladder_figure(LADDER.iloc[:3]), plots.ladder_figure(pd.concat([LADDER] * 4))
        assert long.get_figheight() > short.get_figheight() + 2
        plt.close(short)
        plt.close(long)


@build("ladder")
def test_the_ladder_draws_the_best_floor_of_each_precision(built):
    labels = [t.get_text() for legend in built.legends for t in legend.get_texts()]
    assert any(x.startswith("f32 floor (xla): 6.48 ms") for x in labels), labels
    assert any(x.startswith("bf16 floor (xla): 1.45 ms") for x in labels), labels


@build("loader_ladder")
def test_the_loader_ladder_has_a_scan_line_and_a_floor_per_precision(built):
    labels = [t.get_text() for legend in built.legends for t in legend.get_texts()]
    assert "scan epoch, f32: 1.17 s" in labels and "scan epoch, bf16: 1.13 s" in labels, labels
    assert "compute floor, f32: 1.00 s" in labels and "compute floor, bf16: 500 ms" in labels, labels
    ticks = [t.get_text() for t in built.axes[0].get_yticklabels()]
    assert "seed, 0 workers, bf16" in ticks and "seed, 0 workers, f32" in ticks, ticks


@build("cpu_accelerator")
def test_cpu_against_accelerator_shows_the_rungs_both_timed_with_their_ratio(built):
    ax = built.axes[0]
    assert ax.get_xscale() == "log"
    assert len(ax.get_yticklabels()) == 3  # the gemm row and the CPU-only row are in the table, not the plot
    notes = [t.get_text() for t in ax.texts]
    assert "1.45 ms (the CPU takes ×321)" in notes, notes


@build("history")
def test_a_history_names_each_machine_and_draws_each_as_its_own_line(built):
    labels = [t.get_text() for legend in built.legends for t in legend.get_texts()]
    assert f"machine: {XEON}" in labels and f"machine: {EPYC}" in labels, labels
    first = built.axes[0]
    assert len(first.get_lines()) >= 2  # a line per machine (and the change's mark)


def test_a_history_of_one_machine_names_it():
    with plot_style.style() as plt:
        points = history_points((EPYC,))
        fig = plots.history_figure(points, history_changes(points))
        labels = [t.get_text() for legend in fig.legends for t in legend.get_texts()]
        assert f"machine: {EPYC}" in labels, labels
        plt.close(fig)


def test_every_kind_of_figure_draws_as_a_png():
    for kind, data in CASES.items():
        png = plots.PLOTTERS[kind](*data)
        assert png.startswith("iVBOR"), kind  # a base64 PNG


def test_a_plot_s_background_is_the_page_s_white():
    import base64
    import io

    from PIL import Image

    with Image.open(io.BytesIO(base64.b64decode(plots.PLOTTERS["ladder"](LADDER)))) as png:
        assert png.convert("RGB").getpixel((1, 1)) == (255, 255, 255)  # no grey box around the plot
        assert png.width <= plot_style.WIDTH_IN * plot_style.DPI


def _tick_labels(axis):
    """The labels of the ticks an axis draws (within its limits)."""
    low, high = sorted(axis.get_view_interval())
    return [t.get_text() for t in axis.get_ticklabels() if low <= t.get_position()[axis is axis.axes.yaxis] <= high]


@build("sweep")
def test_a_sweep_within_a_decade_reads_on_a_linear_axis_with_ticks_enough(built):
    ax = built.axes[0]
    assert ax.get_yscale() == "linear"
    labels = [t for t in _tick_labels(ax.yaxis) if t]
    assert len(labels) >= 4 and all(t.endswith(" ms") for t in labels), labels


@build("sweep")
def test_a_sweep_s_marks_at_one_release_sit_apart(built):
    """Two series flagged at the same release (0.8.3) with close medians: their marks do not cover each other."""
    ax = built.axes[0]
    marks = [line for line in ax.get_lines() if line.get_marker() in ("^", "v")]
    last = [ax.transData.transform((line.get_xdata()[0], line.get_ydata()[0])) for line in marks]
    last = [xy for line, xy in zip(marks, last) if round(line.get_xdata()[0]) == len(RELEASES) - 1]
    assert len(last) == 2
    (x0, _), (x1, _) = last
    assert abs(x0 - x1) >= 20, last  # pixels: wider than a mark


def test_a_log_axis_under_a_decade_turns_linear_and_one_over_a_decade_keeps_readable_ticks():
    with plot_style.style() as plt:
        fig, ax = plot_style.figure()
        ax.plot([1, 2], [5.6e-3, 12.8e-3])
        ax.set_yscale("log")
        plot_style.human_axis(ax, "y")
        assert ax.get_yscale() == "linear"
        ax.set_yscale("log")
        ax.set_ylim(3e-3, 40e-3)
        plot_style.human_axis(ax, "y")
        fig.canvas.draw()
        assert ax.get_yscale() == "log" and len([t for t in _tick_labels(ax.yaxis) if t]) >= 3
        plt.close(fig)


def test_a_loader_ladder_draws_and_names_only_what_was_measured_on_a_log_axis_over_decades():
    """An accelerator's ladder: epochs only (no input-alone bars, so none in the legend), its floors and scan
    epochs milliseconds against epochs of seconds: a log axis, each line apart from the axis' start."""
    epochs = LOADER.assign(loader_s=float("nan"), loader_iqr_s=float("nan"), epoch_x_floor=[3640, 3000, 4000, 300, 262])
    with plot_style.style() as plt:
        fig = plots.loader_ladder_figure(epochs)
        labels = [t.get_text() for legend in fig.legends for t in legend.get_texts()]
        assert "input alone" not in labels and "training epoch" in labels, labels
        ax = fig.axes[0]
        assert ax.get_xscale() == "log"
        low = ax.get_xlim()[0]
        lines = [line.get_xdata()[0] for line in ax.get_lines()]
        assert lines and all(x > 1.5 * low for x in lines)
        plt.close(fig)


@build("roofline")
def test_points_at_one_place_on_the_roofline_are_each_seen_and_named(built):
    """batched and step share an intensity and nearly a rate: each is named beside it, the second a ring around
    the first."""
    ax = built.axes[0]
    named = {t.get_text() for t in ax.texts}
    assert {"batched", "step"} <= named and "scan" not in named, named
    points = {c.get_label().split(":")[0]: c for c in ax.collections}
    assert points["step"].get_sizes()[0] > points["batched"].get_sizes()[0]
    assert len(points["step"].get_facecolor()) == 0 or points["step"].get_facecolor()[0][3] == 0  # hollow
