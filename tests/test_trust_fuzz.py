"""Any shape a result file may take is read, or skipped in one line, never a traceback (hypothesis): track.json,
explain.json and benchmark files (crafted copies of tests/fixtures), each changed at up to three places into
hostile values, are read, published (the site, the message, the report) and summarised. A few examples each, the
same every run; ``FUZZ_N=400`` runs that many, drawn afresh."""

import contextlib
import copy
import io
import json
import os
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_trust import EXPLAIN, FIXTURE, HOSTILE_RELEASE, HOSTILE_WORKLOAD, TRACK, _json

from jaxmlp.cli import main
from jaxmlp.report.track_message import message
from jaxmlp.report.track_site import write_site
from jaxmlp.results.sweep import tracked

HOSTILE_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["", "/etc/passwd", "../../x", HOSTILE_WORKLOAD, HOSTILE_RELEASE, "\x1b[31m", "0.7.1"]),
    st.lists(st.integers(), max_size=3),
    st.just([]),
    st.just({}),
    st.just({"a": [[[[[]]]]]}),
)


def _paths(doc: object, prefix: tuple = ()) -> list[tuple]:
    """Every path into ``doc`` (keys and indexes), the shallow first; a benchmark document's first row only."""
    found = [prefix] if prefix else []
    if isinstance(doc, dict):
        for key, value in doc.items():
            if key == "benchmarks" and not prefix:
                found += _paths(value[:1], (key,))
            else:
                found += _paths(value, (*prefix, key))
    elif isinstance(doc, list):
        for i, value in enumerate(doc[:3]):
            found += _paths(value, (*prefix, i))
    return found


def _mutated(doc: dict, changes: list[tuple[int, object]]) -> dict:
    out = copy.deepcopy(doc)
    paths = _paths(out)
    for index, value in changes:
        *parents, last = paths[index % len(paths)]
        here = out
        try:
            for key in parents:
                here = here[key]
            here[last] = copy.deepcopy(value)  # never the same object twice (a circular document)
        except (KeyError, IndexError, TypeError):  # an earlier change took this path away
            pass
    return out


CHANGES = st.lists(st.tuples(st.integers(min_value=0, max_value=10_000), HOSTILE_VALUES), min_size=1, max_size=3)
FUZZ = settings(
    max_examples=int(os.environ.get("FUZZ_N", 8)),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=not os.environ.get("FUZZ_N"),
)


def _fuzzed_folder(track: dict, explain: dict) -> Path:
    tmp = Path(tempfile.mkdtemp(prefix="jaxmlp-trust-"))
    results = tmp / "results"
    shutil.copytree(FIXTURE, results)
    (results / TRACK / "track.json").write_text(json.dumps(track))
    (results / EXPLAIN / "explain.json").write_text(json.dumps(explain))
    return results


@FUZZ
@given(track_changes=CHANGES, explain_changes=CHANGES)
def test_any_track_and_explain_file_is_read_or_skipped_in_one_line_and_the_site_built(track_changes, explain_changes):
    track = _mutated(_json(FIXTURE / TRACK / "track.json"), track_changes)
    explain = _mutated(_json(FIXTURE / EXPLAIN / "explain.json"), explain_changes)
    results = _fuzzed_folder(track, explain)
    try:
        said: list[str] = []
        documents, skipped = tracked.history(results)
        assert len(documents) + len(skipped) == 1
        frame = tracked.frame_of(documents, results)
        write_site(frame, results.parent / "site", results=results, warn=said.append)
        message(frame, link_base="https://example.org/")
        assert all("\n" not in line for line in said) and len(said) <= 1
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["report", "--results", str(results), "--out", str(results.parent / "report")])
        lines = err.getvalue().splitlines()  # each file skipped in a line; nothing left: one error line, exit 2
        assert code == 0 or (code == 2 and lines[-1].startswith("jaxmlp report: error: no results")), lines
        assert all(line.startswith("jaxmlp report: warning: skipped") for line in lines[: -1 if code else None])
    finally:
        shutil.rmtree(results.parent)


@FUZZ
@given(changes=CHANGES)
def test_any_bench_file_is_summarised_or_skipped_in_one_line(changes):
    doc = _mutated(_json(Path(__file__).parent / "fixtures" / "bench-cpu.json"), changes)
    tmp = Path(tempfile.mkdtemp(prefix="jaxmlp-trust-"))
    try:
        (tmp / "bench.json").write_text(json.dumps(doc))
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["summary", str(tmp / "bench.json")])
        assert code in (0, 2), err.getvalue()
        assert code == 0 or len(err.getvalue().strip().splitlines()) == 1
    finally:
        shutil.rmtree(tmp)
