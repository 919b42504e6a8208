"""jaxmlp.measure.nvidia: the GPU's driver, CUDA, clocks and power limit every GPU result records, read from
``nvidia-smi -q`` (a fixture of its text here: this machine has no GPU), and why none off a GPU."""

from pathlib import Path

import jax

from jaxmlp.measure import environment, nvidia

FIXTURE = Path(__file__).parent / "fixtures" / "nvidia" / "nvidia-smi-q.txt"


def test_the_first_gpus_driver_clocks_and_power_limit_are_read():
    assert nvidia.parse(FIXTURE.read_text()) == {
        "gpu_driver": "580.95.05",
        "gpu_driver_cuda": "13.0",
        "gpu_name": "NVIDIA H200",  # the first GPU's, not the second's
        "gpu_power_draw_w": 75.32,
        "gpu_power_limit_w": 700.0,
        "gpu_power_max_limit_w": 700.0,
        "gpu_sm_clock_mhz": 345.0,
        "gpu_memory_clock_mhz": 3201.0,
        "gpu_application_clock_mhz": 1980.0,
        "gpu_sm_clock_max_mhz": 1980.0,  # the first GPU's (the second's: 1755)
        "gpu_memory_clock_max_mhz": 3201.0,
    }


def test_off_a_gpu_the_metadata_says_why_there_are_no_gpu_facts():
    meta = environment.metadata(jax.devices("cpu")[0])
    assert meta["gpu_facts_why"].startswith("not a GPU run (backend cpu)")
    assert not any(key.startswith("gpu_driver") for key in meta)


def test_a_gpu_whose_nvidia_smi_cannot_run_says_so_in_one_line(monkeypatch):
    monkeypatch.setattr(nvidia, "QUERY", ("/nonexistent/nvidia-smi", "-q"))
    facts = nvidia.gpu_facts.__wrapped__("gpu")
    assert set(facts) == {"jax_cuda_plugin", "gpu_facts_why"} and facts["jax_cuda_plugin"] is None
    assert facts["gpu_facts_why"].startswith("nvidia-smi could not run (") and "\n" not in facts["gpu_facts_why"]
