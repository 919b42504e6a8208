"""How often each of the four verdicts comes out (`jaxmlp.stats.compare`'s ``word``) for a real x1.5 step and for
no change, at a given number of processes a side and a spread between processes like the corpus run's: lognormal
samples, seeded, each trial a fresh pair. The figures in docs/methods/statistics.md come from

    python bench/simulate_verdicts.py --processes 7 --spread 0.10 0.17 0.25 --trials 200
"""

from __future__ import annotations

import argparse
from collections import Counter

import numpy as np

from jaxmlp.stats import VERDICT_WORDS, compare


def counts(step: float, processes: int, spread: float, trials: int, seed: int = 0) -> Counter[str]:
    """The verdicts of ``trials`` comparisons of ``processes`` samples a side, the new side ``step`` times slower,
    each sample lognormal with log standard deviation ``spread``."""
    rng = np.random.default_rng(seed)
    found: Counter[str] = Counter()
    for _ in range(trials):
        base = np.exp(rng.normal(0, spread, processes))
        new = step * np.exp(rng.normal(0, spread, processes))
        found[compare(base, new).word] += 1
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, nargs="+", default=[7])
    parser.add_argument("--spread", type=float, nargs="+", default=[0.17])
    parser.add_argument("--steps", type=float, nargs="+", default=[1.5, 1.0])
    parser.add_argument("--trials", type=int, default=200)
    args = parser.parse_args()
    print("| step | processes a side | spread (log sd) | " + " | ".join(VERDICT_WORDS) + " |")
    print("|---|---|---|" + "---|" * len(VERDICT_WORDS))
    for step in args.steps:
        for processes in args.processes:
            for spread in args.spread:
                found = counts(step, processes, spread, args.trials)
                cells = " | ".join(f"{found[w]} of {args.trials}" for w in VERDICT_WORDS)
                print(f"| ×{step:g} | {processes} | {spread:g} | {cells} |")


if __name__ == "__main__":
    main()
