"""A finding: one question's answer, the run it rests on, the machine, and its tables as DataFrames."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import pandas as pd


class Anchors(NamedTuple):
    """Each subject's anchor in the report, one a section, by which findings, the overview and the docs link to it."""

    benchmarks: str = "benchmarks"
    floor: str = "floor"
    goals: str = "goals"
    loaders: str = "loaders"
    cpu_accelerator: str = "cpu-accelerator"
    history: str = "history"
    matrix: str = "matrix"
    timeline: str = "timeline"
    bisection: str = "bisection"
    tracking: str = "tracking"
    explained: str = "explained"
    known_regressions: str = "known-regressions"
    roofline: str = "roofline"
    scaling: str = "scaling"
    profiles: str = "profiles"
    training: str = "training"
    tta: str = "time-to-accuracy"
    trials: str = "trials"
    skipped: str = "skipped"


ANCHOR = Anchors()
"""The one table of the report's anchors (``ANCHOR.matrix``); ``tuple(ANCHOR)`` lists them in the report's order."""


class Table(NamedTuple):
    caption: str
    frame: pd.DataFrame
    formats: Mapping[str, str] = {}  # the unit of a column its name does not say (`jaxmlp.report.display`)
    long: bool = False  # folded (or behind `jaxmlp summary --all`) before it is asked for


class Finding(NamedTuple):
    """One question's answer: ``answer`` is one sentence with its numbers (where no run answers, ``answered`` is
    False and it says which command would); ``run`` the run(s) it rests on, ``machine`` what they ran on."""

    question: str
    answer: str
    anchor: str
    answered: bool = True
    run: str = ""
    machine: str = ""
    tables: tuple[Table, ...] = ()

    @property
    def asked(self) -> str:
        """The question with its machine: ``How far from the floor (AMD EPYC, 2 cores)``."""
        return f"{self.question} ({self.machine})" if self.machine else self.question

    def line(self) -> str:
        """The finding as one line: ``question (machine): answer [run]``."""
        return f"{self.asked}: {self.answer}" + (f" [{self.run}]" if self.run else "")
