"""The floor's products: each library's product is the float64 product of its inputs within its precision, and a
timed round holds as many calls, dispatched back to back, as its length and its held results allow."""

import time

import jax
import numpy as np
import pytest

from jaxmlp.measure import floor


@pytest.mark.parametrize("precision", ["f32", "bf16"])
def test_a_round_of_products_is_the_product_each_time(precision):
    product = floor.gemm("xla", precision, (64, 32, 16), jax.devices("cpu")[0])
    expected = product.lhs @ product.rhs
    tolerance = 1e-5 if precision == "f32" else 1e-2
    for n in (1, 3):
        got = product.to_numpy(product.run(n))
        assert got.shape == (64, 16)
        np.testing.assert_allclose(got / np.sqrt(32), expected / np.sqrt(32), rtol=tolerance, atol=tolerance)
    assert product.result_bytes == 4 * 64 * 16 and product.flops == 2 * 64 * 32 * 16


def test_calls_per_round_doubles_up_to_the_held_bytes_and_stops_at_a_long_round():
    asked = []

    def instant(n):
        asked.append(n)

    assert floor.calls_per_round(instant, floor.HELD_BYTES // 4) == 4  # never long: as many as 4 results allow
    assert asked == [1, 1, 2]  # warm-up, then rounds of 1 and 2; 4 is the most, so no longer round is tried

    def slow(n):
        time.sleep(floor.ROUND_SECONDS * 1.25 * n)

    assert floor.calls_per_round(slow, 4) == 1  # one call already lasts a round (a CPU's 2048^3)
    assert floor.calls_per_round(instant, 10 * floor.HELD_BYTES) == 1  # one result over the budget: still one


def test_the_rounds_asked_for_are_the_most_timed_once_they_have_lasted_the_budget():
    """A product far slower than expected is timed `MIN_REPEATS` times, not the ten rounds asked for; a fast one
    every round asked for."""
    calls = []

    def slow():
        calls.append(1)
        time.sleep(0.02)

    assert floor.median_seconds(slow, repeats=10, budget=0.01) >= 0.02
    assert len(calls) == 1 + floor.MIN_REPEATS  # the untimed call, then the fewest timed rounds
    calls.clear()
    floor.median_seconds(lambda: calls.append(1), repeats=10, budget=5.0)  # ten calls of nothing: far within
    assert len(calls) == 1 + 10
    calls.clear()
    floor.median_seconds(slow, repeats=2, budget=0.01)
    assert len(calls) == 1 + 2  # fewer asked for than the fewest: those asked for


def test_torchs_bf16_product_on_a_cpu_without_its_kernels_is_refused_in_one_line(monkeypatch):
    """Where torch's oneDNN says it has no bf16 kernels for this CPU, its bf16 product is not timed (a slow
    fallback, no ceiling); float32 still is."""
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", lambda: False, raising=False)
    why = floor.unavailable("torch", "bf16", "cpu")
    assert why is not None and "no bf16 kernels" in why and "\n" not in why
    assert floor.unavailable("torch", "f32", "cpu") is None


def test_the_empty_scan_is_a_real_loop_of_the_epochs_length():
    """The roofline's loop term: an empty `lax.scan` that XLA keeps as a loop (a ``while``) and computes."""
    import jax

    from jaxmlp import hlo
    from jaxmlp.measure import ceilings

    run, compiled = ceilings.empty_scan(469, jax.devices("cpu")[0])
    assert "while" in hlo.operations(compiled.as_text())
    assert float(run(3)) == 469 * 468 / 2
