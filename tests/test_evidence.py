"""Which runs answer: one machine per host, whatever each file measured, and each answer from its machine's newest
environment merged across its runs, every figure citing its run (docs/methods/which-run-answers.md). The fixtures
replay the accelerator check on a TPU v5e host: its two calls, then a third narrowed by --pipelines."""

import json
import shutil
from pathlib import Path

import pytest

from jaxmlp.cli import main
from jaxmlp.measure import environment
from jaxmlp.results.findings import findings
from jaxmlp.results.schema.machines import machine
from jaxmlp.results.store.frames import load
from jaxmlp.results.store.writing import ResultsStore

THREE_CALLS = Path(__file__).parent / "fixtures" / "three-calls"
FIRST, SECOND, THIRD = (
    "bench-20261206T012031-tpu.json",  # --modules floor,epoch
    "bench-20261206T013102-tpu.json",  # --modules update,predict,loader: host-only loader rows
    "bench-20261206T013544-tpu.json",  # --modules epoch --pipelines seed,seed_batched,scan,pallas --only bench,profile
)
TPU = "TPU v5 lite (host: 13 cores)"
LOADERS, FLOOR = "Which loader, how many workers", "How far from the floor"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    out = tmp_path / "reports"
    shutil.copytree(THREE_CALLS, out)
    return out


def _answers(folder: Path, question: str) -> list:
    return [f for f in findings(load(ResultsStore(folder)), (), folder) if f.question == question]


def _copy(folder: Path, source: str, name: str, stamp: str, **metadata: object) -> None:
    """A copy of a call's file under a newer name and time, its metadata changed as given."""
    doc = json.loads((folder / source).read_text())
    doc["datetime"] = stamp
    doc["machine_info"]["jaxmlp"].update(metadata)
    (folder / name).write_text(json.dumps(doc))


def test_the_three_calls_answer_from_the_run_that_measured_each_figure(folder, capsys):
    results = load(ResultsStore(folder))
    assert {machine(row) for _, row in results.runs.iterrows()} == {TPU}  # the loader rows too: one host, one machine
    every = findings(results, (), folder)
    (loaders,) = [f for f in every if f.question == LOADERS]
    assert loaders.machine == TPU
    assert loaders.answer.startswith("The fastest training epoch fed by a loader is batched")
    assert loaders.answer.split(";")[0].endswith(f"[{FIRST}]")  # the first call timed it, not the narrow third
    (floor,) = [f for f in every if f.question == FLOOR]
    assert "bf16: the fastest pipeline" in floor.answer and "the bf16 floor" in floor.answer  # the first call's GEMMs
    (history,) = [f for f in every if f.question == "Changes across runs"]
    assert history.machine == TPU
    assert main(["summary", str(folder)]) == 0
    out = capsys.readouterr().out
    assert f"{LOADERS} ({TPU}): The fastest training epoch fed by a loader is batched" in out
    assert "a CPU, 13 cores" not in out and "older environment" not in out  # one host, one environment


def test_a_figure_from_another_machine_never_enters_an_answer(folder):
    other = "bench-20261206T020000-tpu.json"  # a newer run on another TPU host: the scan epoch alone, f32 only
    _copy(
        folder,
        THIRD,
        other,
        "2026-12-06T02:00:00+00:00",
        cpu_affinity=24,
        devices={"tpu": {"backend": "tpu", "device_kind": "TPU v6 lite", "cpu_affinity": 24}},
    )
    doc = json.loads((folder / other).read_text())
    first = json.loads((folder / FIRST).read_text())
    gemms = [b for b in first["benchmarks"] if b["name"].startswith("test_gemm[tpu-xla-f32")]
    doc["benchmarks"] = [b for b in doc["benchmarks"] if "scan" in b["name"]] + gemms
    (folder / other).write_text(json.dumps(doc))
    (loaders,) = _answers(folder, LOADERS)  # the other machine has no loader to answer with: this machine answers
    assert loaders.machine == TPU and other not in loaders.run and other not in loaders.answer
    assert loaders.answer.startswith("The fastest training epoch fed by a loader is batched")
    (floor,) = _answers(folder, FLOOR)  # the newer machine answers, from its own rows alone
    assert floor.machine == "TPU v6 lite (host: 24 cores)" and floor.run.startswith(other)
    assert "bf16" not in floor.answer and FIRST not in floor.run  # the first machine's bf16 floor never enters


def test_a_figure_the_newest_environment_lacks_comes_from_an_older_one_and_says_so(folder):
    newer = "bench-20261206T020000-tpu.json"  # the third call again at a newer commit: a newer environment
    _copy(folder, THIRD, newer, "2026-12-06T02:00:00+00:00", commit="9abc0de")
    (loaders,) = _answers(folder, LOADERS)
    assert loaders.answer.startswith("The fastest training epoch fed by a loader is batched")
    assert "from an older environment (jax 0.10.2, jaxlib 0.10.2, commit 5fd1f16):" in loaders.answer
    assert f"[{newer}]" in loaders.answer  # seed_batched, 2 workers: the newest environment's row
    assert THIRD not in loaders.answer  # the older environment's own seed_batched row: replaced, never cited


def test_a_run_with_an_xla_flag_never_passes_for_a_plain_one(folder):
    flagged = "bench-20261206T020000-tpu.json"  # the third call again, newer, same commit, with an XLA flag set
    flag = "--xla_tpu_enable_latency_hiding=false"
    _copy(folder, THIRD, flagged, "2026-12-06T02:00:00+00:00", xla_flags=flag)
    (loaders,) = _answers(folder, LOADERS)
    assert flagged not in loaders.answer and "older environment" not in loaders.answer  # the plain runs answer
    only = json.loads((folder / flagged).read_text())  # now the flagged run alone measured the seed_batched epochs
    for name in (FIRST, SECOND, THIRD):
        doc = json.loads((folder / name).read_text())
        doc["benchmarks"] = [b for b in doc["benchmarks"] if "seed_batched" not in b["name"]]
        (folder / name).write_text(json.dumps(doc))
    assert any("seed_batched" in b["name"] for b in only["benchmarks"])
    (loaders,) = _answers(folder, LOADERS)
    assert f"seed_batched, 2 workers (1.19 s) [{flagged}]" in loaders.answer  # only it measured them: it fills in
    said = f"Figures from a run with other settings (jax 0.10.2, jaxlib 0.10.2, commit 5fd1f16, XLA_FLAGS {flag}): "
    assert said + flagged in loaders.answer  # and the answer says so, with its flag


def test_a_machine_is_named_only_where_the_user_asks(monkeypatch):
    monkeypatch.delenv(environment.MACHINE_NAME, raising=False)
    assert environment.metadata()["machine_name"] is None and environment.metadata()["host"] is None
    monkeypatch.setenv(environment.MACHINE_NAME, "lab-7")
    assert environment.metadata()["machine_name"] == "lab-7" == environment.metadata()["host"]


def test_a_machine_field_of_the_wrong_type_is_named_in_one_line(folder, capsys):
    doc = json.loads((folder / THIRD).read_text())
    doc["schema_version"] = doc["machine_info"]["jaxmlp"]["schema_version"] = 5
    doc["machine_info"]["jaxmlp"].update(
        machine_cpu=None, machine_cores="many", machine_backend="tpu", machine_device="TPU v5 lite", machine_name=None
    )
    (folder / THIRD).write_text(json.dumps(doc))
    assert main(["summary", str(folder / THIRD)]) == 2
    err = capsys.readouterr().err.strip()
    assert "machine_cores" in err and len(err.splitlines()) == 1
