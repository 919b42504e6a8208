"""A corpus case scored from what the suite's own commands found in its folder. Pure but for `case_found`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from jaxmlp import changepoints, registry
from jaxmlp.changepoints import Change
from jaxmlp.measure.sweep.corpus import Case
from jaxmlp.measure.sweep.slowdown import UNSLOWED, SlowdownTrials, group
from jaxmlp.measure.workload_names import workload_name
from jaxmlp.registry import version_key
from jaxmlp.results.schema.bisect import BisectDocument
from jaxmlp.results.schema.corpus import CaseScore
from jaxmlp.results.schema.explain import ExplainDocument
from jaxmlp.results.store.frames import load
from jaxmlp.results.store.writing import ResultsStore
from jaxmlp.results.sweep.compared import (
    TimelineColumn,
    change_said,
    column_verdicts,
    pooled_groups,
    timeline_columns,
)
from jaxmlp.results.sweep.views import is_timeline, sweeps
from jaxmlp.stats import SAME, verdict_line
from jaxmlp.units import interval, ratio

METRIC_WORDS = {"run": "run time", "compile": "compile time", "memory": "peak memory"}
"""What each metric of a case (`Case.metric`) is, as its lines say it."""


READ_ONLY = (
    "from the timeline's samples alone (no release between its ends that the timeline did not measure): not scored"
)
"""Why a bisection whose every probe read the timeline's samples is shown, not scored: it checks nothing new."""


@dataclass(frozen=True)
class CaseFound:
    """What the commands a case ran found: columns, failures, explanations, bisection, error and trials."""

    columns: tuple[TimelineColumn, ...] = ()
    compile_columns: tuple[TimelineColumn, ...] = ()  # the same detector over each process's compile time
    memory_columns: tuple[TimelineColumn, ...] = ()  # and over each process's own peak memory
    failures: tuple[tuple[str, str], ...] = ()
    explanations: tuple[ExplainDocument, ...] = ()
    bisection: BisectDocument | None = None
    error: str = ""
    slowdown: SlowdownTrials | None = None


def case_found(folder: Path, error: str = "", slowdown: SlowdownTrials | None = None) -> CaseFound:
    """What the timeline, bisection and explanations under a case's ``folder`` found (read from their files)."""
    results = load(ResultsStore(folder))
    columns: list[TimelineColumn] = []
    compile_columns: list[TimelineColumn] = []
    memory_columns: list[TimelineColumn] = []
    for where, rows in sweeps(results.runs, [p.parent for p, _ in results.bisections]).items():
        if is_timeline(where):
            columns += timeline_columns(rows, results.samples)
            compile_columns += timeline_columns(rows, results.samples, registry.SWEEP_COMPILE)
            memory_columns += timeline_columns(rows, results.samples, registry.SWEEP_PEAK_RSS)
    failures = []
    for path, doc in results.cells:
        if not is_timeline(path.parent):
            continue
        for cell in doc.cells:
            if cell.xla_flags:
                continue
            if cell.status != "ok":
                failures.append((cell.label, cell.status))
            elif cell.failed:
                failures.append((cell.label, f"{cell.failed} process(es) gave no sample: {cell.failure}"))
    return CaseFound(
        tuple(columns),
        tuple(compile_columns),
        tuple(memory_columns),
        tuple(sorted(failures, key=lambda f: version_key(f[0]))),
        tuple(doc for _, doc in results.explanations),
        results.bisections[-1][1] if results.bisections else None,
        error,
        slowdown,
    )


def _column(found: CaseFound, workload: str, flags: str, metric: str = "run") -> TimelineColumn | None:
    """The timeline's column of ``workload`` and XLA ``flags`` on ``metric``."""
    columns = {"compile": found.compile_columns, "memory": found.memory_columns}.get(metric, found.columns)
    return next((c for c in columns if c.workload == workload and c.xla_flags == flags), None)


def metric_changes(case: Case, found: CaseFound) -> tuple[tuple[str, str], ...]:
    """The release pairs (before, at) of each change the timeline found in a case's own metric, without XLA flags."""
    column = _column(found, workload_name(case.workload), "", case.metric)
    return tuple((c.before, c.at) for c in column.changes) if column is not None else ()


def _at(column: TimelineColumn | None, release: str, direction: str) -> Change | None:
    """The change ``column`` found at ``release`` going ``direction`` (None: none)."""
    changes = column.changes if column is not None else ()
    return next((c for c in changes if c.at == release and c.direction == direction), None)


