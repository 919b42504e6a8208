"""The findings model: per question, the answer, the runs it rests on, the machine and the tables, made once."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from jaxmlp.results import history, tables
from jaxmlp.results.findings import bench, checks, others, questions, sweeps, tracking
from jaxmlp.results.findings.model import Finding, Table
from jaxmlp.results.findings.questions import QUESTIONS, Question
from jaxmlp.results.findings.select import Parts, evidence
from jaxmlp.results.store.frames import Results, without_sweeps
from jaxmlp.results.store.memo import IndexMemo
from jaxmlp.results.tables import CaptureSummary

__all__ = ["ANSWERS", "QUESTIONS", "Finding", "Question", "Table", "findings", "run_findings"]


class Asked(NamedTuple):
    """What the questions are answered from: a folder's results (``whole``) or one file asked for by name."""

    results: Results | None
    evidence: Parts  # per machine, its newest environment's runs as one (`select.evidence`), split by backend once
    runs_by_file: Mapping[str, pd.DataFrame]
    accuracy: Mapping[str, float]
    traces: Sequence[CaptureSummary]
    folder: Path | None
    past: history.RunHistory | None
    memo: IndexMemo | None
    whole: bool  # a folder: only timed runs answer; False: one file answers for itself, a smoke run too


def _results(asked: Asked) -> Results:
    assert asked.results is not None, "a question of a whole folder asked of one file"
    return asked.results


def _past(asked: Asked) -> history.RunHistory:
    assert asked.past is not None, "a question of a whole folder asked of one file"
    return asked.past


def _scaling(asked: Asked) -> list[Finding]:
    if asked.whole:
        return others.scaling(asked.runs_by_file, asked.folder)
    return (
        others.scaling(asked.runs_by_file, None, True)
        if any(map(tables.is_scaling, asked.runs_by_file.values()))
        else []
    )


ANSWERS: dict[Question, Callable[[Asked], Sequence[Finding]]] = {
    questions.JIT: lambda a: bench.jit(a.evidence, a.folder, a.whole),
    questions.VMAP: lambda a: bench.vmap(a.evidence, a.folder, a.whole),
    questions.LOADER: lambda a: bench.loaders(a.evidence, a.folder, a.whole),
    questions.FLOOR_DISTANCE: lambda a: bench.floor(a.evidence, a.folder, a.whole),
    questions.CPU_VS_ACCELERATOR: lambda a: bench.cpu_vs_accelerator(a.evidence.runs_by_file, a.folder),
    questions.OPERATIONS: lambda a: others.operations(a.runs_by_file, a.folder, a.whole),
    questions.SLOWER_RELEASE: lambda a: sweeps.answers(_results(a), a.folder, a.memo)[:1],
    questions.ACROSS_RELEASES: lambda a: sweeps.answers(_results(a), a.folder, a.memo)[1:2],
    questions.WHICH_RELEASE: lambda a: sweeps.answers(_results(a), a.folder, a.memo)[2:],
    questions.TRACKED: lambda a: tracking.newest_safe(a.folder) if a.whole else [],
    questions.SCALING_ANSWER: _scaling,
    questions.TIME_GOES: lambda a: [others.trace(a.traces, a.folder)],
    questions.CHANGES: lambda a: others.changes_across_runs(_past(a)),
    questions.TRAINED: lambda a: others.training(_results(a), a.folder),
    questions.GOALS_MET: lambda a: checks.goals(a.evidence, a.accuracy, a.folder, a.whole),
    questions.TO_ACCURACY: lambda a: others.time_to_accuracy(_results(a), a.folder),
    questions.PEAK_MEMORY: lambda a: checks.memory(a.evidence, a.folder, a.whole),
    questions.LARGE_FOLDER: lambda a: checks.results_folder(a.evidence.runs_by_file, a.folder, a.whole),
}
"""How each question of `questions.QUESTIONS` is answered (a test checks that every question has one)."""


def findings(
    results: Results,
    traces: Sequence[CaptureSummary] = (),
    folder: Path | None = None,
    past: history.RunHistory | None = None,
    memo: IndexMemo | None = None,
) -> tuple[Finding, ...]:
    """Every question's finding, in the order of `questions.QUESTIONS`; paths relative to ``folder``. ``past``:
    `history.of` the same results, computed here where not given; ``memo``: the folder's index, where costly results are
    kept."""
    past = history.of(results, memo) if past is None else past
    runs_by_file = tables.benchmark_runs(without_sweeps(results.runs))
    accuracy = tables.tutorial_accuracy(results.runs)
    asked = Asked(results, Parts(evidence(runs_by_file)), runs_by_file, accuracy, traces, folder, past, memo, True)
    answers = _cached_releases(asked)
    return tuple(f for q in QUESTIONS for f in answers(q))


def _cached_releases(asked: Asked) -> Callable[[Question], Sequence[Finding]]:
    """`ANSWERS` of ``asked``, the three release answers computed once (they share the sweeps' comparisons)."""
    three: list[Finding] = []
    release_questions = (questions.SLOWER_RELEASE, questions.ACROSS_RELEASES, questions.WHICH_RELEASE)

    def answer(question: Question) -> Sequence[Finding]:
        if question not in release_questions:
            return ANSWERS[question](asked)
        if not three:
            three.extend(sweeps.answers(_results(asked), asked.folder, asked.memo))
        return [three[release_questions.index(question)]]

    return answer


def run_findings(run: pd.DataFrame, accuracy: Mapping[str, float] | None = None) -> tuple[Finding, ...]:
    """One benchmark or scaling file's findings: the questions `Question.of_a_run` (a smoke run says it is one)."""
    by_file = tables.benchmark_runs(run)
    asked = Asked(None, Parts(by_file), by_file, accuracy or {}, (), None, None, None, False)
    return tuple(f for q in QUESTIONS if q.of_a_run for f in ANSWERS[q](asked))
