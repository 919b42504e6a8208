"""What a GPU result records of its GPU beyond JAX's device, from one ``nvidia-smi -q`` a process."""

from __future__ import annotations

import functools
import subprocess
from importlib import metadata as _importlib_metadata
from typing import Any

QUERY = ("nvidia-smi", "-q")
TIMEOUT_SECONDS = 10
PLUGINS = ("jax-cuda13-plugin", "jax-cuda12-plugin", "jax-cuda13-pjrt", "jax-cuda12-pjrt")
"""JAX's CUDA packages, newest CUDA first: the plugin and its PJRT runtime."""

FIELDS = {
    ("", "Driver Version"): "gpu_driver",
    ("", "CUDA Version"): "gpu_driver_cuda",
    ("GPU", "Product Name"): "gpu_name",
    ("Clocks", "SM"): "gpu_sm_clock_mhz",
    ("Clocks", "Memory"): "gpu_memory_clock_mhz",
    ("Max Clocks", "SM"): "gpu_sm_clock_max_mhz",
    ("Max Clocks", "Memory"): "gpu_memory_clock_max_mhz",
    ("Applications Clocks", "Graphics"): "gpu_application_clock_mhz",
    ("Power Readings", "Power Limit"): "gpu_power_limit_w",
    ("Power Readings", "Current Power Limit"): "gpu_power_limit_w",
    ("Power Readings", "Max Power Limit"): "gpu_power_max_limit_w",
    ("Power Readings", "Power Draw"): "gpu_power_draw_w",
}
"""The (section, key) of ``nvidia-smi -q`` each recorded field is read from; numbers in MHz and W."""


def parse(text: str) -> dict[str, Any]:
    """The `FIELDS` of the first GPU in ``nvidia-smi -q``'s text, numbers as floats, ``N/A`` left out."""
    found: dict[str, Any] = {}
    gpus, section = 0, ""
    for line in text.splitlines():
        indent = len(line) - len(line.lstrip())
        if indent == 0 and line.startswith("GPU "):  # "GPU 00000000:19:00.0": a GPU's block begins
            gpus += 1
            if gpus > 1:
                break  # the first GPU's: the device a run measures is jax.devices("gpu")[0]
            continue
        key, _, value = (part.strip() for part in line.partition(":"))
        if not key:
            continue
        if not value:
            if indent == 4:  # a section's heading ("    Clocks")
                section = key.removeprefix("GPU ") if key.endswith("Power Readings") else key
            continue
        where = {0: "", 4: "GPU", 8: section}.get(indent)
        name = FIELDS.get((where, key)) if where is not None and (indent == 0 or gpus == 1) else None
        if name is None or name in found or value.strip("[]") == "N/A":
            continue
        if name.endswith(("_mhz", "_w")):
            try:
                found[name] = float(value.split()[0])
            except ValueError:
                continue
        else:
            found[name] = value
    return found


def plugin() -> str | None:
    """JAX's CUDA plugin installed here, as ``name version`` (``jax-cuda13-plugin 0.11.2``), or None."""
    for name in PLUGINS:
        try:
            return f"{name} {_importlib_metadata.version(name)}"
        except _importlib_metadata.PackageNotFoundError:
            continue
    return None


@functools.cache
def gpu_facts(platform: str) -> dict[str, Any]:
    """What a result on ``platform`` (a JAX backend) records of its GPU: `FIELDS` and ``jax_cuda_plugin`` on a GPU;
    elsewhere, or where ``nvidia-smi`` does not answer within `TIMEOUT_SECONDS`, ``gpu_facts_why`` in one line."""
    if platform != "gpu":
        return {"gpu_facts_why": f"not a GPU run (backend {platform}): no driver, clocks or power limit to record"}
    facts: dict[str, Any] = {"jax_cuda_plugin": plugin()}
    try:
        done = subprocess.run(QUERY, capture_output=True, text=True, timeout=TIMEOUT_SECONDS, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        said = "did not answer within 10 s" if isinstance(e, subprocess.TimeoutExpired) else f"could not run ({e})"
        return {**facts, "gpu_facts_why": f"nvidia-smi {said}: the driver, clocks and power limit are not recorded"}
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[0]
        return {**facts, "gpu_facts_why": f"nvidia-smi -q failed ({said}): the driver, clocks and power limit unknown"}
    return {**facts, **parse(done.stdout)}