def score(case: Case, found: CaseFound, folders: Sequence[str] = (), seconds: float = 0.0) -> CaseScore:
    """``case`` scored on ``found``, each part where it applies (docs/results/corpus.md)."""
    name = workload_name(case.workload)
    base = _column(found, name, "", case.metric)
    prefix = f"{METRIC_WORDS[case.metric]}: " if case.metric != "run" else ""
    flagged = tuple(prefix + change_said(base, c) for c in base.changes) if base is not None else ()
    failures = tuple(f"{release}: {reason}" for release, reason in found.failures)
    out = CaseScore(case, flagged, failures=failures, error=found.error, folders=tuple(folders), seconds=seconds)
    why: list[str] = []
    if found.error:
        why.append(f"its command stopped: {found.error}")
    expect = case.expect
    if case.is_control:
        ends = column_verdicts(base)[0] if base is not None and not flagged else None
        same = ends is not None and ends.word == SAME
        verdict = None if base is None else column_verdicts(base)[0].word
        out = replace(out, clean=same and not failures and not found.error, verdict=verdict)
        if base is None:
            why.append(f"nothing was measured of {name}: a control is clean only where it was measured")
        if flagged:
            why.append(f"a control, yet flagged: {'; '.join(flagged)}")
        elif ends is not None and not same:
            assert base is not None
            why.append(
                f"a control is clean only where it shows the same time: {base.releases[-1]} against "
                f"{base.releases[0]}: {prefix}{verdict_line(ends)}"
            )
    elif expect.direction == "fails":
        first = found.failures[0][0] if found.failures else None
        right = first == expect.release
        out = replace(out, found=right, direction="fails" if first else None, expected_failure=right)
        if not right:
            why.append(f"expected {expect.release} to fail first; " + (f"{first} did" if first else "none failed"))
    else:
        out, said = _found(case, found, base, out)
        why += said
    out, said = _bisected(case, found, out)
    why += said
    out, said = _explained(case, found, base, out)
    if out.found is True:
        why += said
    else:  # what was not found is not explained, whatever an explanation filed says
        out = replace(out, explained=None)
    out = replace(out, slowdown=found.slowdown, injected=injected_found(found.slowdown))
    return replace(out, why=tuple(why))


def injected_found(trials: SlowdownTrials | None) -> tuple[tuple[float, int, int], ...]:
    """Of each injected slowdown, ``(factor, found, trials)``: in how many trials the detector flags it."""
    if trials is None:
        return ()
    out = []
    for factor in trials.factors:
        slowed = group(factor)
        counted = [t for t in trials.values if min(len(t.get(UNSLOWED, ())), len(t.get(slowed, ()))) >= 2]
        hits = sum(
            any(
                c.at == slowed and c.direction == "slower"
                for c in changepoints.detect([UNSLOWED, slowed], [t[UNSLOWED], t[slowed]])
            )
            for t in counted
        )
        out.append((factor, hits, len(counted)))
    return tuple(out)


def _found(case: Case, found: CaseFound, base: TimelineColumn | None, out: CaseScore) -> tuple[CaseScore, list[str]]:
    expect = case.expect
    assert expect.release is not None and expect.ratio is not None
    if base is None:
        return replace(out, found=False), [f"the timeline measured no column of {workload_name(case.workload)}"]
    change = _at(base, expect.release, expect.direction)
    if change is None:
        elsewhere = "; ".join(c.line() for c in base.changes) or "nothing"
        return replace(out, found=False), [f"expected {expect.release} {expect.direction}; flagged {elsewhere}"]
    c = change.comparison
    low, high = expect.ratio
    pooled = pooled_groups(base, change)
    in_band = None if pooled else low <= c.ratio <= high  # a ratio of two groups pooled is no one population's
    out = replace(
        out, found=True, direction=change.direction, ratio=c.ratio, ci_low=c.ci_low, ci_high=c.ci_high, in_band=in_band
    )
    if kept := _kept_with_flag(case, found, base):
        return replace(out, found=False), [kept]
    if pooled:
        return out, [f"{ratio(c.ratio)} not scored against the band: {pooled}"]
    if in_band:
        return out, []
    return out, [f"{ratio(c.ratio)} ({interval(c.ci_low, c.ci_high)}) is outside the band {ratio(low)}-{ratio(high)}"]


def _kept_with_flag(case: Case, found: CaseFound, base: TimelineColumn) -> str:
    """Why a change that ``case``'s XLA flag must not undo is not found in the flag's column; "" where it is."""
    flag, expect = case.expect.flag_kept, case.expect
    if not flag:
        return ""
    flagged = _column(found, base.workload, flag, case.metric)
    if flagged is None:
        return f"no column ran with {flag}: the change must be found with it too"
    if _at(flagged, str(expect.release), expect.direction) is not None:
        return ""
    elsewhere = "; ".join(c.line() for c in flagged.changes) or "nothing"
    return f"with {flag} (which must not undo it) {expect.release} is not {expect.direction}; flagged {elsewhere}"


