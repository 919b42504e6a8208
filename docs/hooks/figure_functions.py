"""The functions a docs page's figure may call (`Figures`), over the runs of one table, and a page's figures rendered.

A page writes a figure as ``{{ EXPR }}``: ``{{ s(median("cpu", "test_epoch[cpu-scan-0-f32]")) }}`` is the median of
that benchmark in the run named ``cpu``, as a duration (``1.17 s``). Run names and their files are the table in
``reports/README.md`` (`runs_table`); what an expression may say is `expressions`.
"""

from __future__ import annotations

import ast
import csv
import json
import re
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from expressions import FigureError, entry, evaluate, walk
from runs_table import ROOT, RUNS_TABLE, runs

FIGURE = re.compile(r"\{\{(.+?)\}\}")

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
from jaxmlp import units  # noqa: E402  (plain Python: the one format of each quantity)

MANIFEST = ROOT / "bench" / "corpus" / "corpus.toml"


class Figures:
    """The functions a figure may call, over the runs of one table."""

    def __init__(self, table: Path = RUNS_TABLE) -> None:
        self.runs = runs(table)
        self._loaded: dict[Path, Any] = {}
        self._page = ""
        self.used: dict[str, set[str]] = {}  # run -> the pages whose figures read it

    def path(self, run: str, within: str = "") -> Path:
        if run not in self.runs:
            raise FigureError(f"no run named {run!r} in {RUNS_TABLE.relative_to(ROOT)}")
        if self._page:
            self.used.setdefault(run, set()).add(self._page)
        path = self.runs[run] / within if within else self.runs[run]
        if not path.exists():
            raise FigureError(f"{path.relative_to(ROOT)} is not there (run {run!r})")
        return path

    def load(self, run: str, within: str = "") -> Any:
        path = self.path(run, within)
        if path not in self._loaded:
            text = path.read_text()
            if path.suffix == ".csv":
                self._loaded[path] = list(csv.DictReader(text.splitlines()))
            elif path.suffix == ".jsonl":
                self._loaded[path] = [json.loads(line) for line in text.splitlines() if line.strip()]
            else:
                self._loaded[path] = json.loads(text)
        return self._loaded[path]

    def benchmark(self, run: str, name: str, within: str = "") -> dict[str, Any]:
        found = [b for b in self.load(run, within)["benchmarks"] if b["name"] == name]
        if len(found) != 1:
            raise FigureError(f"{len(found)} benchmarks named {name!r} in run {run!r}")
        return found[0]

    def _floor(self, run: str, precision: str) -> Any:
        """The run's floor in ``precision``: the row `jaxmlp.results.tables.floors` computes, the one every
        output reads."""
        from jaxmlp.results.store.frames import benchmark_rows
        from jaxmlp.results.store.reading import read_benchmarks
        from jaxmlp.results.tables import floors

        rows, _ = benchmark_rows(read_benchmarks(self.path(run)))
        table = floors(rows)
        found = table[table["precision"] == precision]
        if len(found) != 1:
            raise FigureError(f"{len(found)} floors in {precision} in run {run!r}")
        return found.iloc[0]

    def floor_rate(self, run: str, precision: str) -> float:
        """The floor's rate in ``precision`` (FLOP/s): the best product the run measured in it."""
        return float(self._floor(run, precision)["gflop_per_s"]) * 1e9

    def floor(self, run: str, precision: str) -> float:
        """An epoch's floor in ``precision`` (s): the epoch's FLOPs at the floor's rate."""
        return float(self._floor(run, precision)["floor_s"])

    def ops_top(self, run: str) -> float:
        """The largest operation's share of an operation table's self time, as `jaxmlp.results.tables.traces`
        computes it."""
        import pandas as pd

        from jaxmlp.results.tables import top_operations

        return float(top_operations(pd.read_csv(self.path(run)), 1)["share"].iloc[0])

    def _corpus(self, run: str) -> Any:
        """A corpus run's scorecard, read as `jaxmlp summary` reads it."""
        from jaxmlp.results.schema import parse
        from jaxmlp.results.schema.corpus import CorpusDocument

        doc = parse(self.load(run))
        if not isinstance(doc, CorpusDocument):
            raise FigureError(f"run {run!r} is not a corpus scorecard (`jaxmlp sweep corpus`)")
        return doc

    def corpus_total(self, run: str) -> str:
        """The corpus's total, as `jaxmlp sweep corpus` prints it first: its cases and kinds, the machine and commit
        the run measured on (its own metadata)."""
        from jaxmlp.report.corpus_sections import total_line

        return total_line(self._corpus(run))

    def corpus_kind_lines(self, run: str) -> str:
        """The total of each kind of case, a bullet a kind, each count over the cases it applies to."""
        from jaxmlp.report.corpus_sections import kind_lines

        return "\n".join(f"- {line}" for line in kind_lines(self._corpus(run)))

    def corpus_rates(self, run: str) -> str:
        """Each injected slowdown's found rate over the cases trialled, with its 95% interval, and how many controls
        were shown the same, as `jaxmlp sweep corpus` prints them (two lines of a quote)."""
        from jaxmlp.results.sweep.corpus_totals import controls_line, injected_line

        scores = self._corpus(run).scores
        return f"{injected_line(scores)}\n>\n> {controls_line(scores)}"

    def corpus_missed(self, run: str) -> str:
        """What was missed and why, a bullet a case; a line saying none was where every case was found."""
        from jaxmlp.report.corpus_sections import missed_lines

        lines = missed_lines(self._corpus(run))
        return "\n".join(f"- {line}" for line in lines) if lines else "Nothing was missed."

    def corpus_table(self, run: str) -> str:
        """The scorecard's table, a row a case, as a Markdown table."""
        from jaxmlp.results.sweep.corpus_totals import corpus_table

        return _markdown(corpus_table(self._corpus(run).scores))

    def corpus_kinds(self, run: str) -> str:
        """The scorecard's table, a row a kind, as a Markdown table."""
        from jaxmlp.results.sweep.corpus_totals import kinds_table

        return _markdown(kinds_table(self._corpus(run).scores))

    def corpus_cases(self, run: str) -> str:
        """The corpus's cases as the scored run holds them: each one's report, releases, what is expected and where
        that comes from, what the run found and the minutes it took, as a Markdown table."""
        from jaxmlp.results.sweep.corpus_totals import cases_table

        return _markdown(cases_table(self._corpus(run).scores))

    def corpus_default(self, key: str) -> Any:
        """What every case of the corpus runs with (the manifest's top: ``processes``, ``calls``,
        ``slowdown_trials``), read from the manifest: the one place the command and `nox -s corpus` take it from."""
        import tomllib

        doc = tomllib.loads(MANIFEST.read_text())
        if key not in doc:
            raise FigureError(f"{MANIFEST.relative_to(ROOT)} sets no {key!r} at its top")
        return doc[key]

    def store_table(self, run: str) -> str:
        """A results folder run's table (`bench_scale.py`: each command's time and own peak memory read again and read
        first, each goal met or missed), as `jaxmlp summary` computes and shows it, as a Markdown table."""
        from jaxmlp.report.display import readable
        from jaxmlp.report.markdown import markdown_table
        from jaxmlp.results.store.frames import benchmark_rows
        from jaxmlp.results.store.reading import read_benchmarks
        from jaxmlp.results.tables import results_folder_table

        rows, _ = benchmark_rows(read_benchmarks(self.path(run)))
        table = results_folder_table(rows)
        if table.empty:
            raise FigureError(f"run {run!r} holds no results folder benchmark (bench/bench_scale.py)")
        return markdown_table(readable(table))

    def trials_row(self, run: str) -> str:
        """A row of the trials' table from a `jaxmlp sweep trials` run: its workload and noise, each found rate with
        its 95% interval (`TrialsDocument.rates`), and each comparison's minutes to its verdict, median and longest."""
        from jaxmlp.results.schema.trials import TrialsDocument

        doc = TrialsDocument.from_json(self.load(run))
        rates = [f"{r['found']:g} of {r['of']:g} ({r['low']:.0%}–{r['high']:.0%})" for r in doc.rates().values()]
        times = [
            f"{units.minutes(statistics.median(s))}, {units.minutes(max(s))}" if (s := doc.seconds(side)) else "—"
            for side in ("injected", "aa")
        ]
        cells = [f"`{doc.settings.workload}`", doc.settings.noise, *rates, *times]
        return "| " + " | ".join(cells) + " |"

    def get(self, run: str, path: str, within: str = "") -> Any:
        """A value by a path of keys: ``a/b/0/c``; ``1:`` slices a list; ``key=value`` (``a=1&b=2``) picks the one
        list item with those values, ``?a=1`` keeps every such item; ``*`` maps the rest of the path over a list."""
        return walk(self.load(run, within), [p for p in path.split("/") if p], f"{run}:{within}{path}")

    def levels(self, run: str, which: str, above: float = 1.3) -> float:
        """A trials run's A/A processes in two levels: ``share`` lying beyond ``above`` times the fastest, or the
        ``fast`` or ``slow`` level's median seconds (NaN where none lies there)."""
        values = [v for trial in self.load(run)["trials"] for side in ("A", "A2") for v in trial["values"][side]]
        cut = above * min(values)
        fast, slow = [v for v in values if v <= cut], [v for v in values if v > cut]
        if which == "share":
            return len(slow) / len(values)
        level = {"fast": fast, "slow": slow}[which]
        return statistics.median(level) if level else float("nan")

    def functions(self) -> dict[str, Callable[..., Any]]:
        return {
            # values
            "median": lambda run, name, within="": self.benchmark(run, name, within)["stats"]["median"],
            "iqr": lambda run, name, within="": self.benchmark(run, name, within)["stats"]["iqr"],
            "rounds": lambda run, name, within="": self.benchmark(run, name, within)["stats"]["rounds"],
            "info": lambda run, name, key, within="": entry(self.benchmark(run, name, within)["extra_info"], key),
            "get": self.get,
            "corpus_total": self.corpus_total,
            "corpus_missed": self.corpus_missed,
            "corpus_rates": self.corpus_rates,
            "corpus_table": self.corpus_table,
            "corpus_kinds": self.corpus_kinds,
            "corpus_kind_lines": self.corpus_kind_lines,
            "corpus_cases": self.corpus_cases,
            "corpus_default": self.corpus_default,
            "store_table": self.store_table,
            "trials_row": self.trials_row,
            "levels": self.levels,
            "floor": self.floor,
            "floor_rate": self.floor_rate,
            "ops_count": lambda run: len(self.load(run)),
            "ops_top": self.ops_top,
            "file": lambda run: f"`{self.path(run).relative_to(ROOT)}`",
            "min": min,
            "max": max,
            "len": len,
            "median_of": statistics.median,
            "count": lambda values, value: sum(1 for v in values if v == value),
            # formats (jaxmlp.units: three significant digits in their unit)
            "s": units.duration,
            "minutes": units.minutes,
            "x": units.ratio,
            "pct": units.percent,
            "n": units.number,
            "rate": units.flop_rate,
            "size": units.size,
            "bw": lambda bytes_per_second: f"{units.size(bytes_per_second)}/s",
            "fixed": lambda value, places: f"{float(value):.{int(places)}f}",
            "i": lambda value: f"{int(round(float(value))):,}",
        }

    def render(self, text: str, where: str = "", page: str = "") -> str:
        """``text`` with every ``{{ EXPR }}`` replaced by its value; ``page``: the docs page it is (its runs noted)."""
        functions = self.functions()
        self._page = page

        def one(match: re.Match[str]) -> str:
            expression = match.group(1).strip()
            try:
                return str(evaluate(ast.parse(expression, mode="eval").body, functions))
            except FigureError as e:
                raise FigureError(f"{where}: {{{{ {expression} }}}}: {e}") from None
            except (KeyError, IndexError, TypeError, ValueError, SyntaxError, OSError) as e:
                raise FigureError(f"{where}: {{{{ {expression} }}}}: {type(e).__name__}: {e}") from None

        return FIGURE.sub(one, text)


def _markdown(frame: Any) -> str:
    """A table as Markdown, each cell as it is (a ``|`` escaped)."""
    rows = [list(frame.columns), ["---"] * len(frame.columns), *frame.astype(str).values.tolist()]
    return "\n".join("| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows)
