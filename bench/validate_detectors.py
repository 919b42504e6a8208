"""The change-point detectors compared on `jaxmlp sweep validate`'s synthetic histories, E-divisive means included.

`jaxmlp sweep validate` runs ruptures' PELT and binary segmentation in jaxmlp's own environment. MongoDB's E-divisive
means (signal-processing-algorithms) wants numpy<2, so the comparison with it runs here, in an environment of its
own that needs nothing of jaxmlp's but numpy, scipy and ruptures:

    python -m venv /tmp/edv
    /tmp/edv/bin/pip install "numpy<2" scipy ruptures signal-processing-algorithms
    PYTHONPATH=. /tmp/edv/bin/python bench/validate_detectors.py reports/timeline-20261205T181756 --out reports

Its lists are space-separated, as everywhere in jaxmlp: ``--detectors pelt edivisive`` compares those two.

It reads the noise straight from the sweep folders' cell files (each cell's fresh-process steady states), runs every
case under every detector on the same seeded histories, and writes ``detector-<time>/validation.json`` as
`jaxmlp sweep validate` does (`jaxmlp summary` and the report read it).
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import sys
import time
from importlib.metadata import version
from pathlib import Path

from jaxmlp.changepoints import PENALTY
from jaxmlp.cli import options
from jaxmlp.measure import environment
from jaxmlp.measure.sweep import validation
from jaxmlp.results.schema.validation import ValidationDocument
from jaxmlp.results.store import layout
from jaxmlp.results.store.writing import ResultsStore, write_json_new


def cells(folders: list[Path]) -> list[list[float]]:
    """Every sweep cell's steady-state samples (a process each) under ``folders``, a list a cell and workload."""
    found = []
    for folder in folders:
        for path in sorted(folder.rglob("jax-*.json")):
            for bench in json.loads(path.read_text())["benchmarks"]:
                if bench["name"].startswith("sweep_steady["):
                    found.append([float(x) for x in bench["stats"]["data"]])
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("noise", nargs="+", type=Path, help="sweep or timeline folders whose samples give the noise")
    parser.add_argument("--histories", type=options.whole_number, default=200)
    parser.add_argument("--seed", type=options.whole_number, default=0)
    parser.add_argument("--penalty", type=options.number, default=PENALTY)
    parser.add_argument(
        "--detectors",
        metavar="DETECTOR",
        choices=validation.DETECTORS,
        **options.LIST,
        help=f"the detectors to compare (default: {' '.join(validation.DETECTORS)})",
    )
    parser.add_argument("--out", type=Path, default=Path(layout.RESULTS_DIR))
    args = parser.parse_args()
    detectors = list(dict.fromkeys(args.detectors or validation.DETECTORS))
    measured = cells(args.noise)
    start = time.monotonic()
    noise_from = ", ".join(str(f) for f in args.noise)
    rows, chosen, settings = validation.validate(
        validation.deviations(measured), len(measured), detectors, args.histories, args.seed, args.penalty, noise_from
    )
    for row in rows:
        print(f"{row.detector:10} {row.case:18} found {row.recall:.3f} false alarms {row.false_alarms:.3f}", flush=True)
    packages = {
        name: version(name)
        for name in ("numpy", "scipy", "ruptures", "signal-processing-algorithms")
        if _installed(name)
    }
    metadata = {
        "timestamp": datetime.datetime.now(datetime.UTC).isoformat(),
        "host": environment.machine_name(),  # the host name only where the user gives it
        "python": platform.python_version(),
        "packages": packages,
        "command": " ".join(["bench/validate_detectors.py", *sys.argv[1:]]),
    }
    doc = ValidationDocument(metadata, settings, chosen, tuple(rows))
    with ResultsStore(args.out).new_folder(layout.DETECTOR) as folder:
        write_json_new(folder.path / layout.VALIDATION_FILE, doc.to_json())
    print(f"chosen: {chosen}; wrote {folder.path / layout.VALIDATION_FILE} in {time.monotonic() - start:.0f} s")
    return 0


def _installed(name: str) -> bool:
    try:
        version(name)
    except Exception:
        return False
    return True


if __name__ == "__main__":
    sys.exit(main())
