"""A folder of many runs stays readable and quick: each machine's newest runs drawn, the older summarised, each answer
computed once and only where it is shown, a question passing over runs that cannot answer it, and the change-point
confirmation computing an interval only for what it confirms."""

from pathlib import Path

import numpy as np
import pandas as pd

from jaxmlp import changepoints, registry
from jaxmlp.report import summaries, summary_base
from jaxmlp.results import history, tables
from jaxmlp.results.findings import select
from jaxmlp.stats import compare


def _points(n_runs: int, machines: tuple[str, ...] = ("a",)) -> pd.DataFrame:
    rows = []
    start = pd.Timestamp("2026-01-01", tz="UTC")
    for i in range(n_runs):
        for where in machines:
            rows.append(
                {
                    "benchmark": "test_update[cpu-128-jit]",
                    "machine": where,
                    "setting": where,
                    "file": f"run-{i}-{where}.json",
                    "timestamp": start + pd.Timedelta(hours=i),
                    "median": float(i),
                }
            )
    return pd.DataFrame(rows)


def test_the_history_keeps_each_machine_s_newest_runs_and_summarises_the_older():
    shown, older = history.recent(_points(50, ("a", "b")), keep=30)
    assert shown.groupby("machine")["file"].nunique().to_dict() == {"a": 30, "b": 30}  # each machine its own 30
    assert shown["timestamp"].min() == pd.Timestamp("2026-01-01", tz="UTC") + pd.Timedelta(hours=20)
    assert list(older["machine"]) == ["a", "b"] and list(older["runs"]) == [20, 20]
    assert list(older["median_s"]) == [9.5, 9.5]  # the median of the older runs' medians (0..19)
    few, none = history.recent(_points(5), keep=30)
    assert len(few) == 5 and none.empty


def _every_interval(samples, points, threshold=changepoints.CHANGE_THRESHOLD, alpha=changepoints.CHANGE_ALPHA):
    """Every candidate re-tested with its interval after each merge: the reference answer."""
    kept = sorted(set(points))
    while True:
        bounds = [0, *kept, len(samples)]
        tested = [
            compare(
                changepoints._pooled(samples, bounds[i], bounds[i + 1]),
                changepoints._pooled(samples, bounds[i + 1], bounds[i + 2]),
                threshold,
                alpha,
            )
            for i in range(len(kept))
        ]
        weak = [(changepoints._weakness(c), i) for i, c in enumerate(tested) if not changepoints._flagged(c)]
        if not weak:
            return list(zip(kept, tested))
        kept.pop(max(weak)[1])


def test_confirming_candidates_without_intervals_gives_the_same_answer():
    rng = np.random.default_rng(1)
    for _ in range(3):
        levels = rng.choice([1.0, 1.0, 1.1, 1.3], 24)
        samples = [list(level * np.exp(rng.normal(0, 0.03, 5))) for level in levels]
        candidates = changepoints.candidates(samples)
        assert len(candidates) > 3
        assert changepoints.confirmed(samples, candidates) == _every_interval(samples, candidates)


def test_a_folder_summary_computes_only_the_newest_answer_of_each_kind_and_names_the_older_briefly():
    made = []

    def answer(n):
        made.append(n)
        return summary_base.Summary(title=f"run {n}")

    found = [
        summaries.Listed(
            "benchmarks", Path(f"bench-2026010{n}T000000-cpu.json"), f"2026010{n}T000000", lambda n=n: answer(n)
        )
        for n in range(1, 9)
    ]
    shown = summaries.newest_of_each(found)
    assert made == [8] and shown[0].title == "run 8"
    line = shown[0].closing[-1]
    assert line.startswith("7 older benchmarks result(s): bench-20260107T000000-cpu.json, ")
    assert "and 2 more back to 2026-01-01 00:00 UTC" in line and "bench-20260101" not in line


def test_a_question_passes_over_runs_without_its_benchmarks_and_backends_answered():
    def run(n, backend, test):
        return pd.DataFrame({"file": [f"f{n}"], "backend": [backend], "test": [test], "size": ["quick"]})

    by_file = {
        f"f{n}": run(n, b, t)
        for n, b, t in (
            (3, "cpu", "test_update"),
            (2, "cpu", "test_loader"),
            (1, "cpu", "test_update"),
            (0, "tpu", "test_update"),
        )
    }
    asked = []

    def answers(part):
        asked.append(part.rows["file"].iloc[0])
        return True

    found = select.newest_per_backend(select.Parts(by_file), answers, needs=(registry.UPDATE,))
    assert {b: p.rows["file"].iloc[0] for b, p in found.items()} == {"cpu": "f3", "tpu": "f0"}
    assert asked == ["f3", "f0"]  # f2 holds no update step, f1's backend had its answer


def _scale_row(variant, median, peak, cold=100.0, cold_peak=2**29, runs=10_000):
    return {
        "test": registry.RESULTS_FOLDER.id,
        "name": f"test_results_folder[{variant}]",
        "variant": variant,
        "median": median,
        "command_peak_rss_bytes": peak,
        "cold_seconds": cold,
        "cold_peak_rss_bytes": cold_peak,
        "folder_runs": runs,
        "folder_sweeps": 200,
        "folder_timelines": 50,
    }


def test_the_results_folder_benchmark_says_each_command_s_goals_warm_and_cold():
    table = tables.results_folder_table(
        pd.DataFrame([_scale_row("summary", 21.0, 7e8), _scale_row("report", 59.0, 8e8, cold=301.0)])
    )
    assert list(table["command"]) == ["jaxmlp summary", "jaxmlp report"]
    assert list(table["warm_goal"]) == ["MISSED: at most 20 s and 1 GiB", "met: at most 60 s and 1 GiB"]
    assert list(table["cold_goal"]) == ["met: at most 300 s and 1 GiB", "MISSED: at most 300 s and 1 GiB"]
    heavy = tables.results_folder_table(pd.DataFrame([_scale_row("summary", 5.0, 2**30 + 1, cold_peak=2**30 + 1)]))
    assert heavy["warm_goal"].iloc[0].startswith("MISSED") and heavy["cold_goal"].iloc[0].startswith("MISSED")
    small = tables.results_folder_table(pd.DataFrame([_scale_row("report", 5.0, 2**28, runs=100)]))
    assert small["warm_goal"].iloc[0] == small["cold_goal"].iloc[0] == ""  # the goals hold for registry.STORE_FOLDER


def test_the_results_folder_finding_says_each_command_s_time_and_memory():
    from jaxmlp.results.findings import checks

    file = "bench-20261205T191503-cpu.json"
    more = {"backend": "cpu", "size": "full", "file": file, "timestamp": "2026-12-05T19:15:03+00:00"}
    rows = pd.DataFrame(
        [{**_scale_row(v, m, 2**29, cold=c), **more} for v, m, c in (("summary", 18.0, 90.0), ("report", 49.0, 100.0))]
    )
    (found,) = checks.results_folder({file: rows})
    assert found.answered and found.answer == (
        "jaxmlp summary took 18.0 s and 512 MiB warm, 90.0 s and 512 MiB cold over 10000 runs (warm met: at most "
        "20 s and 1 GiB; cold met: at most 300 s and 1 GiB); jaxmlp report took 49.0 s and 512 MiB warm, 100 s "
        "and 512 MiB cold over 10000 runs (warm met: at most 60 s and 1 GiB; cold met: at most 300 s and 1 GiB)."
    )
