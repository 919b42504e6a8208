"""Each workload against this machine's FLOP rate and memory bandwidth (``jaxmlp roofline``), kept with a figure."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

from jaxmlp.errors import Interrupted
from jaxmlp.flows import Filed
from jaxmlp.measure import ceilings as measured_ceilings
from jaxmlp.measure.environment import metadata, select_device
from jaxmlp.measure.programs import HLO_TEXT
from jaxmlp.measure.sweep.settings import Measuring, is_builtin
from jaxmlp.measure.sweep.worker import measure_process
from jaxmlp.measure.train import check_batch_size
from jaxmlp.measure.workload import BATCH_SIZE, load_make
from jaxmlp.report.display import readable
from jaxmlp.report.plots import roofline_png
from jaxmlp.report.text import text_table
from jaxmlp.results.schema.roofline import CeilingsDocument, RooflineDocument, ceilings_key
from jaxmlp.results.store import layout
from jaxmlp.results.store.writing import ResultsStore, check_folder, write_new
from jaxmlp.results.tables import points
from jaxmlp.units import flop_rate, size


def kept_ceilings(store: ResultsStore, environment: dict[str, Any]) -> tuple[Path, CeilingsDocument] | None:
    """The newest ceilings kept in ``store`` for this environment; an unreadable one is named in a warning line."""
    if not store.folder.is_dir():
        return None
    scan = store.scan()
    for skipped in scan.skipped:
        if skipped.path.name.startswith(f"{layout.CEILINGS}-"):
            print(f"{skipped.line('jaxmlp roofline')}; its ceilings are measured again", file=sys.stderr)
    found = [(p, d) for p, d in scan.of(CeilingsDocument) if ceilings_key(d.metadata) == environment]
    return max(found, key=lambda item: layout.stamp_in(item[0])) if found else None


def measure(*, measuring: Measuring, out: Path, remeasure_ceilings: bool = False) -> Filed:
    """This environment's ceilings (kept in ``out`` from an earlier call unless ``remeasure_ceilings``), then each of
    ``measuring``'s workloads on the roofline; the points and their figure filed under ``out`` and printed."""
    for spec in measuring.specs:  # before any work: the workloads named, in their files, and the built-ins' data
        if not is_builtin(spec):
            load_make(spec)
    if measuring.limit is not None and any(is_builtin(spec) for spec in measuring.specs):
        check_batch_size(BATCH_SIZE, measuring.limit, fixed=True)
    store = ResultsStore(check_folder(out, "--out"))
    device = select_device(measuring.backend)  # a TPU held by another program: one line, never the CPU's numbers
    measuring = dataclasses.replace(measuring, backend=device.platform)  # the workloads on the ceilings' device
    meta = {**metadata(device), "backend": device.platform}
    kept = None if remeasure_ceilings else kept_ceilings(store, ceilings_key(meta))
    if kept is None:
        print("Measuring this environment's ceilings (matmuls of 1024³ to 3072³, STREAM over 128 MiB arrays)")
        ceilings = CeilingsDocument(meta, measured_ceilings.measure(device))
        path = store.save(ceilings)
        print(f"Kept them in {path}")
    else:
        path, ceilings = kept
        print(f"This environment's ceilings, kept in {path}")
    c = ceilings.ceilings
    numpy = c.get("numpy_bytes_per_second") or {}
    print(
        f"FLOP rate {flop_rate(c['flops_per_second'])} (XLA, {c['best_shape']}); bandwidth "
        f"{size(c['bytes_per_second'])}/s (XLA {c['best_kernel']}; numpy copy {size(numpy.get('copy'))}/s, triad "
        f"{size(numpy.get('triad'))}/s)"
    )
    try:
        result = measure_process(measuring)
    except KeyboardInterrupt as e:  # the ceilings, measured or kept before, stay for the next run
        stopped = e if isinstance(e, Interrupted) else Interrupted()
        stopped.kept = f"this environment's ceilings are kept in {path}; no workload's time was kept"
        raise stopped from None
    workloads = {}
    for name, times in result.workloads.items():
        program = {k: v for k, v in (times.program or {}).items() if k != HLO_TEXT}
        workloads[name] = {**program, "steady_seconds": times.steady_seconds}
    settings = {**dataclasses.asdict(measuring), "workloads": list(measuring.names)}
    doc = RooflineDocument(meta, c, str(path), points(workloads, c), settings)
    saved = store.save(doc)
    figure = write_new(saved.with_suffix(".png"), roofline_png(doc))
    print(f"\n{text_table(readable(roofline_table(doc), {'attainable_seconds': 's', 'measured_seconds': 's'}))}")
    for name, p in doc.points.items():
        if p.get("note"):
            print(f"{name}: {p['note']}")
    print(f"\nWrote {saved} and {figure}")
    return Filed(saved)


def roofline_table(doc: RooflineDocument) -> Any:
    """A row a workload: its intensity, the ceiling that binds (or why none), attainable and measured time."""
    import pandas as pd

    shown = ("attainable_seconds", "measured_seconds", "x_attainable")
    return pd.DataFrame(
        [
            {"workload": name, "intensity": p.get("intensity"), "binds": p.get("binds", p.get("why"))}
            | {k: p.get(k) for k in shown}
            for name, p in doc.points.items()
        ]
    )
