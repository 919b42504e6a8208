"""``jaxmlp roofline``: each workload against this machine's FLOP rate and memory bandwidth, kept with a figure."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Any

from jaxmlp.cli import options
from jaxmlp.errors import Interrupted
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


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Measure this machine's FLOP rate (the best of a few float32 matmuls in XLA) and memory "
        "bandwidth (STREAM-like kernels in XLA, and numpy's for comparison) once per environment, "
        "then put each workload on the roofline: arithmetic intensity from XLA's cost analysis, "
        "attainable time = max(flops / FLOP rate, bytes / bandwidth), measured / attainable and "
        "which ceiling binds."
    )
    options.add(
        parser,
        options.BACKEND,
        options.WORKLOAD,
        *options.DATA,
        *options.TIMING,
        options.OUT,
        options.own(
            "--remeasure-ceilings",
            "measure the ceilings again even where this environment's are kept",
            action="store_true",
        ),
    )


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


def checked_workloads(args: argparse.Namespace) -> Measuring:
    """Before any work: the workloads named, as built-ins or in their files, and the built-ins' data."""
    measuring = Measuring(
        tuple(args.workload or ()),
        args.dataset,
        args.data_dir,
        args.limit,
        args.epochs,
        args.calls,
        program_facts=True,
        backend=args.backend,
    )
    for spec in measuring.specs:
        if not is_builtin(spec):
            load_make(spec)
    if args.limit is not None and any(is_builtin(spec) for spec in measuring.specs):
        check_batch_size(BATCH_SIZE, args.limit, fixed=True)
    return measuring


def run(args: argparse.Namespace) -> int:
    measuring = checked_workloads(args)
    store = ResultsStore(check_folder(args.out, "--out"))
    device = select_device(args.backend)  # a TPU held by another program: one line, never the CPU's numbers
    measuring = dataclasses.replace(measuring, backend=device.platform)  # the workloads on the ceilings' device
    meta = {**metadata(device), "backend": device.platform}
    environment = ceilings_key(meta)
    kept = None if args.remeasure_ceilings else kept_ceilings(store, environment)
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
    found = points(workloads, c)
    settings = {**dataclasses.asdict(measuring), "workloads": list(measuring.names)}
    doc = RooflineDocument(meta, c, str(path), found, settings)
    saved = store.save(doc)
    figure = write_new(saved.with_suffix(".png"), roofline_png(doc))
    print(f"\n{text_table(readable(roofline_table(doc), {'attainable_seconds': 's', 'measured_seconds': 's'}))}")
    for name, p in doc.points.items():
        if p.get("note"):
            print(f"{name}: {p['note']}")
    print(f"\nWrote {saved} and {figure}")
    return 0


def roofline_table(doc: RooflineDocument) -> Any:
    import pandas as pd

    rows = []
    for name, p in doc.points.items():
        rows.append(
            {
                "workload": name,
                "intensity": p.get("intensity"),
                "binds": p.get("binds", p.get("why")),
                "attainable_seconds": p.get("attainable_seconds"),
                "measured_seconds": p.get("measured_seconds"),
                "x_attainable": p.get("x_attainable"),
            }
        )
    return pd.DataFrame(rows)
