"""`jaxmlp compare` of runs too short to decide anything, and of runs from two machines: said first."""

import json
from types import SimpleNamespace

import numpy as np
import pytest

from jaxmlp import registry
from jaxmlp.cli import main
from jaxmlp.results.tables.compare import rounds_for_alpha, rounds_for_effect, spread
from jaxmlp.stats import compare


def run_file(path, rounds: int, median: float, peak: float, seed: int, machine: str = "AMD EPYC") -> str:
    rng = np.random.default_rng(seed)
    benchmarks = []
    for name in ("epoch", "step"):
        data = [float(x) for x in median * np.exp(rng.normal(0, 0.03, rounds))]
        benchmarks.append(
            {
                "name": name,
                "group": "g",
                "params": {},
                "extra_info": {"peak_rss_bytes": peak, "peak_rss_scope": registry.PEAK_SCOPE_BENCHMARK},
                "stats": {"median": float(np.median(data)), "min": min(data), "rounds": rounds, "data": data},
            }
        )
    info = {"jaxmlp": {"host": "vm", "cpu_model": machine, "cpu_affinity": 2}}
    path.write_text(json.dumps({"machine_info": info, "benchmarks": benchmarks, "datetime": "2026-12-01T00:00:00"}))
    return str(path)


def jaxmlp(capsys: pytest.CaptureFixture[str], *argv: str) -> SimpleNamespace:
    """`jaxmlp ARGV` in this process (`main`, as the command runs it: what it prints is the test): its exit code and
    output."""
    capsys.readouterr()
    code = main(list(argv))
    said = capsys.readouterr()
    return SimpleNamespace(returncode=code, stdout=said.out, stderr=said.err)


def test_three_rounds_against_three_say_first_that_they_decide_nothing_nor_flag_memory(tmp_path, capsys):
    a = run_file(tmp_path / "a.json", 3, 1.0, 100e6, 0)
    b = run_file(tmp_path / "b.json", 3, 1.3, 150e6, 1)  # 30% slower, 50% more memory: neither decided
    done = jaxmlp(capsys, "compare", a, b, "--fail-on-regression")
    assert done.returncode == 0, done.stderr  # nothing was found: not a failed check, not a pass either
    first = done.stdout.splitlines()[0]
    assert first.startswith("UNDECIDED: 2 of 2 benchmarks had too few rounds (3 against 3) to reach p < 0.01")
    assert "at least 5 a side" in first and "--rounds" in first
    assert "0 memory regression(s)" in done.stdout and "regression, undecided" in done.stdout
    assert "2 peak(s) differ beyond the memory threshold in runs too short" in done.stdout


def test_the_rounds_said_are_enough():
    assert rounds_for_alpha(0.01) == 5 and rounds_for_alpha(0.05) == 4
    rng = np.random.default_rng(0)
    sigma, threshold = 0.03, 0.05
    n = rounds_for_effect(sigma, threshold, 0.01)
    found = [
        compare(np.exp(rng.normal(0, sigma, n)), 1.08 * np.exp(rng.normal(0, sigma, n))).verdict for _ in range(200)
    ]
    assert found.count("regression") / len(found) >= 0.8  # an 8% change, beyond the 5% threshold, flagged
    assert spread([1.0]) != spread([1.0])  # NaN: one sample has no spread
    assert spread(np.exp(rng.normal(0, 0.03, 4000))) == pytest.approx(0.03, rel=0.1)


def test_a_comparison_across_machines_says_so_in_its_first_line(tmp_path, capsys):
    a = run_file(tmp_path / "a.json", 3, 1.0, 100e6, 0)
    b = run_file(tmp_path / "b.json", 3, 1.0, 100e6, 1, machine="Intel Xeon")
    done = jaxmlp(capsys, "compare", a, b)
    assert done.stderr.startswith("jaxmlp compare: warning: ") and "different machines" in done.stderr
    assert done.stdout.splitlines()[0].startswith("UNDECIDED")  # the next line a terminal shows
