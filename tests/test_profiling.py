"""Profiler traces: step markers for every pipeline, summaries in pandas, and a real TensorBoard reading them."""

import gzip
import json
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from jax import random

from jaxmlp import model
from jaxmlp.cli import main
from jaxmlp.compat import compiled_facts
from jaxmlp.flows.tensorboard import tensorboard_command
from jaxmlp.measure.profiling import capture
from jaxmlp.pipelines import data
from jaxmlp.pipelines.epochs import make_epoch
from jaxmlp.registry import PIPELINE_BACKENDS, PROFILED_PIPELINES
from jaxmlp.results.store.writing import ResultsStore, new_trace_run
from jaxmlp.results.tables.traces import capture_summary, step_breakdown, trace_events

PIPELINES = [p for p in PROFILED_PIPELINES if p not in PIPELINE_BACKENDS]  # pallas, scan_cb_*: a TPU or GPU host's


def find_captures(folder):
    """Every capture under ``folder``, oldest run folder first: the results store's one walk."""
    return list(ResultsStore(folder).scan().captures)


@pytest.fixture(scope="module")
def split():
    return data.SyntheticMNIST(train=True, size=1024, transform=data.FlattenAndCast())


@pytest.fixture(scope="module")
def logdir(tmp_path_factory, split):
    """One 4-step capture per pipeline, in one TensorBoard logdir."""
    folder = tmp_path_factory.mktemp("traces")
    for pipeline in PIPELINES:
        params = model.init_network_params(model.LAYER_SIZES, random.PRNGKey(0))
        capture(
            make_epoch(pipeline, split, batch_size=128),
            params,
            steps=4,
            run_dir=lambda pipeline=pipeline: new_trace_run(folder, pipeline),
        )
    return folder


def test_every_pipeline_is_captured_with_its_steps_marked(logdir):
    runs = sorted(p.name.split("-")[0] for p in logdir.iterdir())
    assert runs == sorted(PIPELINES)
    for xplane in find_captures(logdir):
        steps = step_breakdown(trace_events(xplane))
        assert list(steps["step"]) == [0, 1, 2, 3], xplane
        assert (steps["step_ms"] > 0).all() and (steps["compute_ms"] > 0).all()
        assert (steps["load_ms"] + steps["compute_ms"] <= steps["step_ms"] + 1e-9).all()


def test_trace_summaries_name_the_top_operations(logdir):
    summary = capture_summary(find_captures(logdir)[0])
    ops = summary.top_ops
    assert len(ops) > 3 and ops["total_ms"].is_monotonic_decreasing
    assert 0 < ops["share"].sum() <= 1 + 1e-9
    assert not ops["op"].str.startswith("ThunkExecutor").any()
    assert summary.median_step_ms > 0 and summary.run.split("-")[0] in PIPELINES


def test_captures_never_share_a_folder(tmp_path, split):
    params = model.init_network_params(model.LAYER_SIZES, random.PRNGKey(0))
    epoch = make_epoch("batched", split, batch_size=512)
    first = capture(epoch, params, steps=1, run_dir=lambda: new_trace_run(tmp_path, "batched"))
    second = capture(epoch, params, steps=1, run_dir=lambda: new_trace_run(tmp_path, "batched"))  # the same second
    assert first.run_dir != second.run_dir
    assert len(find_captures(tmp_path)) == 2


def test_cost_analysis_of_the_step_matches_the_arithmetic():
    params = model.init_network_params(model.LAYER_SIZES, random.PRNGKey(0))
    x, y = np.zeros((128, 784), np.float32), np.zeros((128, 10), np.float32)
    facts = compiled_facts(model.update.lower(params, x, y).compile())
    assert facts["xla_flops"] == pytest.approx(4.11e8, rel=0.02)
    assert facts["xla_argument_bytes"] >= 4 * (669_706 + 128 * 794)  # params, images and targets
    assert facts["xla_output_bytes"] >= 4 * 669_706


def test_profile_refuses_impossible_settings(capsys):
    assert main(["profile", "--dataset", "synthetic", "--steps", "0"]) == 2
    assert "--steps must be at least 1, got 0" in capsys.readouterr().err
    assert main(["profile", "--dataset", "synthetic", "--pipeline", "torch"]) == 2
    assert "--pipeline torch: it trains in PyTorch, whose operations XLA's profiler" in capsys.readouterr().err


def test_tensorboard_needs_an_existing_folder(tmp_path, capsys):
    assert main(["tensorboard", "--logdir", str(tmp_path / "none")]) == 2
    assert "capture one with jaxmlp profile" in capsys.readouterr().err


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str):
    with urllib.request.urlopen(url, timeout=60) as response:
        body = response.read()
        if response.headers.get("Content-Encoding") == "gzip":  # the profile plugin gzips its answers
            body = gzip.decompress(body)
        return json.loads(body.decode())


@pytest.fixture(scope="module")
def tensorboard(logdir):
    """A real TensorBoard with the profile plugin, on 127.0.0.1 and a free port."""
    port = _free_port()
    server = subprocess.Popen(tensorboard_command(str(logdir), port), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}/data/plugin/profile"
    deadline = time.monotonic() + 90
    try:
        while True:
            try:
                if len(_get(f"{base}/runs")) == len(PIPELINES):
                    break
            except OSError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"TensorBoard did not list the runs: {server.stderr.read().decode()[-2000:]}")
            time.sleep(0.5)
        yield base
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_tensorboard_lists_the_run_with_its_tools_and_step_times(tensorboard, pipeline):
    (run,) = [r for r in _get(f"{tensorboard}/runs") if r.startswith(f"{pipeline}-")]
    tools = _get(f"{tensorboard}/run_tools?run={run}")
    assert "overview_page" in tools and any(t.startswith("trace_viewer") for t in tools)
    (host,) = _get(f"{tensorboard}/hosts?run={run}&tag=overview_page")
    overview = _get(f"{tensorboard}/data?run={run}&tag=overview_page&host={host['hostname']}")
    text = json.dumps(overview)
    assert "No step marker observed" not in text
    step_table = next(t for t in overview if "steptime_ms_average" in t.get("p", {}))
    assert float(step_table["p"]["steptime_ms_average"]) > 0
    assert len(step_table["rows"]) == 4  # one row per marked step


