"""Wall time against process CPU time under a neighbour on the same CPU: fresh processes, each pinned to one CPU,
time a jitted 512x512 product (the median of ``--calls`` calls, each ending in block_until_ready), alternately
alone and beside a busy loop pinned to the same CPU (started before the process, ended after it). Prints each
process's medians and a JSON summary (the load average before and after, each condition's medians' range); the
method and a committed run: docs/methods/statistics.md (#wall-or-cpu).

    python bench/neighbour.py --cpu 1 --processes 6 --calls 30 --json reports/neighbour-<UTC time>-cpu.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from jaxmlp.measure import workers

CHILD = """
import os, sys, time, statistics, json
os.sched_setaffinity(0, {int(sys.argv[1])})
import jax, jax.numpy as jnp
x = jnp.ones((512, 512), jnp.float32)
f = jax.jit(lambda a: a @ a)
jax.block_until_ready(f(x))
wall, cpu = [], []
for _ in range(int(sys.argv[2])):
    w, c = time.perf_counter(), time.process_time()
    jax.block_until_ready(f(x))
    wall.append(time.perf_counter() - w)
    cpu.append(time.process_time() - c)
print(json.dumps({"wall": statistics.median(wall), "cpu": statistics.median(cpu)}))
"""


def busy(cpu: int) -> subprocess.Popen[bytes]:
    """A busy loop pinned to ``cpu``: the neighbour (ended by the caller)."""
    loop = f"import os\nos.sched_setaffinity(0, {{{cpu}}})\nwhile True: pass\n"
    return subprocess.Popen(workers.guarded([sys.executable, "-c", loop]))  # it dies with this script, even killed


def one(cpu: int, calls: int, hog: bool) -> dict[str, float]:
    """One fresh process's medians (seconds), beside a busy loop on its CPU where ``hog``."""
    neighbour = busy(cpu) if hog else None
    try:
        env = {**os.environ, "JAX_PLATFORMS": "cpu"}
        done = subprocess.run(
            [sys.executable, "-c", CHILD, str(cpu), str(calls)],
            capture_output=True,
            text=True,
            check=True,
            env=env,
            timeout=600,
        )
    finally:
        if neighbour is not None:
            neighbour.kill()
            neighbour.wait()
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cpu", type=int, default=1)
    parser.add_argument("--processes", type=int, default=6)
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--json", help="also write the summary here, as one JSON line")
    args = parser.parse_args()
    load_before = os.getloadavg()
    runs: dict[str, list[dict[str, float]]] = {"quiet": [], "hog": []}
    for i in range(args.processes):  # alternately, so that the machine's drift falls on both
        for hog in (i % 2 == 1, i % 2 == 0):
            got = one(args.cpu, args.calls, hog)
            runs["hog" if hog else "quiet"].append(got)
            print(
                f"{'hog  ' if hog else 'quiet'} wall {got['wall'] * 1e3:.2f} ms, CPU {got['cpu'] * 1e3:.2f} ms",
                flush=True,
            )
    summary = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "cpu": args.cpu,
        "processes": args.processes,
        "calls": args.calls,
        "cores": os.cpu_count(),
        "load_before": load_before,
        "load_after": os.getloadavg(),
        "conditions": {
            name: {
                metric: {
                    "min_ms": min(r[metric] for r in rs) * 1e3,
                    "median_ms": statistics.median(r[metric] for r in rs) * 1e3,
                    "max_ms": max(r[metric] for r in rs) * 1e3,
                }
                for metric in ("wall", "cpu")
            }
            for name, rs in runs.items()
        },
        "processes_ms": {name: [{k: v * 1e3 for k, v in r.items()} for r in rs] for name, rs in runs.items()},
    }
    print(json.dumps(summary["conditions"], indent=1))
    if args.json:
        summary["command"] = " ".join(["python bench/neighbour.py", *sys.argv[1:]])
        with open(args.json, "w") as f:
            f.write(json.dumps(summary) + "\n")


if __name__ == "__main__":
    main()
