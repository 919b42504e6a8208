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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", type=Path, nargs="+")
    parser.add_argument("--rules", nargs="+", default=list(RULES), choices=list(RULES))
    parser.add_argument("--each", action="store_true", help="print every trial's n and word per rule")
    args = parser.parse_args()
    print(
        "| run | rule | A/A the same | A/A slower | A/A faster | A/A inconclusive | A/A n to the same, median "
        "| A/A processes a side, all trials "
        "| injected slower | injected n to slower, median |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for path in args.files:
        trials = replayed(path, args.rules)
        for rule in args.rules:
            aa = [t["aa"][rule] for t in trials]
            hit = [t["injected"][rule] for t in trials]
            a: Counter[str] = Counter(w for _, w in aa)
            h: Counter[str] = Counter(w for _, w in hit)
            total = len(trials)
            print(
                f"| {label(path)} | {rule} | {a[SAME]} of {total} | {a[SLOWER]} | {a[FASTER]} | {a[INCONCLUSIVE]} | "
                f"{median_n(aa, SAME)} | {sum(n for n, _ in aa)} | {h[SLOWER]} of {total} | {median_n(hit, SLOWER)} |"
            )
        if args.each:
            for number, t in enumerate(trials):
                cells = "; ".join(
                    f"{rule}: A/A {t['aa'][rule][1]} at {t['aa'][rule][0]}, injected {t['injected'][rule][1]} at "
                    f"{t['injected'][rule][0]}"
                    for rule in args.rules
                )
                print(f"  trial {number}: {cells}")


if __name__ == "__main__":
    main()
