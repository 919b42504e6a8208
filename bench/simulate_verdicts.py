"""How often each of the four verdicts comes out (`jaxmlp.stats.compare`'s ``word``) for a real x1.5 step and for
no change, at a given number of processes a side and a spread between processes like the corpus run's: lognormal
samples, seeded, each trial a fresh pair. The figures in docs/methods/statistics.md come from

    python bench/simulate_verdicts.py --processes 7 20 --spread 0.02 0.05 0.10 0.17 0.25 --steps 1.5 1.0 --trials 200
    python bench/simulate_verdicts.py --processes 100 --spread 0.17 --steps 1.0 --trials 100

With ``--settle MAX``, each comparison is settled as `jaxmlp track` settles it: processes added a side as
`jaxmlp.stats.processes_to_settle` asks (at least as many again where it cannot tell), up to MAX a side; once with
the "not within reach" rule (`jaxmlp.stats.beyond_reach`: stop where more than `SETTLE_REACH` times the processes
measured would be needed) and once without it, so that what the rule gives up can be set against what MAX
processes would have settled:

    python bench/simulate_verdicts.py --settle 60 --processes 6 --spread 0.05 0.10 --steps 1.0 1.03 1.05 1.1
"""

from __future__ import annotations

import argparse
from collections import Counter

import numpy as np

from jaxmlp.stats import INCONCLUSIVE, VERDICT_WORDS, beyond_reach, compare, processes_to_settle


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


def settled(
    step: float, start: int, spread: float, most: int, rule: bool, rng: np.random.Generator
) -> tuple[str, int, bool]:
    """One comparison settled from ``start`` processes a side up to ``most``: its last word, its processes a side,
    and whether the "not within reach" rule stopped it (with ``rule``)."""
    base = list(np.exp(rng.normal(0, spread, start)))
    new = list(step * np.exp(rng.normal(0, spread, start)))
    while True:
        c = compare(base, new)
        n = len(base)
        if c.word != INCONCLUSIVE or n >= most:
            return c.word, n, False
        if rule and beyond_reach(c):
            return c.word, n, True
        more = processes_to_settle(c) or max(n, 1)
        more = max(1, min(more, most - n))
        base += list(np.exp(rng.normal(0, spread, more)))
        new += list(step * np.exp(rng.normal(0, spread, more)))


def settle_table(steps: list[float], starts: list[int], spreads: list[float], most: int, trials: int) -> None:
    """Per step, start and spread: the words with the rule and without it, the processes each used, and of the
    comparisons the rule gave up, how many the same draws went on to settle without it."""
    print(
        "| step | from | spread | with the rule: slower / the same / faster / inconclusive (given up) | processes a "
        f"side, mean | without it, up to {most}: slower / the same / faster / inconclusive | processes, mean | given "
        "up, then settled without the rule |"
    )
    print("|---|---|---|---|---|---|---|---|")
    order = ("slower", "the same", "faster", INCONCLUSIVE)
    for step in steps:
        for start in starts:
            for spread in spreads:
                ruled: Counter[str] = Counter()
                free: Counter[str] = Counter()
                used, used_free, gave_up, then = [], [], 0, 0
                for trial in range(trials):
                    word, n, stopped = settled(step, start, spread, most, True, np.random.default_rng(trial))
                    ruled[word] += 1
                    used.append(n)
                    word_free, n_free, _ = settled(step, start, spread, most, False, np.random.default_rng(trial))
                    free[word_free] += 1
                    used_free.append(n_free)
                    if stopped:
                        gave_up += 1
                        then += word_free != INCONCLUSIVE
                with_rule = " / ".join(str(ruled[w]) for w in order) + f" ({gave_up})"
                without = " / ".join(str(free[w]) for w in order)
                print(
                    f"| ×{step:g} | {start} | {spread:g} | {with_rule} | {np.mean(used):.1f} | {without} | "
                    f"{np.mean(used_free):.1f} | {then} of {gave_up} |"
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, nargs="+", default=[7])
    parser.add_argument("--spread", type=float, nargs="+", default=[0.17])
    parser.add_argument("--steps", type=float, nargs="+", default=[1.5, 1.0])
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--settle", type=int, metavar="MAX", help="settle each comparison up to MAX processes a side")
    args = parser.parse_args()
    if args.settle:
        settle_table(args.steps, args.processes, args.spread, args.settle, args.trials)
        return
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
