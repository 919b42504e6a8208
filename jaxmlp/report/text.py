"""The terminal's words: each result's answer as plain text or Markdown, and `jaxmlp compare`'s table."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from jaxmlp.report.display import readable
from jaxmlp.report.markdown import markdown_table
from jaxmlp.report.run_summaries import bench_summary
from jaxmlp.report.summary_base import Summary
from jaxmlp.results import tables
from jaxmlp.stats import INCONCLUSIVE, INVALID, RESULT_FIELDS, VERDICT_WORDS
from jaxmlp.units import interval

FORMATS = ("text", "md")
"""`render`'s formats: plain text for a terminal, Markdown (GitHub tables)."""


def text_table(table: pd.DataFrame) -> str:
    """A table as aligned plain text: a header line, a line a row, columns two spaces apart."""
    shown = readable(table)
    cells = [list(shown.columns), *shown.itertuples(index=False)]
    widths = [max(len(str(row[i])) for row in cells) for i in range(len(shown.columns))]
    return "\n".join("  ".join(str(v).ljust(w) for v, w in zip(row, widths)).rstrip() for row in cells)


def _long(answer: Summary, everything: bool) -> tuple[tuple[str, pd.DataFrame], ...]:
    return answer.long if everything else ()


def _held_back(answer: Summary, everything: bool) -> str:
    if everything or not answer.long:
        return ""
    names = "; ".join(f"{caption.split(' (')[0].split(':')[0]} ({len(table)} rows)" for caption, table in answer.long)
    return f"Not shown (`--all` shows them): {names}"


def summary_text(answer: Summary, everything: bool = False) -> str:
    """An answer as plain text: title, lines, tables, closing lines; long tables with ``everything``, else named."""
    parts = ["\n".join(filter(None, (answer.title, *answer.lines)))]
    parts += [f"{caption}\n{text_table(table)}" for caption, table in (*answer.tables, *_long(answer, everything))]
    parts.append("\n".join(filter(None, (*answer.closing, _held_back(answer, everything)))))
    return "\n\n".join(p for p in parts if p)


def summary_markdown(answer: Summary, everything: bool = False) -> str:
    """An answer as GitHub Markdown: its title as a heading, each table under its caption in bold."""
    parts = [f"### {answer.title}"] if answer.title else []
    parts += list(answer.lines)
    parts += [
        f"**{caption}**\n\n{markdown_table(readable(table))}"
        for caption, table in (*answer.tables, *_long(answer, everything))
    ]
    parts += [line for line in (*answer.closing, _held_back(answer, everything)) if line]
    return "\n\n".join(parts)


def render(answers: Sequence[Summary], format: str = "text", everything: bool = False) -> str:
    """Answers one after another, as plain text (``text``) or Markdown (``md``); long tables with ``everything``."""
    if format not in FORMATS:
        raise ValueError(f"format {format!r} is not one of {FORMATS}")
    one = summary_markdown if format == "md" else summary_text
    return "\n\n".join(one(a, everything) for a in answers)


def text_summary(df: pd.DataFrame) -> str:
    """A benchmark run's summary as short plain text, for a terminal."""
    return summary_text(bench_summary(df))


def compare_text(table: pd.DataFrame, threshold: float, alpha: float) -> str:
    """`jaxmlp compare`'s output: a row per benchmark, then the counts."""
    shown = table.assign(n=table["n_baseline"].astype(str) + "/" + table["n_new"].astype(str))[
        [
            "benchmark",
            "n",
            "baseline_median",
            "new_median",
            *RESULT_FIELDS,
        ]
    ]
    counts = tables.verdict_counts(table)
    words = readable(shown, {"baseline_median": "s", "new_median": "s"})
    said = ", ".join(f"{counts[w]} {w}" for w in VERDICT_WORDS)
    untested = f"{counts['too few']} of them with too few rounds to test, " if counts["too few"] else ""
    return (
        text_table(words.rename(columns={"baseline median": "baseline", "new median": "new"}))
        + f"\n\n{said} ({untested}"
        + (
            f"{counts[INVALID]} with invalid samples (NaN or inf: fix the timing before trusting any verdict), "
            if counts[INVALID]
            else ""
        )
        + f"of {len(table)} benchmarks; threshold {threshold:.0%}, alpha {alpha})"
        + _settling(table, threshold)
    )


def _settling(table: pd.DataFrame, threshold: float) -> str:
    """The widest interval among inconclusive benchmarks and the rounds that would settle them; "" where none."""
    open_ = table[(table["verdict"] == INCONCLUSIVE) & table["ci_low"].notna()]
    if open_.empty:
        return ""
    widest = open_.assign(width=open_["ci_high"] / open_["ci_low"]).sort_values("width").iloc[-1]
    more = open_["settle"].dropna()
    rounds = (
        f"about {int(more.max())} more rounds a side would settle them"
        if len(more) == len(open_)
        else "more rounds would settle them"
    )
    if "beyond_reach" in open_:
        far = open_[open_["beyond_reach"].fillna(False).astype(bool)]
        rounds += "".join(f"; {row['benchmark']} {row['settle_words']}" for _, row in far.iterrows())
    return (
        f"\n{INCONCLUSIVE}: the 95% interval spans the ±{100 * threshold:g}% threshold; the widest, "
        f"{widest['benchmark']} {interval(widest['ci_low'], widest['ci_high'])}; {rounds}"
    )


def memory_text(table: pd.DataFrame, threshold: float) -> str:
    """`jaxmlp compare`'s second metric: each benchmark's peak memory on both sides, then the counts."""
    compared = (
        "the runs' largest peaks" if list(table["benchmark"]) == [tables.RUN_PEAK] else f"{len(table)} benchmarks"
    )
    flagged = int((table["verdict"] == "memory regression").sum())
    better = int((table["verdict"] == "memory improvement").sum())
    return (
        f"Peak memory (host resident set), new / baseline; flagged beyond {1 + threshold:g}x:\n"
        + text_table(table)
        + f"\n\n{flagged} memory regression(s), {better} memory improvement(s) of "
        f"{compared} (memory threshold {threshold:.0%})"
    )
