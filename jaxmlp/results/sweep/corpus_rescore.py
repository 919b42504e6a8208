"""A corpus run scored again from its cases' files, measuring nothing (`jaxmlp sweep corpus --rescore FOLDER`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from jaxmlp.errors import JaxmlpError
from jaxmlp.measure.sweep.corpus import Case, Runs
from jaxmlp.results.schema.corpus import CaseScore, CorpusDocument
from jaxmlp.results.store import layout
from jaxmlp.results.store.reading import read_document
from jaxmlp.results.sweep.corpus import case_found, score


def recorded(folder: Path) -> CorpusDocument:
    """The scorecard a corpus run wrote in ``folder`` (one line naming the problem where there is none)."""
    path = folder / layout.SCORECARD_FILE
    if not path.is_file():
        raise JaxmlpError(
            f"--rescore {folder}: no {layout.SCORECARD_FILE} there: give a folder `jaxmlp sweep corpus` wrote"
        )
    doc = read_document(path)
    if not isinstance(doc, CorpusDocument):
        raise JaxmlpError(f"--rescore {folder}: its {layout.SCORECARD_FILE} is not a corpus scorecard")
    return doc


def rescored(
    folder: Path, doc: CorpusDocument, manifest: Sequence[Case], rescoring: Mapping[str, Any]
) -> tuple[CorpusDocument, tuple[str, ...]]:
    """``doc`` (the run in ``folder``) scored again from its cases' files, and a line for each changed expectation; what
    the run recorded is kept, ``rescoring`` beside it (docs/results/corpus.md)."""
    named = {c.name: c for c in manifest}
    ran = Runs(doc.settings.get("processes"), doc.settings.get("calls"), doc.settings.get("slowdown_trials") or 0)
    scores: list[CaseScore] = []
    differs: list[str] = []
    for old in doc.scores:
        case, now = old.case, named.get(old.case.name)
        if now is not None:  # what describes the case, not what it expects
            origins = case.expect.origins or now.expect.origins
            case = replace(case, summary=now.summary, expect=replace(case.expect, origins=origins))
        if now is not None and replace(now.expect, origins=()) != replace(case.expect, origins=()):
            differs.append(f"{case.name}: the manifest's expectation differs from the run's; scored with the run's")
        case = replace(case, runs=case.runs.over(ran))
        found = case_found(folder / case.name, old.error, old.slowdown)
        scores.append(score(case, found, old.folders, old.seconds))
    meta = {**doc.metadata, "rescored": dict(rescoring)}
    return CorpusDocument(meta, doc.settings, tuple(scores), doc.seconds, doc.disk), tuple(differs)
