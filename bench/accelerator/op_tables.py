"""The operation table of each trace the accelerator check brought back, as the profiler's own tool computes it
(xprof's ``hlo_stats``, `jaxmlp.results.traces.hlo_stats`): one CSV per trace, written into the folder of the
benchmark run it belongs to (`jaxmlp.results.layout.run_folder`: ``reports/tpu-<time>/ops-<pipeline>.csv`` beside
``reports/bench-<time>-tpu.json``), where `jaxmlp report` and `jaxmlp summary` find them.

    python bench/accelerator/op_tables.py TRACES_FOLDER BENCH_FILE

TRACES_FOLDER holds the unpacked ``traces-<pipeline>.tar.gz`` folders, one per pipeline (``scan/``, ``pallas/``...);
BENCH_FILE is the run's ``bench-<time>-<backend>.json`` (from its ``results.tar.gz``, unpacked into ``reports/``).
"""

import sys
from pathlib import Path

from jaxmlp.errors import JaxmlpError
from jaxmlp.results import layout
from jaxmlp.results.store import write_new
from jaxmlp.results.traces import hlo_stats, top_operations
from jaxmlp.units import percent


def main(traces: Path, bench: Path) -> int:
    newest: dict[str, Path] = {}  # a pipeline's newest trace (a folder may hold several captures)
    for xplane in sorted(traces.glob("*/**/*.xplane.pb"), key=lambda p: p.stat().st_mtime):
        newest[xplane.relative_to(traces).parts[0]] = xplane
    if not newest:
        return _error(f"no .xplane.pb under {traces}: give the folder the traces were unpacked into")
    out = layout.run_folder(bench)
    if out is None or not bench.is_file():
        return _error(f"{bench} is not a benchmark run's file (bench-<time>-<backend>.json): give the run's")
    out.mkdir(exist_ok=True)
    for pipeline, xplane in newest.items():
        table = hlo_stats(xplane)
        if table is None:
            return _error("xprof is not installed: pip install tensorboard-plugin-profile")
        if table.empty:
            print(f"op_tables.py: {xplane} holds no operations; no table for {pipeline}", file=sys.stderr)
            continue
        try:
            target = write_new(out / layout.OPS_FILE.format(pipeline=pipeline), table.to_csv(index=False))
        except JaxmlpError as e:  # one there already: never overwritten
            return _error(str(e))
        top = top_operations(table, 1).iloc[0]
        print(
            f"{target} (from {xplane}): {len(table)} operations; the largest {top['operation']} "
            f"({top['category']}), {percent(top['share'])} of the operations' self time, bound by {top['bound_by']}"
        )
    return 0


def _error(line: str) -> int:
    print(f"op_tables.py: {line}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
