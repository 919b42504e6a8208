"""`jaxmlp sweep explain`'s operation times over a `while_loop` in real releases, and the explanations the sweep,
the timeline and the bisection make of a user's own workload (a file path and a module spec)."""

import json
import shutil
import sys
import time
from dataclasses import replace
from pathlib import Path

import jax
import numpy as np
import pytest

from jaxmlp.cli import main
from jaxmlp.errors import JaxmlpError
from jaxmlp.flows import explain as sweep_explain
from jaxmlp.measure.environments import envs
from jaxmlp.measure.records import ProcessResult, WorkloadTimes
from jaxmlp.measure.sweep import matrix
from jaxmlp.measure.sweep.settings import Matrix, Measuring
from jaxmlp.report.explain import answer_line
from jaxmlp.results.schema import parse
from jaxmlp.results.schema.explain import ExplainDocument
from jaxmlp.results.sweep import explain_files
from jaxmlp.results.sweep.explain import explanation
from jaxmlp.results.sweep.explain_files import (
    explain as real_explain,  # before tests/conftest.py's `explained` stands in
)

WHILE_LOOP = Path(__file__).parent / "workloads" / "while_loop.py"
LOOPED = "0.7.0"
"""A release whose profiler, started without options, traces at host tracer level 1: no operations in its trace."""


# --- operation times in two real releases -------------------------------------------------------------------------


MAKE_SECONDS = 240
"""The longest a step of making the release's environment may take in a test: made fresh (no pip cache) it took 57 s
and 600 MB on a 2-core machine; made once a machine, it is reused after."""


def release_python(version: str, monkeypatch) -> str:
    """``version``'s environment, made here once (jax's and jaxlib's wheels from the package index); a skip that
    says why where it cannot be made in `MAKE_SECONDS` a step."""
    monkeypatch.setattr(envs, "MAKE_SECONDS", MAKE_SECONDS)
    start = time.monotonic()
    try:
        python = envs.make_env(version, log=lambda line: None)
    except JaxmlpError as e:
        pytest.skip(f"jax {version}'s environment could not be made here: {e}")
    print(f"jax {version}'s environment ready in {time.monotonic() - start:.1f} s")
    return str(python)


@pytest.mark.xdist_group("processes")
def test_a_while_loop_is_timed_by_operation_in_two_releases(tmp_path, monkeypatch):
    now = jax.__version__
    matrix = Matrix(processes=1, hand_made={LOOPED: release_python(LOOPED, monkeypatch), now: sys.executable})
    spec = f"{WHILE_LOOP}:make"
    doc, folder = real_explain(Measuring(calls=3), LOOPED, now, spec, tmp_path, matrix, say=lambda line: None)
    assert doc.settings["jax"] == {LOOPED: LOOPED, now: now} and not doc.notes
    for side in ("name_a", "name_b"):  # the loop, and the operations of its body inside it, on both sides
        names = [getattr(o, side) for o in doc.op_times if getattr(o, side)]
        assert any(n.startswith("while") for n in names), names
        assert any(n.startswith("dot") for n in names) and any("tanh" in n for n in names), names
    assert isinstance(parse(json.loads((folder / "explain.json").read_text())), ExplainDocument)


def test_a_trace_without_operations_is_described_by_what_it_holds():
    import pandas as pd

    from jaxmlp import hlo
    from jaxmlp.results.sweep.explain import op_seconds

    text = (
        "HloModule m\n\nENTRY %main (p: f32[4]) -> f32[4] {\n  %p = f32[4]{0} parameter(0)\n"
        "  ROOT %n = f32[4]{0} negate(%p)\n}\n"
    )
    columns = ["plane", "line", "name", "start_ns", "duration_ns", "step_num"]
    runtime = [("/host:CPU", "tf_XLAPjRtCpuClient/1", "H2D Dispatch", 0, 10, None)] * 3
    caller = [("/host:CPU", "python", "PjitFunction(f)", 0, 50, None)]
    events = {
        "A": pd.DataFrame(runtime + caller, columns=columns),
        "B": pd.DataFrame([*caller, ("/host:CPU", "python", "n", 0, 20, None)], columns=columns),
    }
    program = {"hlo_fingerprint": hlo.fingerprint(text), "operations": {"negate": 1}}
    processes = {
        label: [ProcessResult({"jax": label}, {"w": WorkloadTimes(0.1, 1.0, (1.0, 1.0), 1.0, None, program)})]
        for label in "AB"
    }
    doc = explanation("w", "A", "B", processes, {"A": text, "B": text}, events, 1, {}, {})
    assert doc.notes == (
        "A: no operation times: no event of its trace names an instruction of its optimized HLO; "
        "the trace holds 4 events on 2 lines: /host:CPU tf_XLAPjRtCpuClient/1: 3 (H2D Dispatch x3); "
        "/host:CPU python: 1 (PjitFunction(f) x1)",
    )
    assert doc.same_instructions is True and ExplainDocument.from_json(doc.to_json()) == doc
    other = explanation("w", "A", "B", processes, {"A": text, "B": text.replace("negate", "abs")}, events, 1, {}, {})
    assert other.same_instructions is False
    moved = replace(doc, fingerprints={"A": "a", "B": "b"})  # the HLO's text differs, its instructions do not
    assert "(fingerprint a -> b; the same instructions, only reordered, renamed or annotated" in answer_line(moved)
    assert "; the same instructions" not in answer_line(replace(moved, same_instructions=False))
    # an operation XLA ran on the caller's thread is found there
    assert list(op_seconds(events["B"], hlo.canonical_names(text), 1).values()) == [("n", 2e-8)]


