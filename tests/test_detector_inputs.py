"""The detector's inputs for real cases: a release whose processes split into two groups named (on the corpus run's
real samples and on synthetic ones), compile time as the median of several compiles a process, and each process's
own peak memory as a timeline column and a corpus metric."""

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from jaxmlp import registry
from jaxmlp.bimodal import groups_of
from jaxmlp.measure.records import ProcessResult, WorkloadTimes
from jaxmlp.measure.sweep.corpus import read_manifest
from jaxmlp.results.schema import parse
from jaxmlp.results.schema.sweep import SweepDocument
from jaxmlp.results.schema.upgrade import upgrade
from jaxmlp.results.store.frames import load
from jaxmlp.results.store.writing import ResultsStore
from jaxmlp.results.sweep.compared import column_said, timeline_columns
from jaxmlp.results.sweep.corpus import case_found, score
from jaxmlp.results.sweep.corpus_totals import corpus_table

FIXTURES = Path(__file__).parent / "fixtures"
BIMODAL = FIXTURES / "bimodal" / "timeline-20261206T180504"
MANIFEST = FIXTURES / "corpus" / "corpus.toml"

# --- bimodal releases ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bimodal_results():
    """The corpus run's (2026-12-06) timeline of scan-f64-carry-0.4.33, its cells without XLA flags: real samples
    (its rows with their release, and its samples)."""
    results = load(ResultsStore(BIMODAL))
    return results.runs.assign(release=results.runs["sweep_label"]), results.samples


@pytest.fixture(scope="module")
def scan_f64_carry(bimodal_results):
    (column,) = timeline_columns(*bimodal_results)
    return column


def test_a_sweeps_summary_names_each_bimodal_cell(bimodal_results):
    from jaxmlp.report.sweep_summaries import sweep_summary

    lines = sweep_summary(*bimodal_results).lines
    assert (
        "scan_f64_carry, 0.4.33: bimodal: two groups, 1.75 ms (3) and 10.0 ms (4): its median and its ratios pool "
        "the two groups" in lines
    )
    assert not [line for line in lines if line.startswith("scan_f64_carry, 0.4.31")]


def test_the_corpus_runs_bimodal_release_is_named_with_its_two_groups(scan_f64_carry):
    at = dict(zip(scan_f64_carry.releases, scan_f64_carry.samples))
    groups = groups_of(at["0.4.33"])  # 1.71, 1.75, 1.79, then 6.86, 9.79, 10.3, 11.5 ms
    assert groups is not None and (len(groups.low), len(groups.high)) == (3, 4)
    assert groups.line() == "bimodal: two groups, 1.75 ms (3) and 10.0 ms (4)"
    assert groups_of(at["0.4.31"]) is None and groups_of(at["0.9.0"]) is None  # one slow process is no group
    said = column_said(scan_f64_carry)
    assert "0.4.33 slower than 0.4.31 and before, ×7.41" in said
    assert "the ratio pools 0.4.33's two groups (against 0.4.31: ×6.91 (3) and ×39.7 (4))" in said
    assert "0.4.33 bimodal: two groups, 1.75 ms (3) and 10.0 ms (4)" in said


def test_a_change_whose_ratio_pools_two_groups_is_marked_not_scored_against_its_band(scan_f64_carry):
    from jaxmlp.results.sweep.corpus import CaseFound

    (case,) = read_manifest(MANIFEST, ("fixture-step",))
    case = replace(
        case,
        bisect=None,
        releases=scan_f64_carry.releases,
        expect=replace(case.expect, release="0.4.33", ratio=(6.5, 15.3), cause="unknown", flag=""),
    )
    scored = score(case, CaseFound((scan_f64_carry._replace(workload="product.step"),)))
    assert scored.found is True and scored.in_band is None  # x7.41 is inside the band, but no one population's
    assert scored.why[0] == (
        "×7.41 not scored against the band: the ratio pools 0.4.33's two groups (against 0.4.31: ×6.91 (3) and "
        "×39.7 (4))"
    )
    (ratio,) = corpus_table([scored])["ratio"]
    assert ratio.endswith("pooling a bimodal release's two groups")


@pytest.mark.parametrize("spread", [0.05, 0.17, 0.25])
def test_one_population_is_not_called_bimodal(spread):
    rng = np.random.default_rng(7)
    called = sum(groups_of(np.exp(rng.normal(0, spread, n))) is not None for n in (5, 7, 10, 20) for _ in range(100))
    assert called == 0  # lognormal at the corpus's spreads, 400 sets of 5 to 20 processes


def test_two_groups_are_found_where_they_are_apart_and_each_holds_two_or_more():
    rng = np.random.default_rng(8)
    fast, slow = np.exp(rng.normal(0, 0.05, 4)), 5 * np.exp(rng.normal(0, 0.05, 3))
    groups = groups_of([*slow, *fast])
    assert groups is not None and groups.low == tuple(sorted(fast)) and groups.high == tuple(sorted(slow))
    assert groups_of([*fast, 5.0]) is None  # one process apart: an outlier
    assert groups_of([1.0, 1.1, 1.8, 1.9]) is None  # x1.6 apart: less than GAP_RATIO
    assert groups_of([1.0, 1.5, 2.2, 3.3, 5.0, 7.5]) is None  # evenly spread: the gap no wider than the spread
    assert groups_of([1.0, 1.0, 3.0]) is None and groups_of([]) is None  # too few for two groups of two


