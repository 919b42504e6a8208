"""One format for each quantity: three significant digits in human units, never scientific notation."""

import math

import pytest

from jaxmlp import units


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (2.36e-4, "236 µs"),
        (0.0041234, "4.12 ms"),
        (1.0712, "1.07 s"),
        (999.4, "999 s"),
        (9.99951e-4, "1.00 ms"),
        (0.99996, "1.00 s"),
        (999.6, "16.7 min"),
        (9.245e-05, "92.5 µs"),
        (1e-9, "1.00 ns"),
        (0, "0 s"),
        (math.nan, "-"),
        (None, "-"),
    ],
)
def test_durations(seconds, text):
    assert units.duration(seconds) == text


def test_other_quantities():
    assert units.number(5.668e4) == "56,700" and units.number(0.000123) == "0.000123" and units.number(12.34) == "12.3"
    assert units.ratio(1.2345) == "×1.23" and units.interval(0.98, 1.031) == "×0.980–×1.03"
    assert units.percent(0.125) == "12.5%" and units.change(1.125) == "+12.5%" and units.change(0.969) == "-3.10%"
    assert units.p_value(0.00012) == "<0.001" and units.p_value(0.0432) == "0.043"
    assert units.flop_rate(2.66e11) == "266 GFLOP/s" and units.flop_rate(3.18e13) == "31.8 TFLOP/s"
    assert units.size(12.3 * 2**20) == "12.3 MiB" and units.size(512) == "512 B"
    assert units.per_second(56712.3) == "56.7 k/s" and units.per_second(1.48e7) == "14.8 M/s"
    assert units.per_second(512) == "512/s" and units.per_second(None) == "-"
    assert "e" not in units.number(1e-9) + units.number(1e15)
    assert units.span([27, 27.0]) == "27" and units.span([27, 8, 12]) == "8 to 27" and units.span([]) == "no"
    assert units.count(1.0, "core") == "1 core" and units.count(13, "core") == "13 cores"


def test_tables_read_in_words_and_units():
    import pandas as pd

    from jaxmlp.report.display import readable

    frame = pd.DataFrame(
        {
            "backend": ["cpu"],
            "epoch_s": [1.0712],
            "epoch_iqr_s": [0.0122],
            "x_floor": [1.234],
            "gflop_per_s": [286.4],
            "ci_low": [0.98],
            "ci_high": [1.03],
            "p_slower": [0.2],
            "p_faster": [0.0004],
            "efficiency": [0.411],
            "samples_per_s": [60213.0],
        }
    )
    shown = readable(frame)
    assert list(shown.columns) == [
        "backend",
        "epoch",
        "times its precision's floor",
        "rate",
        "95% interval",
        "p",
        "efficiency",
        "images",
    ]
    assert shown.iloc[0].tolist() == [
        "cpu",
        "1.07 s (IQR 12.2 ms)",
        "×1.23",
        "286 GFLOP/s",
        "×0.980–×1.03",
        "<0.001",
        "41.1%",
        "60.2 k/s",
    ]


def test_headers_are_words_and_the_unit_is_in_the_cells():
    """No header is a column's code name with its unit (``call ms``, ``gb per s``): the unit is in every cell."""
    import pandas as pd

    from jaxmlp.report.display import readable

    bandwidth = pd.DataFrame(
        {"backend": ["tpu"], "kernel": ["scale"], "array_mib": [128.0], "call_ms": [0.48], "gb_per_s": [559.2]}
    )
    shown = readable(bandwidth)
    assert list(shown.columns) == ["backend", "kernel", "array", "a call", "bandwidth"]
    assert shown.iloc[0].tolist() == ["tpu", "scale", "128 MiB", "480 µs", "521 GiB/s"]
    other = pd.DataFrame({"warm_up_s": [0.5], "host_rss_bytes": [2**30], "sweep_steady[scan_heavy]": [0.01]})
    assert list(readable(other, {"sweep_steady[scan_heavy]": "s"}).columns) == [
        "warm up",
        "host rss",
        "sweep_steady[scan_heavy]",  # a benchmark's id keeps its own name
    ]
    assert readable(other).iloc[0].tolist()[:2] == ["500 ms", "1.00 GiB"]


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (2.6112, "2.61 sec"),  # the tutorial's own line, from 0.1 s on
        (0.1, "0.10 sec"),
        (0.0999, "99.9 ms"),  # below, in the unit it needs: a TPU's 2-ms epoch is never "0.00 sec"
        (0.00229, "2.29 ms"),
        (0, "0 s"),
        (None, "-"),
    ],
)
def test_the_tutorials_seconds_where_they_mean_something(seconds, text):
    assert units.tutorial_seconds(seconds) == text
