"""How every report plot looks, set in one place: size, fonts, axes in human units, bars, and its PNG."""

from __future__ import annotations

import base64
import contextlib
import io
import itertools
import math
import textwrap
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from jaxmlp import units

DPI = 100
"""Pixels per inch of every PNG."""
WIDTH_IN = 10.0
"""The width of a full-width figure (1000 px)."""
FONT_PT = 11.0
"""Titles, axis labels."""
SMALL_PT = 10.0
"""Tick labels, legends, notes on the data."""
MIN_FONT_PT = SMALL_PT
"""No text in a plot is smaller."""
MIN_FONT_PX = MIN_FONT_PT * DPI / 72
"""The smallest text's height in pixels when a plot is shown at its natural size (13.9 px)."""
LOG_SPAN = 20.0
"""Values spread wider than this ratio (largest over smallest) are drawn on a log axis."""
BAR_LINE_IN = 0.21
"""The height a line of a bar's label takes: a figure of bars grows with them."""
LABEL_CHARS = 44
"""A bar's label is wrapped to lines of at most this many characters."""
PNG_COLOURS = 64

RC = {
    "figure.dpi": DPI,
    "savefig.dpi": DPI,
    "font.size": FONT_PT,
    "axes.titlesize": FONT_PT,
    "axes.labelsize": FONT_PT,
    "figure.titlesize": FONT_PT + 1,
    "figure.labelsize": FONT_PT,
    "xtick.labelsize": SMALL_PT,
    "ytick.labelsize": SMALL_PT,
    "legend.fontsize": SMALL_PT,
    "legend.title_fontsize": SMALL_PT,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.axisbelow": True,
    "text.usetex": False,
    "text.parse_math": False,
}
"""matplotlib's settings for every report plot; mathtext and TeX off, so a label is drawn as the text it is."""


@contextlib.contextmanager
def style() -> Iterator[Any]:
    """matplotlib (headless) with the report's settings, for as long as a plot is drawn and saved."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with plt.rc_context(RC):
        yield plt


def figure(height_in: float = 4.0, width_in: float = WIDTH_IN, **subplots: Any) -> tuple[Any, Any]:
    """A new figure and its axes (`plt.subplots`), laid out by matplotlib's constrained layout."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(figsize=(width_in, height_in), layout="constrained", **subplots)
    return fig, axes


def png(fig: Any) -> str:
    """The figure as a base64 PNG of at most `PNG_COLOURS` colours."""
    import matplotlib.pyplot as plt
    from PIL import Image

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI)
    plt.close(fig)
    buffer.seek(0)
    small = io.BytesIO()
    image = Image.open(buffer).convert("RGB").quantize(colors=PNG_COLOURS, method=Image.Quantize.FASTOCTREE)
    _, background = max(image.getcolors() or [(0, 0)])
    colours = image.getpalette() or []
    if all(c >= 240 for c in colours[3 * background : 3 * background + 3]):  # the page's white, not a near-white
        colours[3 * background : 3 * background + 3] = [255, 255, 255]
        image.putpalette(colours)
    image.save(small, format="PNG", optimize=True)
    return base64.b64encode(small.getvalue()).decode("ascii")


def wrap(label: str, width: int = LABEL_CHARS) -> str:
    """A label broken into lines of at most ``width`` characters."""
    return "\n".join(textwrap.wrap(str(label), width)) or str(label)


def slots(labels: Sequence[str], per_label: float = 1.0) -> tuple[list[float], float]:
    """Where each label's bars go on a bar chart's axis and its length, a label taking as many lines as it has."""
    sizes = [max(per_label, label.count("\n") + 1) for label in labels]
    ends = list(itertools.accumulate(sizes))
    return [end - size / 2 for end, size in zip(ends, sizes)], (ends[-1] if ends else 0.0)


def bars_height(labels: Sequence[str], per_label: float = 1.0, extra_in: float = 1.6) -> float:
    """The height (inches) of a figure of horizontal bars (`slots`), plus ``extra_in`` for title, axis and legend."""
    return max(2.5, BAR_LINE_IN * slots(labels, per_label)[1] + extra_in)


def spans_decades(values: Iterable[float]) -> bool:
    """Whether positive ``values`` spread wider than `LOG_SPAN`: they are drawn on a log axis."""
    finite = [float(v) for v in values if v is not None and math.isfinite(float(v)) and float(v) > 0]
    return bool(finite) and max(finite) / min(finite) > LOG_SPAN


def _tick(text: str) -> str:
    """A tick's label without trailing zeros: ``1.50 s`` -> ``1.5 s``, ``10.0 ms`` -> ``10 ms``."""
    number, _, unit = text.partition(" ")
    if "." in number:
        number = number.rstrip("0").rstrip(".")
    return f"{number} {unit}".strip()


FORMATS: dict[str, Callable[[float, Any], str]] = {
    "seconds": lambda value, _: _tick(units.duration(value)) if value > 0 else "0",
    "flops": lambda value, _: _tick(units.flop_rate(value)) if value > 0 else "0",
    "number": lambda value, _: _tick(units.number(value)),
}
"""A tick's label of each kind of axis (matplotlib's ``FuncFormatter`` hands each its value and position)."""


def human_axis(ax: Any, axis: str, kind: str = "seconds", values: Iterable[float] | None = None) -> None:
    """Set ``axis`` ("x" or "y") of ``ax`` in human units of ``kind``, log where ``values`` spread past `LOG_SPAN`."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    scale = getattr(ax, f"set_{axis}scale")
    if values is not None:
        scale("log" if spans_decades(values) else "linear")
    target = getattr(ax, f"{axis}axis")
    if target.get_scale() == "log":
        low, high = sorted(getattr(ax, f"get_{axis}lim")())
        decades = math.log10(high / low) if low > 0 else 9.0
        if decades < 1:
            scale("linear")
        else:
            subs = (1.0, 2.0, 5.0) if decades <= 2.5 else (1.0,)
            target.set_major_locator(LogLocator(base=10, subs=subs, numticks=12))
            target.set_minor_formatter(NullFormatter())
    target.set_major_formatter(FuncFormatter(FORMATS[kind]))


def legend_above(fig: Any, ncols: int | None = None, **kwargs: Any) -> Any:
    """The figure's legend above its axes, off the data (constrained layout makes room for it)."""
    handles, labels = [], []
    for ax in fig.axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            if label not in labels:
                handles.append(handle)
                labels.append(label)
    if not labels:
        return None
    columns = ncols or min(len(labels), max(1, int(WIDTH_IN * 72 / (SMALL_PT * 0.6 * max(map(len, labels)) + 40))))
    return fig.legend(handles, labels, loc="outside upper center", ncols=columns, frameon=False, **kwargs)