# --- compile time: the median of several compiles a process --------------------------------------------------------


def test_a_workload_compiled_several_times_keeps_each_and_its_median_and_times_its_calls_as_before(tmp_path):
    import jax.numpy as jnp

    from jaxmlp.measure import workload as w

    ticks = iter([0.0, 3.0, *range(10, 20), 30.0, 31.0, 40.0, 42.0])  # compile 3 s, 5 calls of 1 s, then 1 s, 2 s
    made = w.Workload("sin", lambda x: jnp.sin(x), (jnp.ones(8),))
    times = w.measure(made, 5, clock=lambda: float(next(ticks)), compiles=3)
    assert times.compiles_seconds == (3.0, 1.0, 2.0) and times.compile_seconds == 2.0 and times.compiles == 3
    assert times.first_seconds == 1.0 and times.call_seconds == (1.0,) * 4
    assert WorkloadTimes.from_json(times.to_json()) == times
    once = {k: v for k, v in times.to_json().items() if k != "compiles_seconds"}  # written before schema 8
    assert WorkloadTimes.from_json(once).compiles == 1


# --- peak memory: each process's own, a timeline column, a corpus metric -------------------------------------------


def _process(release, seconds, peak, why=None):
    meta = {"jax": release, "jaxlib": release, "host": "here", "peak_rss_bytes": peak, "compiles": 1}
    if why:
        meta["peak_rss_why"] = why
    return ProcessResult(meta, {"product.step": WorkloadTimes.of(0.1, [2 * seconds, seconds, seconds])})


def _timeline(folder, peaks):
    """A timeline folder of one cell a release: 7 processes each, 1% noise in time, 0.5% in peak memory."""
    rng = np.random.default_rng(5)
    folder.mkdir(parents=True)
    for release, peak in peaks.items():
        processes = tuple(
            _process(release, float(np.exp(rng.normal(0, 0.01))), int(peak * np.exp(rng.normal(0, 0.005))))
            for _ in range(7)
        )
        doc = SweepDocument(release, processes, "2026-12-07T00:00:00")
        (folder / f"jax-{release}.json").write_text(json.dumps(doc.to_json()))


def test_each_processs_own_peak_is_a_row_and_one_that_may_not_be_its_own_is_none():
    own = SweepDocument("0.5.0", (_process("0.5.0", 1.0, 2**30), _process("0.5.0", 1.0, 2**30 + 2**20)), "t")
    (row,) = [r for r in own.benchmark_rows() if r.name == registry.SWEEP_PEAK_RSS.name("product.step")]
    assert row.stats.data == (2**30, 2**30 + 2**20) and row.group == "sweep: peak memory"
    inherited = SweepDocument("0.5.0", (_process("0.5.0", 1.0, 2**30, "getrusage's"),) * 2, "t")
    assert not [r for r in inherited.benchmark_rows() if r.name.startswith(registry.SWEEP_PEAK_RSS.id)]


def test_a_schema_7_cell_gets_its_peak_memory_row_from_its_processes():
    doc = SweepDocument("0.5.0", (_process("0.5.0", 1.0, 2**30),) * 2, "t").to_json()
    older = json.loads(json.dumps(doc))
    older["benchmarks"] = [b for b in older["benchmarks"] if not b["name"].startswith(registry.SWEEP_PEAK_RSS.id)]
    older["schema_version"] = older["machine_info"]["jaxmlp"]["schema_version"] = 7
    kind, current = upgrade(older)
    assert kind == "sweep" and registry.SWEEP_PEAK_RSS.name("product.step") in [
        b["name"] for b in current["benchmarks"]
    ]
    assert parse(current).is_sweep


def test_a_memory_regression_is_a_timeline_change_the_corpus_scores(tmp_path):
    _timeline(tmp_path / "timeline-20261207T000000", {"0.4.30": 2**30, "0.4.31": 2**30, "0.4.33": 1.5 * 2**30})
    found = case_found(tmp_path)
    (memory,) = found.memory_columns
    assert memory.benchmark == registry.SWEEP_PEAK_RSS.id
    assert [(c.at, c.direction) for c in memory.changes] == [("0.4.33", "slower")]
    assert not found.columns[0].changes  # its time did not change
    assert "0.4.33 larger than 0.4.31 and before, ×1.50" in column_said(memory)
    (case,) = read_manifest(MANIFEST, ("fixture-step",))
    case = replace(
        case,
        bisect=None,
        metric="memory",
        kind="memory",
        releases=("0.4.30", "0.4.31", "0.4.33"),
        expect=replace(case.expect, release="0.4.33", ratio=(1.3, 1.7), cause="unknown", flag=""),
    )
    scored = score(case, found)
    assert (scored.found, scored.in_band) == (True, True) and 1.45 < scored.ratio < 1.55
    assert scored.flagged[0].startswith("peak memory: 0.4.33 larger than 0.4.31 and before, ×1.5")
    assert score(replace(case, metric="run"), found).found is False  # a change of memory is not one of time


def test_a_memory_columns_table_is_in_sizes(tmp_path):
    from jaxmlp.report.sweep_sections import timeline_rows

    _timeline(tmp_path / "timeline-20261207T000000", {"0.4.30": 2**30, "0.4.31": 2**30, "0.4.33": 1.5 * 2**30})
    (memory,) = case_found(tmp_path).memory_columns
    table = timeline_rows(memory)
    assert table["median"].str.contains(" [MG]iB$").all() and table["IQR"].str.contains("iB to").all()