def test_logdir_layout(logdir):
    for run in logdir.iterdir():
        (xplane,) = run.glob("plugins/profile/*/*.xplane.pb")
        assert Path(xplane).stat().st_size > 0


def test_report_shows_the_trace_summaries(logdir, tmp_path, capsys):
    out = tmp_path / "report"
    assert main(["report", "--results", str(logdir), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"and {len(PIPELINES)} traces" in printed and "Where the time goes: In the newest trace (" in printed
    md, page = (out / "summary.md").read_text(), (out / "index.html").read_text()
    for pipeline in PIPELINES:  # every capture named, its detail folded below the answer
        assert f" · {pipeline}-" in md
    assert md.count("**Top operations by total time**") == len(PIPELINES) and "4 marked steps, median" in md
    assert page.count("<h3>Top operations by total time</h3>") == len(PIPELINES) and page.count("<details>") == len(
        PIPELINES
    )
    assert (out / "trace_ops.csv").read_text().startswith("op,category,count,total_ms,mean_us,share,run,file")


def test_step_breakdown_follows_the_step_marker_to_its_thread():
    """The main thread's line is named after the process ("python", "pytest", ...), so it is not assumed."""
    import pandas as pd

    events = pd.DataFrame(
        [
            ("/host:CPU", "pytest", "train", 0, 100, 0),
            ("/host:CPU", "pytest", "load", 5, 20, None),
            ("/host:CPU", "pytest", "compute", 30, 60, None),
            ("/host:CPU", "other", "load", 10, 50, None),
        ],
        columns=["plane", "line", "name", "start_ns", "duration_ns", "step_num"],
    )
    (row,) = step_breakdown(events).to_dict("records")
    assert row == {"step": 0, "step_ms": 1e-4, "load_ms": 2e-5, "compute_ms": 6e-5, "other_ms": pytest.approx(2e-5)}


def test_step_breakdown_of_steps_without_annotations_and_annotations_outside_steps():
    import pandas as pd

    columns = ["plane", "line", "name", "start_ns", "duration_ns", "step_num"]
    events = pd.DataFrame(
        [
            ("/host:CPU", "main", "load", 0, 5, None),  # before any step
            ("/host:CPU", "main", "train", 10, 100, 0),  # no annotation inside
            ("/host:CPU", "main", "load", 150, 5, None),  # between the steps
            ("/host:CPU", "main", "train", 200, 100, 1),
            ("/host:CPU", "main", "compute", 210, 40, None),
            ("/host:CPU", "main", "compute", 260, 30, None),
        ],
        columns=columns,
    )
    rows = step_breakdown(events).to_dict("records")
    assert [(r["step"], r["load_ms"], r["compute_ms"]) for r in rows] == [(0, 0.0, 0.0), (1, 0.0, 7e-5)]
    assert step_breakdown(events[events["name"] != "train"]).empty


def test_a_device_trace_names_its_operations_short_with_the_profilers_category():
    """A TPU's "XLA Ops" line names a Pallas kernel by its whole instruction and gives its category as a stat: the
    top operations name it ``run.1`` with that category, a fusion by its name and its derived kind."""
    from test_hlo import KERNEL

    from jaxmlp.results.tables.traces import top_ops

    rows = [("/device:TPU:0", "XLA Ops", KERNEL, 0, 7_000, None, "custom-call")] * 3
    rows += [("/device:TPU:0", "XLA Ops", "fusion.3", 10_000, 10, None, None)]
    events = pd.DataFrame(rows, columns=["plane", "line", "name", "start_ns", "duration_ns", "step_num", "category"])
    ops = top_ops(events)
    assert list(ops["op"]) == ["run.1", "fusion.3"] and list(ops["category"]) == ["custom-call", "fusion"]
    assert list(ops["count"]) == [3, 1]


def test_a_gpu_traces_operations_name_the_cuda_kernels_they_launched():
    """A GPU trace's stream lines hold the CUDA kernels, each naming the XLA operation that launched it (the
    ``hlo_op`` stat): the top operations name each one's kernels, the most time first, short (no ``void``, no
    argument list); a trace without kernels (a CPU's, a TPU's) has no such column. A fixture of a GPU trace's events,
    as `trace_events` reads them (none was taken on a GPU yet)."""
    from pathlib import Path

    from jaxmlp.results.tables.traces import op_kernels, top_ops

    events = pd.read_csv(Path(__file__).parent / "fixtures" / "traces" / "gpu-trace-events.csv")
    events["step_num"] = events["step_num"].astype(object).where(events["step_num"].notna(), None)
    ops = top_ops(events)
    assert list(ops["op"]) == ["cublas-gemm.1", "input_reduce_fusion.2", "loop_add_fusion"]
    assert ops.loc[0, "kernels"] == (
        "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1_ex…; "  # 80 characters
        "cublasLt::splitKreduce_kernel<32, 16, int, float, float, float, float, false, t…"
    )
    assert ops.loc[1, "kernels"] == "input_reduce_fusion_2"
    assert op_kernels(events.drop(columns=["hlo_op"])) == {}
    assert "kernels" not in top_ops(events[~events["line"].str.startswith("Stream")])
