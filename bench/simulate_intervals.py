"""How each interval rule (`interval_rules.RULES`) decides simulated comparisons: A/A pairs (no change), a change at
the threshold (×1.05) and an injected ×1.10, each process's time lognormal at a spread of a few percent, or bimodal
(each process at one of two levels 5% apart, at random, then lognormal at 2%), seeded. Each trial draws MAX
processes a side; its comparisons are made on the first n of them, n = 5 to MAX. Two tables: the words at a fixed n
a side, and the word where the comparison first settles as n grows one process a side at a time (the replay's
sequential reading, `replay_trials.py`). The figures in docs/methods/statistics.md come from

    python bench/simulate_intervals.py --trials 400
"""

from __future__ import annotations

import argparse
from collections import Counter

import numpy as np
from interval_rules import RULES, words

from jaxmlp.stats import FASTER, INCONCLUSIVE, SAME, SLOWER

START = 5


def draw(rng: np.random.Generator, noise: str, n: int) -> np.ndarray:
    """``n`` processes' times: ``lognormal S`` at log sd S, ``bimodal`` at 1 or 1.05 at random, then log sd 0.02."""
    if noise == "bimodal":
        return np.where(rng.random(n) < 0.5, 1.0, 1.05) * np.exp(rng.normal(0, 0.02, n))
    return np.exp(rng.normal(0, float(noise.split()[1]), n))


def trial_words(rng: np.random.Generator, noise: str, step: float, most: int, rules: list[str]) -> dict[str, list[str]]:
    """One trial: each rule's word on the first n processes a side, n = `START` to ``most``."""
    base, new = draw(rng, noise, most), step * draw(rng, noise, most)
    by_n = [words(base[:n], new[:n], rules) for n in range(START, most + 1)]
    return {rule: [w[rule] for w in by_n] for rule in rules}


def first(said: list[str]) -> tuple[int, str]:
    """The n and word where a sequence of words (n = `START` on) first settles; the last n, inconclusive, else."""
    for i, word in enumerate(said):
        if word != INCONCLUSIVE:
            return START + i, word
    return START + len(said) - 1, INCONCLUSIVE


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--noise", nargs="+", default=["lognormal 0.02", "lognormal 0.04", "lognormal 0.06", "bimodal"])
    parser.add_argument("--steps", type=float, nargs="+", default=[1.0, 1.05, 1.1])
    parser.add_argument("--processes", type=int, nargs="+", default=[5, 8, 10, 15, 20])
    parser.add_argument("--trials", type=int, default=400)
    parser.add_argument("--rules", nargs="+", default=list(RULES), choices=list(RULES))
    args = parser.parse_args()
    most = max(args.processes)
    found = {}
    for k, noise in enumerate(args.noise):
        for j, step in enumerate(args.steps):
            rng = np.random.default_rng(1000 * k + j)
            found[noise, step] = [trial_words(rng, noise, step, most, args.rules) for _ in range(args.trials)]
    t = args.trials
    print(f"Fixed n a side ({t} trials a row): A/A the same / slower / faster; ×1.05 the same; ×1.1 slower")
    print("| noise | n a side | rule | A/A the same | A/A slower | A/A faster | ×1.05 the same | ×1.1 slower |")
    print("|---|---|---|---|---|---|---|---|")
    for noise in args.noise:
        for n in args.processes:
            for rule in args.rules:
                cells = []
                for step, word in ((1.0, SAME), (1.0, SLOWER), (1.0, FASTER), (1.05, SAME), (1.1, SLOWER)):
                    trials = found.get((noise, step))
                    cells.append(str(sum(tw[rule][n - START] == word for tw in trials)) if trials else "-")
                print(f"| {noise} | {n} | {rule} | " + " | ".join(cells) + " |")
    print()
    print(f"Settled as n grows from {START} to {most} a side ({t} trials a row): the first word, and its n")
    print(
        "| noise | rule | A/A the same / slower / faster / inconclusive | A/A n to the same, median "
        "| A/A n a side used, mean | ×1.05 the same "
        "| ×1.1 slower / the same / inconclusive | ×1.1 n to slower, median |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for noise in args.noise:
        for rule in args.rules:
            row = [noise, rule]
            for step in (1.0, 1.05, 1.1):
                settled = [first(tw[rule]) for tw in found.get((noise, step), [])]
                said: Counter[str] = Counter(w for _, w in settled)
                if step == 1.0:
                    row.append(" / ".join(str(said[w]) for w in (SAME, SLOWER, FASTER, INCONCLUSIVE)))
                    row.append(_median([n for n, w in settled if w == SAME]))
                    row.append(f"{np.mean([n for n, _ in settled]):.1f}")
                elif step == 1.05:
                    row.append(str(said[SAME]) if settled else "-")
                else:
                    row.append(" / ".join(str(said[w]) for w in (SLOWER, SAME, INCONCLUSIVE)) if settled else "-")
                    row.append(_median([n for n, w in settled if w == SLOWER]))
            print("| " + " | ".join(row) + " |")


def _median(ns: list[int]) -> str:
    return f"{np.median(ns):g}" if ns else "-"


if __name__ == "__main__":
    main()
