"""How often `jaxmlp.bimodal.groups_of` calls a release bimodal: one population (lognormal processes at a given
spread) and two (a fast and a slow group, ``ratio`` apart, each at that spread), seeded, each trial a fresh release.
The figures in docs/methods/statistics.md come from

    python bench/simulate_bimodal.py --trials 1000
"""

from __future__ import annotations

import argparse

import numpy as np

from jaxmlp.bimodal import groups_of


def called(processes: int, spread: float, trials: int, ratio: float = 1.0, slow: int = 0, seed: int = 0) -> int:
    """Of ``trials`` releases of ``processes`` processes (``slow`` of them ``ratio`` times slower), log standard
    deviation ``spread``, how many `groups_of` calls bimodal."""
    rng = np.random.default_rng(seed)
    found = 0
    for _ in range(trials):
        times = np.exp(rng.normal(0, spread, processes))
        times[:slow] *= ratio
        found += groups_of(times) is not None
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, nargs="+", default=[7, 10, 20])
    parser.add_argument("--spread", type=float, nargs="+", default=[0.10, 0.17, 0.25, 0.33])
    parser.add_argument("--ratios", type=float, nargs="+", default=[1.0, 2.0, 3.0, 5.0])
    parser.add_argument("--trials", type=int, default=1000)
    args = parser.parse_args()
    print("| groups | spread (log sd) | " + " | ".join(f"{n} processes" for n in args.processes) + " |")
    print("|---|---|" + "---|" * len(args.processes))
    for ratio in args.ratios:
        for spread in args.spread:
            cells = []
            for n in args.processes:
                slow = 0 if ratio == 1.0 else (3 * n) // 7  # 3 of 7, as scan-f64-carry-0.4.33's 0.4.33 split
                cells.append(f"{called(n, spread, args.trials, ratio, slow)} of {args.trials}")
            label = "one" if ratio == 1.0 else f"two, x{ratio:g} apart"
            print(f"| {label} | {spread:.2f} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
