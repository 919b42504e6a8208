"""A finding: one question's answer, the run it rests on, the machine, and its tables as DataFrames."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import pandas as pd

# Each subject's anchor in the report: the overview links to them.
BENCHMARKS, LOADERS, CPU_ACCELERATOR, HISTORY, MATRIX = "benchmarks", "loaders", "cpu-accelerator", "history", "matrix"
BISECTION, SCALING, PROFILES, TRAINING = "bisection", "scaling", "profiles", "training"
TRIALS, SKIPPED, TIMELINE = "trials", "skipped", "timeline"
EXPLAINED, ROOFLINE, GOALS, FLOOR = "explained", "roofline", "goals", "floor"
TTA = "time-to-accuracy"
TRACKING = "tracking"


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
