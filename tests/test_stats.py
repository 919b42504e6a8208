"""The regression statistics on synthetic samples, and `jaxmlp compare`'s verdicts and exit codes."""

import json
import math

import numpy as np
import pytest

from jaxmlp import blocks, changepoints, stats
from jaxmlp.blocks import compare_within, van_elteren
from jaxmlp.cli import main
from jaxmlp.shift import shift_interval
from jaxmlp.stats import compare, ratio_interval, smallest_p


def timings(median: float, n: int, noise: float, seed: int) -> np.ndarray:
    """Lognormal timings around ``median`` with relative spread ``noise``, like epoch times."""
    return median * np.exp(np.random.default_rng(seed).normal(0, noise, n))


def test_a_against_itself_is_no_change():
    flagged = sum(
        compare(timings(1.0, 10, 0.03, 2 * i), timings(1.0, 10, 0.03, 2 * i + 1)).verdict != "no change"
        for i in range(100)
    )
    assert flagged <= 3  # alpha is 1% a side, and the 5% threshold cuts the rest


def test_ten_percent_slower_is_a_regression():
    caught = sum(
        compare(timings(1.0, 10, 0.03, 2 * i), timings(1.1, 10, 0.03, 2 * i + 1)).verdict == "regression"
        for i in range(100)
    )
    assert caught >= 95


def test_ten_percent_faster_is_an_improvement():
    result = compare(timings(1.1, 10, 0.03, 0), timings(1.0, 10, 0.03, 1))
    assert result.verdict == "improvement" and result.p_faster < 0.01 and result.ratio < 1


def test_two_percent_is_below_the_five_percent_threshold():
    # Significant (a large, clean sample) but too small to count.
    result = compare(timings(1.0, 40, 0.005, 0), timings(1.02, 40, 0.005, 1))
    assert result.p_slower < 0.01 and 1.01 < result.ratio < 1.03
    assert result.verdict == "no change"
    assert compare(timings(1.0, 40, 0.005, 0), timings(1.02, 40, 0.005, 1), threshold=0.01).verdict == "regression"


def test_too_few_samples_give_no_verdict():
    assert smallest_p(3, 3) == 1 / 20 and smallest_p(5, 5) == 1 / 252
    result = compare([1.0, 1.01, 0.99], [2.0, 2.1, 2.05])  # twice as slow, but p can't get under 0.01
    assert result.verdict == "insufficient data" and result.ratio == pytest.approx(2.05 / 1.0)
    assert compare([], [1.0]).verdict == "insufficient data"


def test_ratio_and_its_interval():
    base, new = timings(1.0, 30, 0.02, 0), timings(1.2, 30, 0.02, 1)
    result = compare(base, new)
    assert result.ratio == pytest.approx(np.median(new) / np.median(base))
    assert result.ci_low < result.ratio < result.ci_high and result.ci_low > 1.1 and result.ci_high < 1.3
    assert (result.ci_low, result.ci_high) == shift_interval(base, new)[1:]  # the Moses interval: it holds the ratio


def test_the_interval_is_stretched_to_hold_the_ratio_of_medians():
    """Two groups on each side (15 of the baseline's 31 processes at half the time, 15 of the new side's at twice
    it): every ratio of a new time to a baseline one is about 1, 2 or 4, the Moses interval lies about 2, and the
    medians' ratio is about 1. The interval reaches out to it: the ratio a comparison says lies inside its
    interval."""
    rng = np.random.default_rng(0)
    base = np.r_[np.full(15, 0.5), np.full(16, 1.0)] * np.exp(rng.normal(0, 0.001, 31))
    new = np.r_[np.full(16, 1.0), np.full(15, 2.0)] * np.exp(rng.normal(0, 0.001, 31))
    ratio = float(np.median(new) / np.median(base))
    _, low, high = shift_interval(base, new)
    assert ratio < 1.01 and 1.99 < low < high < 2.01 and ratio_interval(base, new, ratio) == (ratio, high)
    c = compare(base, new)
    assert (c.ratio, c.ci_low, c.ci_high, c.word) == (ratio, ratio, high, "inconclusive")
    assert all(math.isnan(x) for x in ratio_interval([1.0, 1.1], [1.0, 1.2], 1.0))  # too few: no interval


