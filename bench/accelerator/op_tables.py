"""The operation table of each trace the accelerator check brought back, as the profiler's own tool computes it
(xprof's ``hlo_stats``, `jaxmlp.results.traces.hlo_stats`): one CSV per trace, written beside the run's files.

    python bench/accelerator/op_tables.py TRACES_FOLDER OUT_FOLDER

TRACES_FOLDER holds the unpacked ``traces-<pipeline>.tar.gz`` folders, one per pipeline (``scan/``, ``pallas/``...).
"""

import sys
from pathlib import Path

from jaxmlp.results.traces import hlo_stats


def main(traces: Path, out: Path) -> int:
    found = sorted(traces.glob("*/**/*.xplane.pb"))
    if not found:
        print(f"op_tables.py: no .xplane.pb under {traces}: give the folder the traces were unpacked into")
        return 2
    out.mkdir(parents=True, exist_ok=True)
    for xplane in found:
        pipeline = xplane.relative_to(traces).parts[0]
        table = hlo_stats(xplane)
        if table is None:
            print("op_tables.py: xprof is not installed: pip install tensorboard-plugin-profile")
            return 2
        target = out / f"ops-{pipeline}.csv"
        table.to_csv(target, index=False)
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
