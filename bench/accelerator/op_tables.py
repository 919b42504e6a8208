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
from jaxmlp.results.traces import hlo_stats


def main(traces: Path, bench: Path) -> int:
    found = sorted(traces.glob("*/**/*.xplane.pb"))
    if not found:
        print(f"op_tables.py: no .xplane.pb under {traces}: give the folder the traces were unpacked into")
        return 2
    out = layout.run_folder(bench)
    if out is None or not bench.is_file():
        print(f"op_tables.py: {bench} is not a benchmark run's file (bench-<time>-<backend>.json): give the run's")
        return 2
    out.mkdir(exist_ok=True)
    for xplane in found:
        pipeline = xplane.relative_to(traces).parts[0]
        table = hlo_stats(xplane)
        if table is None:
            print("op_tables.py: xprof is not installed: pip install tensorboard-plugin-profile")
            return 2
        try:
            target = write_new(out / layout.OPS_FILE.format(pipeline=pipeline), table.to_csv(index=False))
        except JaxmlpError as e:  # one there already: never overwritten
            print(f"op_tables.py: {e}")
            return 2
        top = table.iloc[0]
        print(
            f"{target}: {len(table)} operations; the largest {top['operation']} ({top['category']}), "
            f"{top['self_percent']:.1f}% of the time, bound by {top['bound_by']}"
        )
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
