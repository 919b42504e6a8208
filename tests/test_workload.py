"""The workload contract: a user's file defines make() -> (fn, args); jaxmlp compiles once, times the calls, and
turns every way a workload can go wrong into one line."""

import textwrap

import numpy as np
import pytest

from jaxmlp.errors import JaxmlpError
from jaxmlp.measure import workload as w


def write(tmp_path, body: str, name: str = "mine.py") -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return str(path)


GOOD = """
    import jax.numpy as jnp

    def make():
        x = jnp.linspace(0.0, 1.0, 1000)
        return (lambda x: jnp.sin(x) ** 2 + jnp.cos(x) ** 2), (x,)

    def other():
        return (lambda a, b: {"sum": a + b, "product": a * b}), (jnp.ones(3), jnp.arange(3.0))
"""


def test_a_workload_is_compiled_once_then_timed_call_by_call(tmp_path):
    spec = write(tmp_path, GOOD) + ":make"
    workload = w.from_spec(spec)
    assert workload.name == "mine" and workload.compile is None
    ticks = iter(range(100))
    times = w.measure(workload, 5, clock=lambda: float(next(ticks)))  # a clock that ticks once a reading
    assert times.compile_seconds == 1.0 and times.first_seconds == 1.0 and times.call_seconds == (1.0,) * 4
    assert times.steady_seconds == 1.0
    (leaf,) = times.output.leaves
    assert leaf.shape == (1000,) and leaf.dtype == "float32" and leaf.total == pytest.approx(1000, rel=1e-5)


def test_a_pytree_result_and_a_named_function(tmp_path):
    spec = write(tmp_path, GOOD) + ":other"
    assert w.spec_name(spec) == "mine.other"
    times = w.measure(w.from_spec(spec), 2)
    assert [leaf.sample for leaf in times.output.leaves] == [(0.0, 1.0, 2.0), (1.0, 2.0, 3.0)]  # product, sum


def test_a_module_workload_and_the_default_function_name(tmp_path, monkeypatch):
    assert w.parse_spec("bench.workloads.scan_heavy") == ("bench.workloads.scan_heavy", "make")
    assert w.spec_name("bench/workloads/scan_heavy.py:make") == "scan_heavy"
    write(tmp_path, GOOD, "my_workloads.py")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert w.from_spec("my_workloads:make").name == "my_workloads"


BROKEN = [
    ("import no_such_package_here\n", "make", "failed to import: ModuleNotFoundError: No module named"),
    ("def make():\n    raise ValueError('no data')\n", "make", "make() raised ValueError: no data"),
    ("def make():\n    return 42\n", "make", "make() must return (fn, args), a callable and a tuple of its arguments"),
    ("def make():\n    return (lambda: 'text'), ()\n", "make", "raised TypeError: function <lambda> at"),
    (
        "from jaxmlp.measure.workload import Workload\ndef make():\n    return Workload('mine', lambda: 'text', (), "
        "compile=lambda: None)\n",
        "make",
        "must return arrays (or a pytree of them), not str",
    ),
    ("def make():\n    return (lambda x: x.undefined()), (1.0,)\n", "make", "raised AttributeError"),
    ("x = 1\n", "make", "defines no function make"),
]


@pytest.mark.parametrize(("body", "function", "message"), BROKEN)
def test_a_broken_workload_is_one_line_naming_it(tmp_path, body, function, message):
    spec = f"{write(tmp_path, body)}:{function}"
    with pytest.raises(JaxmlpError) as caught:
        w.measure(w.from_spec(spec), 2)
    text = str(caught.value)
    assert message in text and len(text.splitlines()) == 1 and ("mine" in text)


def test_specs_that_name_nothing(tmp_path):
    with pytest.raises(JaxmlpError, match="no file"):
        w.from_spec(str(tmp_path / "absent.py") + ":make")
    with pytest.raises(JaxmlpError, match="failed to import"):
        w.from_spec("no_such_module_anywhere:make")
    with pytest.raises(JaxmlpError, match="name it as path/to/file.py:make"):
        w.parse_spec("file.py:not an identifier")


def test_the_example_workload_is_not_the_mlp_and_follows_the_contract():
    from pathlib import Path

    spec = str(Path(__file__).parent.parent / "bench" / "workloads" / "scan_heavy.py") + ":make"
    workload = w.from_spec(spec)
    weights, inputs, state = workload.args
    assert weights.shape == (128, 128) and inputs.shape == (10_000, 128) and not state.any()
    times = w.measure(workload, 2)
    final, sums = times.output.leaves
    assert final.shape == (128,) and sums.shape == (10_000,) and all(abs(x) <= 1 for x in final.sample)


def test_the_builtins_are_workloads_of_the_same_contract():
    from jaxmlp.pipelines.mnist import load_arrays

    made = w.builtin(("scan", "step"), load_arrays("synthetic", limit=300)[0])
    assert [x.name for x in made] == ["scan", "step"] and all(x.compile is not None for x in made)
    step = w.measure(made[1], 3)
    params = step.output.leaves
    assert [leaf.shape for leaf in params[:2]] == [(512, 784), (512,)] and np.isfinite(step.steady_seconds)
    with pytest.raises(JaxmlpError, match="unknown built-in workload seed"):
        w.builtin(("seed",), None)