def _bisected(case: Case, found: CaseFound, out: CaseScore) -> tuple[CaseScore, list[str]]:
    if case.bisect is None:
        return out, []
    if case.metric != "run":
        skipped = f"not scored: the bisection tests the steady state (run time), not {METRIC_WORDS[case.metric]}"
        return out, [f"the bisection: {skipped}"]
    doc = found.bisection
    if doc is None:
        return replace(out, bisect_found=False), ["the bisection filed no answer"]
    result = doc.bisection
    answer = result.first if result.answered else result.status
    if result.status == "fails" and case.expect.direction != "fails":  # a failure where a change was expected
        answer = f"{result.first} (fails)"
    if case.is_control:
        right = result.status == "no change"
    else:
        expected = "fails" if case.expect.direction == "fails" else "found"  # the first that fails, or that changed
        right = result.status == expected and result.first == case.expect.release
    reason = result.reason.removeprefix(f"{result.status}: ")
    read = doc.settings.get("probes_read") or {}
    if result.probes and len(read) == len(result.probes):  # nothing measured the timeline had not
        return replace(out, bisected=answer), [f"the bisection: {answer}, {READ_ONLY}"]
    said = [] if right else [f"the bisection answered {answer}" + (f" ({reason})" if reason else "")]
    return replace(out, bisected=answer, bisect_found=right), said


SAME_INSTRUCTIONS = "the same instructions"
"""An explanation's kind where the optimized HLO differs only in order, names or annotations: no program change."""
NOT_COMPARED = "program (instructions not compared)"
"""An explanation's kind where an older explanation compared no instructions and no operation count changed."""


def explanation_kind(doc: ExplainDocument) -> str:
    """What an explanation found: ``program``, ``below HLO`` or `SAME_INSTRUCTIONS`; `NOT_COMPARED` for an older one
    that compared no instructions where no operation count changed."""
    same = doc.same_hlo
    if same is None:
        return "no program to compare"
    if same:
        return "below HLO"
    if doc.same_instructions is None:
        return "program" if doc.operations else NOT_COMPARED
    return SAME_INSTRUCTIONS if doc.same_instructions else "program"


def _explained(
    case: Case, found: CaseFound, base: TimelineColumn | None, out: CaseScore
) -> tuple[CaseScore, list[str]]:
    expect = case.expect
    if case.is_control or expect.direction == "fails" or expect.release is None:
        return out, []
    if expect.cause == "flag":
        flagged = _column(found, workload_name(case.workload), expect.flag, case.metric)
        if flagged is None:
            return replace(out, explained=False), [f"no column ran with {expect.flag}"]
        at = case.releases.index(expect.release) if expect.release in case.releases else 0
        before = case.releases[at - 1] if at > 0 else None  # the release before it (the list is oldest first)
        missing = [r for r in (before, expect.release) if r is not None and not _measured(flagged, r)]
        if missing:  # a flag that failed on a release cannot be said to undo anything there
            said = f"{expect.flag} not measured at {', '.join(missing)}"
            return replace(out, explanation=f"flag: {said}", explained=None), [said]
        left = _at(flagged, expect.release, expect.direction)
        undone = left is None and out.found is True
        kind = f"flag: {expect.flag} {'undoes it' if undone else 'does not undo it'}"
        said = kind + (f" (with it: {change_said(flagged, left)})" if left is not None else "")
        return replace(out, explanation=kind, explained=undone), [] if undone else [said]
    change = _at(base, expect.release, expect.direction)
    pair = (change.before, change.at) if change is not None else None
    b = found.bisection.bisection if found.bisection is not None else None
    if b is not None and b.status == "found" and b.first == expect.release:
        pair = pair or (str(b.after), expect.release)
    doc = next((d for d in found.explanations if pair is not None and (d.a, d.b) == pair), None)
    if doc is None:
        said = "no explanation filed" + (f" for {pair[0]} -> {pair[1]}" if pair else ": nothing found to explain")
        return replace(out, explained=False if expect.cause == "program" else None), [said]
    kind = explanation_kind(doc)
    if expect.cause != "program":
        return replace(out, explanation=kind), []
    if kind == NOT_COMPARED:
        said = "the optimized HLO differs, but its instructions were not compared (an older explanation): not scored"
        return replace(out, explanation=kind, explained=None), [said]
    right = kind == "program"
    return replace(out, explanation=kind, explained=right), [] if right else [f"expected a program change; {kind}"]


def _measured(column: TimelineColumn, release: str) -> bool:
    """Whether a timeline column holds samples of ``release``."""
    return release in column.releases and bool(column.samples[column.releases.index(release)])


def trials_said(trials: SlowdownTrials) -> str:
    """A case's injected-slowdown trials in a line: each slowdown found in how many trials, and how they ran."""
    found = ", ".join(f"{ratio(f)} found in {n} of {m} trials" for f, n, m in injected_found(trials))
    failed = f"; {len(trials.failures)} process(es) gave no sample" if trials.failures else ""
    unslowed = f"; unslowed: {trials.unslowed_from}" if trials.unslowed_from else ""
    return f"{found} ({trials.processes} processes a group, {trials.calls} calls a process{unslowed}){failed}"