def bench_file(path, medians: dict, save_data=True, machine=None):
    benchmarks = []
    for name, data in medians.items():
        stats = {"median": float(np.median(data)), "min": float(min(data)), "rounds": len(data)}
        if save_data:
            stats["data"] = [float(x) for x in data]
        benchmarks.append({"name": name, "group": "g", "params": {}, "extra_info": {}, "stats": stats})
    info = {"jaxmlp": machine} if machine else {}
    path.write_text(json.dumps({"machine_info": info, "benchmarks": benchmarks, "datetime": "2026-12-01T00:00:00"}))
    return path


def test_compare_cli_flags_and_exits(tmp_path, capsys):
    base = bench_file(tmp_path / "base.json", {"epoch": timings(1.0, 12, 0.02, 0), "step": timings(1.0, 12, 0.02, 1)})
    new = bench_file(tmp_path / "new.json", {"epoch": timings(1.15, 12, 0.02, 2), "step": timings(1.0, 12, 0.02, 3)})
    assert main(["compare", str(base), str(new)]) == 3  # the gate: a benchmark slower beyond the threshold
    out = capsys.readouterr().out
    assert "1 slower, 0 faster, " in out and "slower" in out.splitlines()[1]
    assert main(["compare", str(base), str(new), "--fail-on-regression"]) == 3  # kept: the same gate
    assert main(["compare", str(base), str(base), "--strict"]) == 0  # a run against itself: the same, exactly
    assert "0 slower, 0 faster, 2 the same, 0 inconclusive" in capsys.readouterr().out
    assert main(["compare", str(base), str(new), "--threshold", "0.5"]) == 0  # x1.15 is within 50%
    assert main(["compare", str(base), str(new), "--threshold", "0.15", "--strict"]) == 4  # x1.13-x1.17 spans 15%
    out = capsys.readouterr().out
    assert "inconclusive: the 95% interval spans the ±15% threshold; the widest, epoch" in out
    assert "epoch not within reach: the ratio lies at the threshold (×1.147 against ±15%)" in out  # x1.147: its edge


