"""Peak memory of a benchmark (`jaxmlp.measure.memory`): its own peak resident set, and the device's where kept."""

import numpy as np

from jaxmlp import registry
from jaxmlp.measure import memory

STATUS = "Name:\tpython\nVmPeak:\t  900 kB\nVmHWM:\t  2048 kB\nVmRSS:\t  1024 kB\n"


def test_the_peak_is_read_from_the_processes_status_in_bytes():
    assert memory.current_peak(STATUS) == 2048 * 1024
    assert memory.current_peak("Name:\tpython\n") is None


def test_a_benchmarks_peak_holds_what_it_allocated_and_a_reset_forgets_the_one_before():
    was_reset = memory.reset_peak()
    block = np.ones(64 * 2**20 // 8)  # 64 MiB, touched
    facts = memory.peak_facts(was_reset)
    del block
    if not was_reset:  # a system that cannot reset the peak: the process's, and the record says so
        assert facts["peak_rss_scope"] == registry.PEAK_SCOPE_PROCESS
        return
    assert facts["peak_rss_scope"] == registry.PEAK_SCOPE_BENCHMARK
    assert facts["peak_rss_bytes"] >= 64 * 2**20
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
