"""Which device runs the computation, and the metadata every result carries."""

from __future__ import annotations

import datetime as _dt
import functools
import os
import platform
import subprocess
from importlib import metadata as _importlib_metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jaxmlp import errors, registry
from jaxmlp.errors import JaxmlpError
from jaxmlp.measure import nvidia
from jaxmlp.registry import ACCELERATOR_NEEDS, BACKENDS

if TYPE_CHECKING:
    import jax


def select_device(backend: str | None) -> jax.Device:
    """This process's first device of ``backend``, or of JAX's default backend when None."""
    import jax

    from jaxmlp import compat

    errors.one_of("backend", backend, BACKENDS)
    try:
        device = jax.local_devices(backend=backend)[0]
    except RuntimeError as e:
        _refuse_a_held_tpu(str(e))
        if backend is not None and backend in ACCELERATOR_NEEDS:
            raise JaxmlpError(absent_accelerator(backend, sorted({d.platform for d in jax.devices()}))) from None
        raise
    if device.platform == "cpu" and backend != "cpu":  # JAX went on without an accelerator that failed to start
        _refuse_a_held_tpu(compat.backend_errors().get("tpu", ""))
    return device


def _refuse_a_held_tpu(message: str) -> None:
    from jaxmlp import compat

    if held := compat.tpu_held(message):
        raise JaxmlpError(held)


def absent_accelerator(backend: str, seen: list[str]) -> str:
    """The one line that refuses ``--backend gpu``/``tpu`` where JAX sees none (``seen``: the platforms it sees)."""
    import jax

    return (
        f"--backend {backend} was asked for, but JAX sees no {backend.upper()} (JAX {jax.__version__} devices: "
        f"{', '.join(seen)}); {ACCELERATOR_NEEDS[backend]}, or use --backend cpu"
    )


def package_version(name: str) -> str | None:
    try:
        return _importlib_metadata.version(name)
    except _importlib_metadata.PackageNotFoundError:
        return None


@functools.cache
def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


@functools.cache
def git_commit() -> str | None:
    """The jaxmlp checkout's commit (``+dirty`` where changed), else ``$JAXMLP_COMMIT`` (set by a copy of its files)."""
    here = Path(__file__).resolve().parent
    if not (here.parent / ".git").exists() and os.environ.get("JAXMLP_COMMIT"):
        return os.environ["JAXMLP_COMMIT"]
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=5, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=here,
            capture_output=True,
            text=True,
            timeout=5,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return commit + ("+dirty" if dirty else "")


MACHINE_NAME = "JAXMLP_MACHINE_NAME"
"""The variable that names this machine in every result (its host name, say): unset, no name is recorded."""


def machine_name() -> str | None:
    """The name the user gives this machine (`MACHINE_NAME`), else None: a host name is never recorded unasked."""
    return os.environ.get(MACHINE_NAME) or None


def machine_facts() -> dict[str, Any]:
    """This machine as every result records it: CPU model, usable cores, `MACHINE_NAME` (None: unset), accelerator."""
    import jax

    device = jax.devices()[0]  # the default backend's: the accelerator this host has, else its CPU
    accelerator = device.platform != "cpu"
    return {
        **_host(),
        "machine_backend": device.platform,
        "machine_device": device.device_kind if accelerator else None,
    }


def _host() -> dict[str, Any]:
    """The machine's fields that need no JAX (`machine_facts` adds its accelerator)."""
    return {
        "machine_cpu": cpu_model(),
        "machine_cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "machine_name": machine_name(),
    }


def metadata(device: jax.Device | None = None) -> dict[str, Any]:
    """Versions, machine, device and flags: what makes two numbers comparable."""
    meta = {
        "timestamp": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        registry.HOST: machine_name(),  # the host name only where the user gives it
        "python": platform.python_version(),
        "jax": package_version("jax"),
        "jaxlib": package_version("jaxlib"),
        "numpy": package_version("numpy"),
        "torch": package_version("torch"),
        "torchvision": package_version("torchvision"),
        "jaxmlp": package_version("jaxmlp"),
        "commit": git_commit(),
        registry.CPU_MODEL: cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpu_affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
        "jax_platforms": os.environ.get("JAX_PLATFORMS", ""),
        # float32 matmuls' precision as the variable sets it (with a device: as JAX's config has it)
        "jax_default_matmul_precision": os.environ.get("JAX_DEFAULT_MATMUL_PRECISION") or "default",
        **_host(),
    }
    if device is not None:
        import jax

        meta.update(
            backend=device.platform,
            device_kind=device.device_kind,
            device=str(device),
            # jax's Config gets its flags as attributes at runtime: its stubs lack them, hence the ignores
            jax_enable_x64=bool(jax.config.jax_enable_x64),  # type: ignore[attr-defined]
            # "default" lets a GPU use TF32 for float32 matmuls; "highest" is float32 throughout
            jax_default_matmul_precision=str(jax.config.jax_default_matmul_precision or "default"),  # type: ignore[attr-defined]
            compilation_cache_dir=jax.config.jax_compilation_cache_dir or "",  # type: ignore[attr-defined]
        )
        meta.update(machine_facts())
        meta.update(nvidia.gpu_facts(device.platform))  # a GPU's driver, clocks, power limit; elsewhere why none
    return meta