def test_compare_warns_when_the_two_sides_come_from_different_machines(tmp_path, capsys):
    here = {"host": "vm", "cpu_model": "AMD EPYC", "cpu_affinity": 2, "jax": "0.8.3"}
    base = bench_file(tmp_path / "base.json", {"epoch": timings(1.0, 6, 0.02, 0)}, machine=here)
    same = bench_file(tmp_path / "same.json", {"epoch": timings(1.0, 6, 0.02, 1)}, machine={**here, "jax": "0.10.2"})
    other = bench_file(
        tmp_path / "other.json", {"epoch": timings(1.0, 6, 0.02, 2)}, machine={**here, "cpu_model": "Intel Xeon"}
    )
    assert main(["compare", str(base), str(same)]) == 0
    assert capsys.readouterr().err == ""  # another jax on the same machine: what a comparison is for
    assert main(["compare", str(base), str(other)]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("jaxmlp compare: warning: ")
    assert "(AMD EPYC, 2 cores)" in err and "(Intel Xeon, 2 cores)" in err and "compare the machines too" in err


def test_compare_reads_folders_and_pools_their_samples(tmp_path, capsys):
    for i in range(2):
        (tmp_path / "a").mkdir(exist_ok=True)
        (tmp_path / "b").mkdir(exist_ok=True)
        bench_file(tmp_path / "a" / f"{i}.json", {"epoch": timings(1.0, 3, 0.02, i)})
        bench_file(tmp_path / "b" / f"{i}.json", {"epoch": timings(1.3, 3, 0.02, 10 + i)})
    (tmp_path / "b" / "notes.json").write_text("{}")  # other files in a folder are passed over
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--fail-on-regression"]) == 3
    assert "6/6" in capsys.readouterr().out


def test_compare_without_raw_samples_says_how_to_get_them(tmp_path, capsys):
    base = bench_file(tmp_path / "base.json", {"epoch": [1.0, 1.1]}, save_data=False)
    assert main(["compare", str(base), str(base)]) == 2
    err = capsys.readouterr().err
    assert "has no raw samples (stats.data)" in err and "--benchmark-save-data" in err and err.count("\n") == 1


def test_compare_bad_input(tmp_path, capsys):
    a = bench_file(tmp_path / "a.json", {"epoch": [1.0] * 6})
    b = bench_file(tmp_path / "b.json", {"other": [1.0] * 6})
    assert main(["compare", str(a), str(b)]) == 2
    assert "no benchmark appears in both" in capsys.readouterr().err
    assert main(["compare", str(a), str(tmp_path / "missing.json")]) == 2
    assert "does not exist" in capsys.readouterr().err
    (tmp_path / "bad.json").write_text("{oops")
    assert main(["compare", str(a), str(tmp_path / "bad.json")]) == 2
    assert "not readable as JSON" in capsys.readouterr().err


def test_a_sample_that_is_not_a_number_is_never_no_change(tmp_path, capsys):
    base = timings(1.0, 12, 0.02, 0)
    broken = timings(1.0, 12, 0.02, 1)
    broken[3], broken[7] = np.nan, np.inf
    c = compare(base, broken)
    assert (c.verdict, c.invalid, c.describe()) == ("invalid samples", 2, "invalid samples (2 NaN or inf)")
    assert c.new_median == pytest.approx(float(np.median(np.delete(broken, [3, 7]))))  # of the finite ones
    assert type(c).from_json(json.loads(json.dumps(c.to_json()))).invalid == 2
    a = bench_file(tmp_path / "base.json", {"epoch": base, "step": base})
    b = bench_file(tmp_path / "new.json", {"epoch": broken, "step": base})
    assert main(["compare", str(a), str(b)]) == 1  # not measured: never a silent pass
    captured = capsys.readouterr()
    assert "1 with invalid samples" in captured.out and "inconclusive" in captured.out.splitlines()[1]
    assert "not finite numbers (NaN or inf)" in captured.err and captured.err.count("\n") == 1


# --- the node as a block: samples of several machines (a sweep under mpirun or srun) ------------------------------


def test_one_node_is_the_plain_comparison_number_for_number():
    for seed in range(5):
        a, b = timings(1.0, 8, 0.03, seed), timings(1.08, 8, 0.03, seed + 50)
        plain = compare(a, b)
        for nodes in ((), ("n1",)):
            within = compare_within(a, b, nodes * len(a), nodes * len(b))
            assert within == plain or str(within) == str(plain)  # NaNs compare unequal; their text does not


def test_two_nodes_of_different_speeds_give_their_common_ratio_and_find_it():
    """Node b runs at twice node a's time; each release's samples are half each node's: the pooled samples hide a
    10% slowdown in the nodes' difference (p above alpha), the comparison within each node finds it and its ratio."""
    levels, nodes = np.repeat([1.0, 2.0], 6), ["a"] * 6 + ["b"] * 6
    base, new = (levels * timings(1.0, 12, 0.01, seed) for seed in (0, 1))
    assert compare_within(base, base * 1.1, nodes, nodes).ratio == pytest.approx(1.1, rel=1e-12)
    within = compare_within(base, new * 1.1, nodes, nodes)
    assert within.ratio == pytest.approx(1.1, rel=0.02) and within.verdict == "regression"
    assert within.ci_low <= 1.1 <= within.ci_high and within.p_slower < 0.01 < within.p_faster
    assert compare(base, new * 1.1).verdict == "no change"  # pooled: the nodes' levels drown it
    assert compare_within(base, new, nodes, nodes).verdict == "no change"


def test_the_smallest_attainable_p_is_the_nodes_exact_floor():
    """Two samples a side on each of two nodes: no test over those can go below 1/6 x 1/6."""
    base, nodes = np.array([1.0, 1.01, 2.0, 2.02]), ["a", "a", "b", "b"]
    within = compare_within(base, base * 1.5, nodes, nodes, alpha=0.05)
    assert within.p_slower >= smallest_p(2, 2) ** 2 and within.verdict == "regression"
    assert compare_within(base, base * 1.5, nodes, nodes).verdict == "insufficient data"  # 1/36 >= alpha 0.01


def _permutation_p(pairs):
    """Van Elteren's one-sided p by enumerating every relabelling within each node (ties as ranked)."""
    import itertools

    from scipy.stats import rankdata

    laws = []
    for base, new in pairs:
        ranks = rankdata(np.concatenate([base, new]))
        sums = [sum(ranks[list(c)]) / (len(ranks) + 1) for c in itertools.combinations(range(len(ranks)), len(new))]
        laws.append(sums)
    observed = sum(float(np.sum(rankdata(np.concatenate([b, n]))[len(b) :])) / (len(b) + len(n) + 1) for b, n in pairs)
    totals = [sum(t) for t in itertools.product(*laws)]
    slower = sum(t >= observed - 1e-9 for t in totals) / len(totals)
    faster = sum(t <= observed + 1e-9 for t in totals) / len(totals)
    return slower, faster


def test_small_nodes_take_the_exact_stratified_null():
    """Ten nodes, one sample a side each, nine slower: the normal approximation said p 0.0057; the exact p is
    11/1024 = 0.0107, no regression at alpha 0.01."""
    base, new = np.ones(10), np.r_[np.full(9, 2.0), 0.5]
    nodes = [str(i) for i in range(10)]
    within = compare_within(base, new, nodes, nodes)
    assert within.p_slower == pytest.approx(11 / 1024, rel=1e-12) and within.verdict == "no change"
    rng = np.random.default_rng(3)
    for sizes in (((2, 3), (3, 2)), ((1, 4), (3, 3), (2, 2)), ((4, 4),)):
        pairs = [(np.round(rng.normal(1, 0.1, n), 1), np.round(rng.normal(1.05, 0.1, m), 1)) for n, m in sizes]
        assert van_elteren(pairs) == pytest.approx(_permutation_p(pairs), rel=1e-9)  # ties included (rounded)


def test_too_large_an_exact_null_takes_a_seeded_permutation_test(monkeypatch):
    rng = np.random.default_rng(4)
    pairs = [(rng.normal(1, 0.1, 3), rng.normal(1.1, 0.1, 4)) for _ in range(3)]
    exact = van_elteren(pairs)
    monkeypatch.setattr(blocks, "SUPPORT", 10)
    permuted = van_elteren(pairs)
    assert permuted == van_elteren(pairs) and permuted != exact  # seeded
    assert permuted == pytest.approx(exact, abs=0.01)


def test_large_nodes_take_the_normal_approximation():
    rng = np.random.default_rng(5)
    pairs = [(rng.normal(1, 0.1, 8), rng.normal(1.05, 0.1, 9)) for _ in range(2)]
    slower, faster = van_elteren(pairs)
    assert slower + faster == pytest.approx(1.0)  # continuous: no atom at the observed value


def test_a_node_that_measured_one_side_only_is_left_out():
    base, new = np.array([1.0, 1.01, 0.99, 3.0]), np.array([1.2, 1.21, 1.19])
    within = compare_within(base, new, ["a", "a", "a", "c"], ["a", "a", "a"], alpha=0.1)
    assert within.n_baseline == 3 and within.ratio == pytest.approx(1.2)


def test_insufficient_data_within_nodes_says_no_p_and_no_interval():
    base, nodes = np.array([1.0, 1.01, 2.0, 2.02]), ["a", "a", "b", "b"]
    within = compare_within(base, base * 1.5, nodes, nodes)  # 1/36 >= alpha 0.01
    assert within.verdict == "insufficient data" and within.ratio == pytest.approx(1.5)
    assert all(math.isnan(x) for x in (within.p_slower, within.p_faster, within.ci_low, within.ci_high))


def test_one_node_left_is_the_plain_comparison_number_for_number():
    a, b = timings(1.0, 8, 0.03, 1), timings(1.1, 8, 0.03, 2)
    base, new = np.r_[a, 5.0], np.r_[b, 7.0, 9.0]
    within = compare_within(base, new, ["a"] * 8 + ["c"], ["a"] * 8 + ["d", "d"])
    assert str(within) == str(compare(a, b))


def test_one_sample_a_node_a_side_gives_the_sign_test_s_interval_over_the_nodes():
    """With one sample per node per side, each node's U is 0 or 1: the interval is the sign test's over the nodes'
    ratios (the 2nd lowest to the 2nd highest of 10), and says nothing (NaN) with fewer than 6 nodes (1/2^5 is above
    2.5%). One node, small: the interval is `compare`'s (Moses's)."""
    rng = np.random.default_rng(6)
    levels = np.arange(1.0, 11.0)
    base, new = levels * np.exp(rng.normal(0, 0.02, 10)), levels * 1.2 * np.exp(rng.normal(0, 0.02, 10))
    nodes = [str(i) for i in range(10)]
    within = compare_within(base, new, nodes, nodes)
    assert within.ci_low < within.ratio < within.ci_high and within.ci_low < 1.2 < within.ci_high
    assert (within.ci_low, within.ci_high) == pytest.approx(tuple(np.sort(new / base)[[1, 8]]), rel=1e-12)
    few = compare_within(base[:5], new[:5], nodes[:5], nodes[:5], alpha=0.2)
    assert math.isnan(few.ci_low) and math.isnan(few.ci_high)
    a, b = timings(1.0, 5, 0.03, 1), timings(1.1, 6, 0.03, 2)
    estimate, low, high = shift_interval(a, b)
    assert blocks.stratified_interval([(a, b)], estimate) == (low, high)


def test_the_change_points_take_each_nodes_level_out_first():
    """Two nodes, one twice as slow, each measuring half of every release: the step at the fourth release is found
    at its size, and the nodes' difference is no change."""
    rng = np.random.default_rng(1)
    labels = [f"0.4.{i}" for i in range(8)]
    levels = [1.0] * 3 + [1.2] * 5
    samples = [tuple(level * np.r_[np.ones(4), 2 * np.ones(4)] * np.exp(rng.normal(0, 0.01, 8))) for level in levels]
    nodes = [("a",) * 4 + ("b",) * 4] * len(labels)
    (change,) = changepoints.detect(labels, samples, nodes=nodes)
    assert (change.kind, change.at) == ("step", "0.4.3") and change.comparison.ratio == pytest.approx(1.2, rel=0.02)
    one = [("a",) * 8] * len(labels)
    assert changepoints.detect(labels, samples, nodes=one) == changepoints.detect(labels, samples)


def _node_steps(folder, sides, without_nodes=False):
    """Sweep cells written and read back, one a (release, seed, slowdown, each process's node) of ``sides``, each
    process's times its node's level (a: 1, b: 2) over; their steady state's step (``without_nodes``: as a cell
    whose processes name no node is read)."""
    from jaxmlp.measure.records import ProcessResult, WorkloadTimes
    from jaxmlp.results.schema.sweep import SweepDocument
    from jaxmlp.results.store.frames import load
    from jaxmlp.results.store.writing import ResultsStore, write_json_new
    from jaxmlp.results.sweep.views import sweep_steps, sweeps

    folder.mkdir(exist_ok=True)
    for release, seed, slower, nodes in sides:
        times = timings(slower, len(nodes), 0.01, seed) * np.array([1.0 if n == "a" else 2.0 for n in nodes])
        processes = tuple(
            ProcessResult({"jax": release, "jaxlib": release, "node": node}, {"w": WorkloadTimes.of(0.1, [t, t, t])})
            for t, node in zip(times, nodes)
        )
        assert SweepDocument(release, processes, "2026-12-06").nodes() == tuple(nodes)
        write_json_new(folder / f"jax-{release}.json", SweepDocument(release, processes, "2026-12-06").to_json())
    results = load(ResultsStore(folder))
    (rows,) = sweeps(results.runs).values()
    steps = sweep_steps(rows.drop(columns="nodes") if without_nodes else rows, results.samples)
    return steps[steps["benchmark"].str.startswith("sweep_steady")].iloc[0]


def test_a_sweep_of_two_nodes_compares_each_release_within_each_node(tmp_path):
    """Two sweep cells whose processes two nodes shared (schema 6: a node in each process's metadata), written and
    read back: the release comparison takes the node as a block; a cell whose processes name no node is one node."""
    nodes = ["a"] * 6 + ["b"] * 6
    sides = (("0.4.30", 0, 1.0, nodes), ("0.4.31", 1, 1.1, nodes))
    steady = _node_steps(tmp_path / "with", sides)
    assert steady["verdict"] == "slower" and steady["ratio"] == pytest.approx(1.1, rel=0.02)
    pooled = _node_steps(tmp_path / "without", sides, without_nodes=True)  # the nodes unknown: pooled, as before
    assert pooled["verdict"] == "inconclusive"


def test_a_cell_of_one_node_is_compared_within_that_node_with_a_neighbour_of_two(tmp_path):
    """A cell whose processes all ran on node a, beside one that nodes a and b shared: the nodes are kept (not ""),
    so node a's samples are compared, not all dropped as "insufficient data"."""
    steady = _node_steps(tmp_path, (("0.4.30", 0, 1.0, ["a"] * 6 + ["b"] * 6), ("0.4.31", 1, 1.2, ["a"] * 12)))
    assert steady["verdict"] == "slower" and steady["ratio"] == pytest.approx(1.2, rel=0.02)


def test_every_sweep_sample_names_its_node(tmp_path):
    """A sweep's log names the node (the host, as the ranks name theirs) on every sample, ranked or not."""
    import socket

    from jaxmlp.measure.records import ProcessResult, WorkloadTimes
    from jaxmlp.results.sweep.files import RunLog

    log = RunLog(tmp_path)
    log.record("c", 0, ProcessResult({"jax": "0.4.30"}, {"w": WorkloadTimes.of(0.1, [1.0, 1.0])}))
    log.record("c", 1, ProcessResult({"node": "other"}, {"w": WorkloadTimes.of(0.1, [1.0, 1.0])}))
    lines = [json.loads(line) for line in log.log.read_text().splitlines()]
    assert [d["result"]["metadata"]["node"] for d in lines] == [socket.gethostname(), "other"]


# --- the four words (`verdict_word`), the processes that settle one (`processes_to_settle`), the gate ---------------


@pytest.mark.parametrize(
    ("ratio", "low", "high", "p_slower", "p_faster", "word"),
    [
        (1.01, 0.98, 1.04, 0.3, 0.7, "the same"),  # the interval inside the 5% threshold both ways
        (1.0, 1 / 1.05, 1.05, 0.5, 0.5, "the same"),  # touching it at both ends: within, ends included
        (1.02, 0.97, 1.0501, 0.2, 0.8, "inconclusive"),  # spanning it above, by a hair
        (0.98, 0.95, 1.01, 0.8, 0.2, "inconclusive"),  # spanning it below (1/1.05 = 0.952)
        (1.03, 1.01, 1.045, 0.001, 0.999, "the same"),  # significant, but all of it within the threshold
        (1.04, 1.02, 1.07, 0.001, 0.999, "inconclusive"),  # significant, within, its interval spanning it
        (1.08, 1.04, 1.12, 0.001, 0.999, "slower"),  # significant and beyond the threshold
        (1.08, 1.04, 1.12, 0.02, 0.98, "inconclusive"),  # beyond the threshold, not significant at alpha 1%
        (1.05, 1.03, 1.07, 0.001, 0.999, "inconclusive"),  # on the threshold itself: not beyond it
        (0.90, 0.86, 0.93, 0.999, 0.001, "faster"),
        (1.2, float("nan"), float("nan"), 0.001, 0.999, "slower"),  # no interval: the test still decides
        (1.0, float("nan"), float("nan"), 0.5, 0.5, "inconclusive"),  # no interval: never the same
    ],
)
def test_the_four_words_at_the_threshold_s_edges(ratio, low, high, p_slower, p_faster, word):
    assert stats.verdict_word(ratio, low, high, p_slower, p_faster, threshold=0.05, alpha=0.01) == word


def test_every_comparison_says_one_of_the_four_words_and_its_flag_agrees():
    for seed, (slow, n) in enumerate([(1.0, 10), (1.1, 10), (0.9, 10), (1.0, 40), (1.0, 1), (1.06, 3)]):
        c = compare(timings(1.0, n, 0.03, 2 * seed), timings(slow, n, 0.03, 2 * seed + 1))
        assert c.word in stats.VERDICT_WORDS and c.in_words() == c.word
        assert (c.word == "slower") == (c.verdict == "regression")
        assert (c.word == "faster") == (c.verdict == "improvement")
    nan = compare([1.0, float("nan"), 1.0], [1.0, 1.0, 1.0])
    assert nan.verdict == stats.INVALID and nan.word == "inconclusive"


def test_forty_quiet_samples_a_side_show_the_same():
    c = compare(timings(1.0, 40, 0.01, 0), timings(1.0, 40, 0.01, 1))
    assert c.word == "the same" and stats.processes_to_settle(c) == 0


def test_a_file_filed_before_the_word_gets_it_from_its_verdict_and_interval():
    c = compare(timings(1.0, 40, 0.01, 0), timings(1.0, 40, 0.01, 1))
    old = {k: v for k, v in c.to_json().items() if k != "word"}
    assert stats.Comparison.from_json(old).word == "the same"
    assert stats.Comparison.from_json({**old, "ci_high": 1.2}).word == "inconclusive"
    assert stats.Comparison.from_json({**old, "verdict": "regression"}).word == "slower"
    assert stats.Comparison.from_json({**old, "verdict": "insufficient data"}).word == "inconclusive"
    assert stats.Comparison.from_json(c.to_json()) == c


def _inconclusive(ratio: float, low: float, high: float, n: int = 7) -> stats.Comparison:
    nan = float("nan")
    return stats.Comparison(n, n, 1.0, ratio, ratio, low, high, nan, nan, "no change", word="inconclusive")


def test_processes_to_settle_shrinks_the_interval_as_one_over_root_n():
    # within the threshold: its upper side 0.06 (log) must fit in log(1.05) - log(1.01) = 0.0392
    c = _inconclusive(1.01, 1.01 / math.exp(0.06), 1.01 * math.exp(0.06))
    scale = (math.log(1.05) - math.log(1.01)) / 0.06
    assert stats.processes_to_settle(c, 0.05) == math.ceil(7 / scale**2) - 7
    # beyond it: its lower side must clear the threshold
    beyond = _inconclusive(1.10, 1.10 / math.exp(0.08), 1.10 * math.exp(0.08))
    scale = (math.log(1.10) - math.log(1.05)) / 0.08
    assert stats.processes_to_settle(beyond, 0.05) == math.ceil(7 / scale**2) - 7
    assert stats.processes_to_settle(_inconclusive(1.05, 1.0, 1.1), 0.05) is None  # on the threshold
    assert stats.processes_to_settle(_inconclusive(1.0, float("nan"), float("nan")), 0.05) is None
    assert stats.processes_to_settle(_inconclusive(1.1, 1.06, 1.15), 0.05) is None  # clear of it, not significant


def test_processes_to_settle_is_about_right_for_real_samples():
    c = compare(timings(1.0, 6, 0.04, 10), timings(1.0, 6, 0.04, 11))
    more = stats.processes_to_settle(c)
    assert c.word == "inconclusive" and more is not None and more > 0
    settled = [compare(timings(1.0, 6 + more, 0.04, 2 * s), timings(1.0, 6 + more, 0.04, 2 * s + 1)) for s in range(20)]
    assert sum(s.word == "the same" for s in settled) >= 5  # roughly: the interval's width is itself noisy


@pytest.mark.parametrize(
    ("verdicts", "unmeasured", "strict", "code"),
    [
        ([], 0, False, 0),
        (["the same", "faster"], 0, True, 0),
        (["the same", "inconclusive"], 0, False, 0),
        (["the same", "inconclusive"], 0, True, 4),
        (["inconclusive", "slower"], 0, True, 3),
        (["slower"], 2, False, 3),  # a release shown slower outranks one not measured
        (["the same"], 1, False, 1),
        (["inconclusive"], 1, True, 1),
    ],
)
def test_the_gate_s_exit_codes(verdicts, unmeasured, strict, code):
    from jaxmlp.errors import gate

    assert gate(verdicts, unmeasured, strict) == code


def test_a_ratio_at_the_threshold_s_edge_is_not_within_reach_on_every_face():
    """Where settling would take more than `stats.SETTLE_REACH` times the processes measured (the ratio at the
    threshold's edge), no count is said: "not within reach", in compare's, the sweep's and track's words alike."""
    from jaxmlp.report.text import compare_text
    from jaxmlp.results import tables
    from jaxmlp.results.schema.track import Tracked
    from jaxmlp.results.sweep import settling, tracked
    from jaxmlp.results.sweep.track_answers import sentence

    edge = _inconclusive(1.049, 1.049 / math.exp(0.05), 1.049 * math.exp(0.05), n=5)
    assert stats.beyond_reach(edge, 0.05) and stats.processes_to_settle(edge, 0.05) is None
    said = "not within reach: the ratio lies at the threshold (×1.049 against ±5%)"
    assert stats.settle_words(edge).startswith(said)
    assert said in stats.verdict_line(edge)  # sweep, timeline, bisect, corpus
    wide = _inconclusive(0.806, 0.452, 2.38, n=5)  # far from the threshold, its interval wide: within reach
    assert not stats.beyond_reach(wide) and stats.settle_words(wide).startswith("about ")
    assert settling.more_processes(wide) > 10 * 5  # as many as would settle it: the budget bounds them
    near = _inconclusive(1.01, 1.01 / math.exp(0.06), 1.01 * math.exp(0.06))
    assert not stats.beyond_reach(near) and stats.settle_words(near).startswith("about ")
    # compare: samples whose ratio is 1.049 with a narrow interval
    base = [1.0, 1.01, 0.99, 1.02, 0.98, 1.0, 1.005, 0.995]
    table = tables.compare_samples({"b": base}, {"b": [1.049 * v for v in base]})
    assert table.loc[0, "verdict"] == "inconclusive" and bool(table.loc[0, "beyond_reach"])
    text = compare_text(table, 0.05, 0.01)
    assert "b not within reach: the ratio lies at the threshold (×1.049" in text and "more rounds" in text
    # track: its closing line, and the site's and message's sentence (from the tidy frame)
    t = Tracked("w", "0.7.1", "0.7.0", "previous", edge, edge.word, stats.processes_to_settle(edge) or 0)
    assert said in tracked.verdict_line(t)
    assert settling.more_processes(edge) == 5  # still settled while the budget lasts: as many again
    row = {**t.to_json(), "ratio": 1.049, "low": edge.ci_low, "high": edge.ci_high, "settle": 0}
    row |= {"settle_words": stats.settle_words(edge), "median_s": 1.049, "baseline_median_s": 1.0}
    assert said in sentence(row)
