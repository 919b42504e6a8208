"""An explanation of two releases (`jaxmlp sweep explain`) as tables and text, the answer first."""

from __future__ import annotations

import statistics
from pathlib import Path

import pandas as pd

from jaxmlp.errors import JaxmlpError
from jaxmlp.results.schema.explain import SAME_HLO, ExplainDocument
from jaxmlp.results.store import confined, layout
from jaxmlp.results.sweep.explain import median_ratio, quantity_words
from jaxmlp.units import duration, number, ratio, size

OP_ROWS = 15
"""Operations shown in the op-time table (the biggest changes); the file holds them all."""
DIFF_LINES = 60
"""Lines of the HLO diff printed; the whole diff is in the folder."""


def _value(quantity: str, value: float | None) -> str:
    if value is None:
        return "not available"
    if quantity.endswith("_seconds"):
        return duration(value)
    return size(value) if quantity.endswith("bytes") or quantity.startswith("bytes") else number(value)


def answer_line(doc: ExplainDocument) -> str:
    """The first line: is the optimized HLO the same, and did the time change."""
    r = median_ratio(doc)
    timed = (
        ""
        if r is None
        else (
            f"; steady state {duration(statistics.median(doc.steady[doc.a]))} -> "
            f"{duration(statistics.median(doc.steady[doc.b]))} ({ratio(r)}, medians of "
            f"{len(doc.steady[doc.a])} processes each)"
        )
    )
    if doc.same_hlo is None:
        return f"{doc.workload}, {doc.a} -> {doc.b}: the optimized HLO is not available on both sides{timed}"
    if doc.same_hlo:
        return f"{doc.workload}, {doc.a} -> {doc.b}: {SAME_HLO}{timed}"
    only = "; the same instructions, only reordered, renamed or annotated otherwise" if doc.same_instructions else ""
    return (
        f"{doc.workload}, {doc.a} -> {doc.b}: the optimized HLO changed (fingerprint "
        f"{doc.fingerprints[doc.a]} -> {doc.fingerprints[doc.b]}{only}){timed}"
    )


def changes_table(doc: ExplainDocument) -> pd.DataFrame:
    return pd.DataFrame(
        [
            (
                quantity_words(c.quantity),
                _value(c.quantity, c.a),
                _value(c.quantity, c.b),
                ratio(c.ratio) if c.ratio is not None else "-",
            )
            for c in doc.changes
        ],
        columns=["quantity", doc.a, doc.b, "ratio"],
    )


def operations_table(doc: ExplainDocument) -> pd.DataFrame:
    return pd.DataFrame(
        [(op, a, b, f"{b - a:+d}") for op, a, b in doc.operations], columns=["operation", doc.a, doc.b, "change"]
    )


def op_time_table(doc: ExplainDocument, rows: int = OP_ROWS) -> pd.DataFrame:
    def named(a: str | None, b: str | None) -> str:
        return str(a or b) if a == b or a is None or b is None else f"{a} / {b}"

    return pd.DataFrame(
        [
            (
                named(o.name_a, o.name_b),
                duration(o.a_seconds),
                duration(o.b_seconds),
                ratio(o.ratio) if o.ratio is not None else "-",
            )
            for o in doc.op_times[:rows]
        ],
        columns=["operation", f"time in {doc.a}", f"time in {doc.b}", "ratio"],
    )


def _plain(table: pd.DataFrame) -> str:
    cells = [list(map(str, table.columns)), *([str(v) for v in row] for row in table.itertuples(index=False))]
    widths = [max(len(row[i]) for row in cells) for i in range(len(table.columns))]
    return "\n".join("  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() for row in cells)


def explain_text(doc: ExplainDocument, folder: Path | None = None, diff_lines: int = DIFF_LINES) -> str:
    """What `jaxmlp sweep explain` prints: the answer, the changes or op times, compile times, what is missing."""
    parts = [answer_line(doc)]
    if doc.same_hlo is False:
        if doc.operations:
            parts.append(
                "Operations and fusion kinds added or removed (count in each release):\n"
                + _plain(operations_table(doc))
            )
        else:
            parts.append("The same operations in the same numbers: the change is in their shapes, layouts or order")
    if doc.changes:
        parts.append(
            "The program (XLA's cost and memory analysis; compile split into trace+lower and XLA):\n"
            + _plain(changes_table(doc))
        )
    if doc.op_times:
        calls = doc.settings.get("traced_calls")
        parts.append(
            f"Operations by time per call ({calls} calls traced in one process a release), the biggest "
            f"change first ({min(len(doc.op_times), OP_ROWS)} of {len(doc.op_times)}):\n" + _plain(op_time_table(doc))
        )
    if doc.same_hlo is False and doc.diff_file and folder is not None:
        try:
            where = confined.inside(folder, doc.diff_file, folder / layout.EXPLAIN_FILE, "diff_file")
            diff = confined.read_text(where).splitlines()
        except (JaxmlpError, OSError) as e:
            parts.append(f"The optimized HLO's diff: not shown ({e})")
        else:
            shown = "\n".join(diff[:diff_lines])
            more = f"\n... ({len(diff) - diff_lines} more lines)" if len(diff) > diff_lines else ""
            parts.append(
                f"The optimized HLO's diff ({doc.diff_lines} lines; all of it in {folder / doc.diff_file}):\n"
                f"{shown}{more}"
            )
    if doc.notes:
        parts.append("Not available:\n" + "\n".join(f"- {note}" for note in doc.notes))
    if folder is not None:
        parts.append(f"Wrote {folder} (explain.json, hlo/, traces/{', hlo.diff' if doc.diff_file else ''})")
    return "\n\n".join(parts)