# --- the automatic explanations of a user's workload --------------------------------------------------------------


RELEASES = ("0.4.30", "0.4.31", "0.4.33", "0.4.34", "0.4.35", "0.4.36")
CHANGED = "0.4.34"


def user_workload(tmp_path: Path, form: str, monkeypatch) -> str:
    """The while_loop workload as a user names it from the folder they work in: ``mine.py:make`` or
    ``userpkg.mine:make`` (both carry the name ``mine``)."""
    monkeypatch.chdir(tmp_path)
    if form == "file":
        shutil.copy(WHILE_LOOP, tmp_path / "mine.py")
        return "mine.py:make"
    (tmp_path / "userpkg").mkdir()
    (tmp_path / "userpkg" / "__init__.py").write_text("")
    shutil.copy(WHILE_LOOP, tmp_path / "userpkg" / "mine.py")
    return "userpkg.mine:make"


def fake_releases(root: Path, monkeypatch) -> None:
    """Each release's environment as made (this interpreter, behind a script), and the sweep's own workers replaced
    by results: ``CHANGED`` and later 30% slower. The explanations' workers stay real processes."""
    for version in RELEASES:
        python = envs.python_of(envs.env_path(version, root))
        python.parent.mkdir(parents=True)
        python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
        python.chmod(0o755)
        (python.parents[1] / envs.COMPLETE).write_text("1.0\n")
    rng = np.random.default_rng(3)

    def run_worker(runner, pythonpath=None, timeout=None):
        value = (1.3 if RELEASES.index(runner.label) >= RELEASES.index(CHANGED) else 1.0) * np.exp(rng.normal(0, 0.01))
        meta = {
            "jax": runner.label,
            "jaxlib": runner.label,
            "injected_slowdown": 0.0,
            "host": "here",
            "workload_source": ",".join(runner.measuring.workloads),
        }
        return ProcessResult(meta, {runner.measuring.names[0]: WorkloadTimes.of(0.1, [2 * value, value])})

    monkeypatch.setattr(matrix, "run_worker", run_worker)


def command(which: str, spec: str, root: Path, out: Path) -> list[str]:
    common = ["--workload", spec, "--calls", "3", "--envs", str(root), "--out", str(out)]
    if which == "run":
        return ["sweep", "run", "0.4.33", CHANGED, "--processes", "6", *common]
    if which == "timeline":
        return ["sweep", "timeline", RELEASES[0], RELEASES[-1], "--versions", *RELEASES, "--processes", "8", *common]
    return ["sweep", "bisect", RELEASES[0], RELEASES[-1], "--versions", *RELEASES, "--processes", "8", *common]


@pytest.mark.parametrize("form", ["file", "module"])
@pytest.mark.parametrize("which", ["run", "timeline", "bisect"])
def test_each_automatic_explanation_is_given_the_users_workload(which, form, tmp_path, monkeypatch, capsys, explained):
    (tmp_path / "work").mkdir()
    spec = user_workload(tmp_path / "work", form, monkeypatch)
    fake_releases(tmp_path / "envs", monkeypatch)
    slower = 3  # a sweep and a timeline that find a release slower exit 3 (errors.gate); a bisection that found it, 0
    assert main(command(which, spec, tmp_path / "envs", tmp_path / "out")) == (0 if which == "bisect" else slower)
    printed = capsys.readouterr().out
    before = RELEASES[RELEASES.index(CHANGED) - 1]
    assert explained == [(before, CHANGED, spec)], printed[-2000:]  # the spec its processes import, not the name "mine"


@pytest.mark.xdist_group("processes")
def test_an_automatic_explanation_of_a_users_module_runs_it(tmp_path, monkeypatch, capsys):
    """A sweep's explanation of ``userpkg.mine:make``, for real: its processes import the module from the folder the
    user works in (a file's path is made absolute for them; the real-release test above runs a file)."""
    (tmp_path / "work").mkdir()
    spec = user_workload(tmp_path / "work", "module", monkeypatch)
    fake_releases(tmp_path / "envs", monkeypatch)
    monkeypatch.setattr(explain_files, "explain", real_explain)  # the real explanation: real processes
    monkeypatch.setattr(sweep_explain, "EXPLAIN_PROCESSES", 1)  # one a release: the workload reaching them is the point
    assert main(command("run", spec, tmp_path / "envs", tmp_path / "out")) == 3  # the release found slower
    printed = capsys.readouterr().out
    assert "could not explain it" not in printed
    (folder,) = (tmp_path / "out").iterdir()
    (explained_in,) = folder.glob("explain-*")
    doc = parse(json.loads((explained_in / "explain.json").read_text()))
    assert isinstance(doc, ExplainDocument) and doc.workload == "mine" and doc.settings["workloads"] == [spec]
    assert doc.same_hlo is True and any(o.name_a and o.name_a.startswith("while") for o in doc.op_times)
    assert f"mine, {RELEASES[RELEASES.index(CHANGED) - 1]} -> {CHANGED}: same optimized HLO" in printed
