"""Peak memory of a benchmark (`jaxmlp.measure.memory`): its own peak resident set, and the device's where kept."""

import json
import subprocess
import sys

import numpy as np
import pytest

from jaxmlp import registry
from jaxmlp.measure import memory, programs

STATUS = "Name:\tpython\nVmPeak:\t  900 kB\nVmHWM:\t  2048 kB\nVmRSS:\t  1024 kB\n"


def test_the_peak_is_read_from_the_processes_status_in_bytes():
    assert memory.current_peak(STATUS) == 2048 * 1024
    assert memory.current_peak("Name:\tpython\n") is None


def test_a_benchmarks_peak_holds_what_it_allocated_and_a_reset_forgets_the_one_before():
    size = 256 * 2**20  # 64 MiB once read the same peak before and after the reset, in a 1.6 GB xdist worker
    was_reset = memory.reset_peak()
    block = np.ones(size // 8)  # touched
    facts = memory.peak_facts(was_reset)
    del block
    if not was_reset:  # a system that cannot reset the peak: the process's, and the record says so
        assert facts["peak_rss_scope"] == registry.PEAK_SCOPE_PROCESS
        return
    assert facts["peak_rss_scope"] == registry.PEAK_SCOPE_BENCHMARK
    assert facts["peak_rss_bytes"] >= size
    assert memory.reset_peak()
    after = memory.peak_facts(True)["peak_rss_bytes"]
    assert after < facts["peak_rss_bytes"]  # the next benchmark's peak is its own


def test_the_device_peak_or_why_there_is_none():
    import jax

    facts = memory.peak_facts(False, jax.devices()[0])
    assert facts["peak_rss_bytes"] > 0 and facts["peak_rss_scope"] == registry.PEAK_SCOPE_PROCESS
    assert ("device_peak_bytes" in facts) != ("device_peak_why" in facts)
    if "device_peak_why" in facts:
        assert facts["device_peak_why"].startswith("not available on cpu")


class _Device:
    """A device whose backend keeps memory_stats() (a GPU's or TPU's), as this CPU cannot show one."""

    platform = "gpu"

    def __init__(self, peak, in_use):
        self.stats = {"peak_bytes_in_use": peak, "bytes_in_use": in_use}

    def memory_stats(self):
        return self.stats


def test_a_device_peak_is_the_benchmarks_own_only_where_it_rose_during_it():
    device = _Device(peak=100, in_use=40)
    before = memory.device_mark(device)
    device.stats = {"peak_bytes_in_use": 250, "bytes_in_use": 60}  # the benchmark raised the peak
    facts = memory.peak_facts(False, device, before)
    assert facts["device_peak_bytes"] == 250
    assert facts["device_peak_scope"] == registry.PEAK_SCOPE_BENCHMARK
    later = memory.peak_facts(False, device, memory.device_mark(device))  # the next stayed below it: unknown own
    assert later["device_peak_scope"] == registry.PEAK_SCOPE_PROCESS and later["device_peak_bytes"] == 250
    assert memory.device_mark(None) is None


PARENT = """
import json, sys
import numpy as np
from jaxmlp.measure.sweep.matrix import Runner, run_worker
from jaxmlp.measure.sweep.settings import Measuring
held = np.ones(2**30 // 8)  # 1 GiB, touched: the parent's high-water mark
check = Measuring(("step",), dataset="synthetic", limit=256, epochs=2, calls=2)
result = run_worker(Runner("here", sys.executable, check), timeout=300)
print(json.dumps({k: result.metadata.get(k) for k in ("peak_rss_bytes", "peak_rss_why")}))
"""


@pytest.mark.xdist_group("processes")
def test_a_sweep_worker_s_peak_is_its_own_not_its_parent_s():
    """A worker started by a parent that first holds 1 GiB reports its own peak (VmHWM after its exec), far below
    1 GiB; getrusage's would have been the parent's (Linux carries the high-water mark across fork and exec)."""
    done = subprocess.run([sys.executable, "-c", PARENT], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    said = json.loads(done.stdout.strip().splitlines()[-1])
    if said["peak_rss_why"]:  # no VmHWM here: the record says the peak may not be the worker's own
        assert said["peak_rss_why"] == programs.NOT_OWN
        return
    assert 0 < said["peak_rss_bytes"] < 2**29, said  # a worker with jax and a small step: a few hundred MiB at most


def test_the_own_peak_is_vmhwm_and_getrusage_only_with_a_reason(monkeypatch, tmp_path):
    assert programs.own_peak() == {"peak_rss_bytes": programs.current_peak()}
    monkeypatch.setattr(programs, "STATUS", tmp_path / "absent")
    facts = programs.own_peak()
    assert facts["peak_rss_bytes"] == programs.peak_rss_bytes() and facts["peak_rss_why"] == programs.NOT_OWN


def test_a_sweep_written_before_schema_7_says_its_peaks_may_not_be_the_workers_own():
    from jaxmlp.measure.records import ProcessResult, WorkloadTimes
    from jaxmlp.results.schema.common import CELLS, CURRENT
    from jaxmlp.results.schema.upgrade import INHERITED_PEAK, upgrade
    from jaxmlp.results.sweep import files

    process = ProcessResult(
        {"jax": "0.7.0", "python": "3.11.7", "peak_rss_bytes": 6 * 2**30}, {"step": WorkloadTimes.of(0.1, [2.0, 1.0])}
    )
    doc = files.to_document("0.7.0", [process]).to_json()
    assert doc["schema_version"] == CURRENT >= 7
    read = upgrade(doc)[1]["raw_processes"][0]["metadata"]
    assert "peak_rss_why" not in read  # written now: the worker's own
    old = {
        **doc,
        "schema_version": 6,
        "machine_info": {**doc["machine_info"], "jaxmlp": {**doc["machine_info"]["jaxmlp"], "schema_version": 6}},
    }
    read = upgrade(old)[1]["raw_processes"][0]["metadata"]
    assert read["peak_rss_why"] == INHERITED_PEAK and read["peak_rss_bytes"] == 6 * 2**30
    cells = {
        "kind": CELLS,
        "schema_version": 6,
        "cells": [{"label": "0.7.0", "xla_flags": "", "status": "ok", "file": None, "process": {"peak_rss_bytes": 1}}],
    }
    assert upgrade(cells)[1]["cells"][0]["process"]["peak_rss_why"] == INHERITED_PEAK
