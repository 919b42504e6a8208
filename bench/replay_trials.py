"""Replays the regression trials' recorded processes under each interval rule (`interval_rules.RULES`): for every
trial, its A/A comparison (A against A2) and its injected one (A against H) are made on the first n processes of each
side as measured, n = 5, 6, ... (one process a side at a time, the prefixes an adaptive settling sees), and the n
where each first settles and its word are counted per run. The table in docs/methods/statistics.md comes from

    python bench/replay_trials.py reports/detector-2026120*/trials.json

(``--each`` also prints every trial's n and word per rule.) A trial's values are those of the metric its
comparisons ended on (wall or CPU time); an earlier prefix might have chosen the other.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np
from interval_rules import RULES, first_settled

from jaxmlp.stats import FASTER, INCONCLUSIVE, SAME, SLOWER


def replayed(path: Path, rules: list[str]) -> list[dict[str, dict[str, tuple[int, str]]]]:
    """Each trial of a trials file: per comparison (``aa``, ``injected``), each rule's (n, word) as it first settled."""
    doc = json.loads(path.read_text())
    out = []
    for trial in doc["trials"]:
        values = trial["values"]
        out.append(
            {
                "aa": first_settled(values["A"], values["A2"], rules),
                "injected": first_settled(values["A"], values["H"], rules),
            }
        )
    return out


def label(path: Path) -> str:
    """The run's folder and what it measured: its workload and its noise."""
    settings = json.loads(path.read_text())["settings"]
    workload = settings.get("workload") or settings.get("pipeline", "?")
    return f"{path.parent.name} ({workload}, {settings.get('noise', 'none')})"


def median_n(found: list[tuple[int, str]], word: str) -> str:
    ns = [n for n, w in found if w == word]
    return f"{np.median(ns):g}" if ns else "-"


Found = list[tuple[int, str]]  # each trial's (n, word) where one comparison first settled under one rule


def aa_cell(aa: Found) -> str:
    """A/A: the same / slower / faster / inconclusive; the processes a side, all trials together."""
    said: Counter[str] = Counter(w for _, w in aa)
    return " / ".join(str(said[w]) for w in (SAME, SLOWER, FASTER, INCONCLUSIVE)) + f"; {sum(n for n, _ in aa)}"


def injected_cell(hit: Found) -> str:
    """The injected slowdown: the trials that called it slower; the median n they did."""
    return f"{sum(w == SLOWER for _, w in hit)}; {median_n(hit, SLOWER)}"


Runs = list[tuple[Path, list[dict[str, dict[str, tuple[int, str]]]]]]  # each file and its trials, `replayed`


def table(title: str, runs: Runs, rules: list[str], key: str, cell: Callable[[Found], str]) -> None:
    """A row per run and a column per rule: each rule's ``cell`` of the run's ``key`` comparisons."""
    print(title)
    print("| run | trials | " + " | ".join(rules) + " |")
    print("|---|---|" + "---|" * len(rules))
    for path, trials in runs:
        cells = [cell([t[key][rule] for t in trials]) for rule in rules]
        print(f"| {label(path)} | {len(trials)} | " + " | ".join(cells) + " |")


def tables(files: list[Path], rules: list[str], each: bool) -> None:
    """The A/A comparisons' words where they first settled and the processes a side they used, all trials together
    (a trial that never settled: all it recorded); the injected slowdown's calls of slower and the median n."""
    runs = [(path, replayed(path, rules)) for path in files]
    table(
        "A/A: the same / slower / faster / inconclusive; processes a side, all trials together",
        runs,
        rules,
        "aa",
        aa_cell,
    )
    print()
    table(
        "Injected x1.1: slower, of the trials; the median n a side it was called at",
        runs,
        rules,
        "injected",
        injected_cell,
    )
    if each:
        for path, trials in runs:
            print(f"\n{path.parent.name}: each trial's (n, word) per rule, A/A then injected")
            for number, t in enumerate(trials):
                cells = "; ".join(f"{rule}: {t['aa'][rule]}, {t['injected'][rule]}" for rule in rules)
                print(f"  trial {number}: {cells}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", type=Path, nargs="+")
    parser.add_argument("--rules", nargs="+", default=list(RULES), choices=list(RULES))
    parser.add_argument("--each", action="store_true", help="print every trial's n and word per rule")
    args = parser.parse_args()
    tables(args.files, args.rules, args.each)


if __name__ == "__main__":
    main()
