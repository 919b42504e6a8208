"""Two releases of one workload compared (`jaxmlp sweep explain A B`), pure, into an `ExplainDocument`."""

from __future__ import annotations

import difflib
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from jaxmlp import hlo
from jaxmlp.measure.records import ProcessResult
from jaxmlp.results.schema.explain import Change, ExplainDocument, OpTime
from jaxmlp.results.tables import program_ops, trace_contents

QUANTITIES = {
    "flops_per_call": "FLOPs a call (every program, times its runs)",
    "bytes_accessed_per_call": "bytes accessed a call (every program, times its runs)",
    "flops": "FLOPs of the main program (one run)",
    "bytes_accessed": "bytes accessed by the main program (one run)",
    "transcendentals": "transcendental operations of the main program (one run)",
    "argument_bytes": "memory of the main program's arguments",
    "output_bytes": "memory of the main program's outputs",
    "temp_bytes": "memory of the main program's temporaries",
    "generated_code_bytes": "size of the main program's generated code",
    "trace_lower_seconds": "trace and lower time (every program)",
    "xla_compile_seconds": "XLA compile time (every program)",
}
"""The program facts compared, in the order shown, each with its name in words."""


def quantity_words(quantity: str) -> str:
    """A program fact's name in words, with what it counts (`QUANTITIES`); an unknown one as recorded."""
    return QUANTITIES.get(quantity, quantity)


def operation_changes(a: Mapping[str, int], b: Mapping[str, int]) -> tuple[tuple[str, int, int], ...]:
    """The operations (and fusion kinds) whose count differs: (op, count in A, count in B), largest change first."""
    ops = sorted(set(a) | set(b), key=lambda op: (-abs(b.get(op, 0) - a.get(op, 0)), op))
    return tuple((op, a.get(op, 0), b.get(op, 0)) for op in ops if a.get(op, 0) != b.get(op, 0))


def hlo_diff(text_a: str, text_b: str, a: str, b: str) -> list[str]:
    """The unified diff of the two canonical optimized HLOs (names renamed in order, metadata dropped)."""
    return list(
        difflib.unified_diff(
            hlo.canonical(text_a).splitlines(),
            hlo.canonical(text_b).splitlines(),
            f"{a} (canonical optimized HLO)",
            f"{b} (canonical optimized HLO)",
            lineterm="",
            n=2,
        )
    )


def op_seconds(events: pd.DataFrame, names: Mapping[str, str], calls: int) -> dict[str, tuple[str, float]]:
    """Each program operation of a trace by canonical name: (its trace name, its seconds per traced call)."""
    total = program_ops(events, names).groupby("name")["duration_ns"].sum()
    return {names[str(name)]: (str(name), float(ns) / 1e9 / calls) for name, ns in total.items()}


def op_times(a: Mapping[str, tuple[str, float]], b: Mapping[str, tuple[str, float]]) -> tuple[OpTime, ...]:
    """Both releases' operations side by side, the biggest change in time first."""
    rows = [
        OpTime(
            op,
            a[op][0] if op in a else None,
            b[op][0] if op in b else None,
            a[op][1] if op in a else None,
            b[op][1] if op in b else None,
        )
        for op in set(a) | set(b)
    ]
    return tuple(sorted(rows, key=lambda r: (-abs((r.b_seconds or 0.0) - (r.a_seconds or 0.0)), r.op)))


def main_program(result: ProcessResult, workload: str) -> Mapping[str, Any]:
    times = result.workloads.get(workload)
    return (times.program if times is not None else None) or {}


def _op_seconds(
    labels: Sequence[str],
    texts: Mapping[str, str | None],
    events: Mapping[str, pd.DataFrame | None],
    traced_calls: int,
    notes: list[str],
) -> dict[str, dict[str, tuple[str, float]]]:
    """Each release's operation times from its trace; one it cannot give is a line of ``notes``."""
    per_op: dict[str, dict[str, tuple[str, float]]] = {}
    for label in labels:
        text, found = texts.get(label), events.get(label)
        if text is None or found is None:
            notes.append(
                f"{label}: no operation times: "
                + ("no optimized HLO to name the operations by" if text is None else "no trace")
            )
            continue
        per_op[label] = op_seconds(found, hlo.canonical_names(text), traced_calls)
        if not per_op[label]:
            notes.append(
                f"{label}: no operation times: no event of its trace names an instruction of its optimized "
                f"HLO; the trace holds {trace_contents(found)}"
            )
    return per_op


def explanation(
    workload: str,
    a: str,
    b: str,
    processes: Mapping[str, Sequence[ProcessResult]],
    texts: Mapping[str, str | None],
    events: Mapping[str, pd.DataFrame | None],
    traced_calls: int,
    metadata: Mapping[str, Any],
    settings: Mapping[str, Any],
    diff_file: str | None = None,
    diff_lines: int = 0,
) -> ExplainDocument:
    """The comparison of ``a`` and ``b`` from their ``processes``, HLO ``texts`` and trace ``events`` (None: none)."""
    facts = {label: main_program(processes[label][0], workload) for label in (a, b)}
    fingerprints = {label: facts[label].get("hlo_fingerprint") for label in (a, b)}
    steady = {label: tuple(p.workloads[workload].steady_seconds for p in processes[label]) for label in (a, b)}
    notes = [
        f"{label}: {fact}: {why}" for label in (a, b) for fact, why in (facts[label].get("not_available") or {}).items()
    ]
    same = None if None in fingerprints.values() else fingerprints[a] == fingerprints[b]
    for label in (a, b):
        if (facts[label].get("operations") or {}).get("custom-call"):
            notes.append(
                f"{label}: its program has custom-call operations (library kernels: matmuls through "
                "Eigen or oneDNN in older releases), whose flops XLA's cost analysis does not count: its "
                "flops are a lower bound"
            )
    operations: tuple[tuple[str, int, int], ...] = ()
    if same is False:
        operations = operation_changes(facts[a].get("operations") or {}, facts[b].get("operations") or {})
    text_a, text_b = texts.get(a), texts.get(b)
    instructions = (
        None
        if text_a is None or text_b is None
        else hlo.instruction_fingerprint(text_a) == hlo.instruction_fingerprint(text_b)
    )
    per_op = _op_seconds((a, b), texts, events, traced_calls, notes)
    table = op_times(per_op.get(a, {}), per_op.get(b, {})) if per_op.get(a) and per_op.get(b) else ()
    return ExplainDocument(
        dict(metadata),
        workload,
        a,
        b,
        fingerprints,
        steady,
        tuple(Change(q, facts[a].get(q), facts[b].get(q)) for q in QUANTITIES if q in facts[a] or q in facts[b]),
        operations,
        table,
        diff_file,
        diff_lines,
        tuple(notes),
        dict(settings),
        instructions,
    )


def median_ratio(doc: ExplainDocument) -> float | None:
    """B's median steady state over A's."""
    a, b = doc.steady.get(doc.a), doc.steady.get(doc.b)
    return statistics.median(b) / statistics.median(a) if a and b else None
