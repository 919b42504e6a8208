"""The terminal's words: each result's answer (`jaxmlp.report.verdicts.Answer`) as plain text or as Markdown for a
pull request or a CI step summary, a benchmark run's summary, and `jaxmlp compare`'s table."""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

import pandas as pd

from jaxmlp.report.markdown import markdown_table
from jaxmlp.report.verdicts import Answer, bench_answer
from jaxmlp.results import tables
from jaxmlp.stats import INVALID
from jaxmlp.units import MISSING, number

FORMATS = ("text", "md")
"""`render`'s formats: plain text for a terminal, Markdown (GitHub tables)."""


def _word(value: object) -> str:
    """A table's cell as shown: a measured number to three significant digits (`jaxmlp.units.number`), a count
    as it is, ``-`` for a missing one, anything else as its text."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return str(value)
    return str(int(value)) if isinstance(value, numbers.Integral) else number(value)


def words(table: pd.DataFrame) -> pd.DataFrame:
    """Every cell of ``table`` as the text it is shown as; a column of whole numbers as counts (devices, workers: a
    column that is float only because other results lacked it)."""
    counts = [c for c in table.columns if table[c].dtype.kind == "f" and _whole(table[c].dropna())]
    table = table.astype({c: "Int64" for c in counts})
    return pd.DataFrame([[_word(v) for v in row] for row in table.itertuples(index=False)],
                        columns=[str(c) for c in table.columns])  # fmt: skip


def _whole(values: pd.Series) -> bool:
    return bool(((values % 1 == 0) & (values.abs() < 2**53)).all())


def text_table(table: pd.DataFrame) -> str:
    """A table as aligned plain text: a header line, a line a row, columns two spaces apart."""
    shown = words(table)
    cells = [list(shown.columns), *shown.itertuples(index=False)]
    widths = [max(len(str(row[i])) for row in cells) for i in range(len(shown.columns))]
    return "\n".join("  ".join(str(v).ljust(w) for v, w in zip(row, widths)).rstrip() for row in cells)


def answer_text(answer: Answer) -> str:
    """An answer as plain text: its title, its lines, each table under its caption, its closing lines."""
    parts = ["\n".join(filter(None, (answer.title, *answer.lines)))]
    parts += [f"{caption}\n{text_table(table)}" for caption, table in answer.tables]
    parts.append("\n".join(answer.closing))
    return "\n\n".join(p for p in parts if p)


def answer_markdown(answer: Answer) -> str:
    """An answer as GitHub Markdown: its title as a heading, each table under its caption in bold."""
    parts = [f"### {answer.title}"] if answer.title else []
    parts += list(answer.lines)
    parts += [f"**{caption}**\n\n{markdown_table(words(table))}" for caption, table in answer.tables]
    parts += list(answer.closing)
    return "\n\n".join(parts)


def render(answers: Sequence[Answer], format: str = "text") -> str:
    """Answers one after another, as plain text (``text``) or Markdown (``md``)."""
    if format not in FORMATS:
        raise ValueError(f"format {format!r} is not one of {FORMATS}")
    one = answer_markdown if format == "md" else answer_text
    return "\n\n".join(one(a) for a in answers)


def text_summary(df: pd.DataFrame) -> str:
    """A benchmark run's summary as short plain text, for a terminal."""
    return answer_text(bench_answer(df))


def compare_text(table: pd.DataFrame, threshold: float, alpha: float) -> str:
    """`jaxmlp compare`'s output: a row per benchmark, then the counts."""
    shown = table.assign(
        n=table["n_baseline"].astype(str) + "/" + table["n_new"].astype(str),
        ci=[f"{lo:.3f}-{hi:.3f}" if lo == lo else "-" for lo, hi in zip(table["ci_low"], table["ci_high"])],
    )[["benchmark", "n", "baseline_median", "new_median", "ratio", "ci", "p_slower", "p_faster", "verdict"]]
    counts = tables.verdict_counts(table)
    return (
        shown.to_string(index=False, float_format=lambda x: f"{x:.4g}", na_rep="-")
        + f"\n\n{counts['regression']} regression(s), {counts['improvement']} improvement(s), "
        f"{counts['insufficient data']} with insufficient data, "
        + (
            f"{counts[INVALID]} with invalid samples (NaN or inf: fix the timing before trusting any verdict), "
            if counts[INVALID]
            else ""
        )
        + f"of {len(table)} benchmarks "
        f"(threshold {threshold:.0%}, alpha {alpha})"
    )
