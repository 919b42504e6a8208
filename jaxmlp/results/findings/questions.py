"""Every question jaxmlp answers, once: its words, the report section it belongs to (its anchor) and whether one
benchmark file asked for by name answers it too. `findings` answers them in this order; the summary, the report's
sections and the docs' list of questions read this table."""

from __future__ import annotations

from typing import NamedTuple

from jaxmlp.results.findings.model import (
    BENCHMARKS,
    BISECTION,
    CPU_ACCELERATOR,
    FLOOR,
    GOALS,
    HISTORY,
    LOADERS,
    MATRIX,
    PROFILES,
    SCALING,
    TIMELINE,
    TRACKING,
    TRAINING,
    TTA,
)


class Question(NamedTuple):
    """One question: ``text`` as every face asks it, ``anchor`` its report section, ``of_a_run`` whether
    `run_findings` (one benchmark or scaling file asked for by name) answers it too."""

    name: str
    text: str
    anchor: str
    of_a_run: bool = False


JIT = Question("jit", "What jit buys", BENCHMARKS, True)
VMAP = Question("vmap", "What vmap buys", BENCHMARKS, True)
LOADER = Question("loaders", "Which loader, how many workers", LOADERS, True)
FLOOR_DISTANCE = Question("floor", "How far from the floor", FLOOR, True)
CPU_VS_ACCELERATOR = Question("cpu_vs_accelerator", "CPU against an accelerator", CPU_ACCELERATOR)
OPERATIONS = Question("operations", "Where the accelerator's time goes, by operation", PROFILES, True)
SLOWER_RELEASE = Question("matrix", "Which release got slower", MATRIX)
ACROSS_RELEASES = Question("timeline", "Where across releases", TIMELINE)
WHICH_RELEASE = Question("bisection", "Which release did it", BISECTION)
TRACKED = Question("tracking", "Is the newest release safe to take", TRACKING)
SCALING_ANSWER = Question("scaling", "Scaling", SCALING, True)
TIME_GOES = Question("trace", "Where the time goes", PROFILES)
CHANGES = Question("history", "Changes across runs", HISTORY)
TRAINED = Question("training", "Training", TRAINING)
GOALS_MET = Question("goals", "Goals", GOALS, True)
TO_ACCURACY = Question("tta", "Time to accuracy", TTA)
PEAK_MEMORY = Question("memory", "Peak memory", BENCHMARKS, True)
LARGE_FOLDER = Question("results_folder", "How fast the report reads a large folder", BENCHMARKS, True)

QUESTIONS = (
    JIT,
    VMAP,
    LOADER,
    FLOOR_DISTANCE,
    CPU_VS_ACCELERATOR,
    OPERATIONS,
    SLOWER_RELEASE,
    ACROSS_RELEASES,
    WHICH_RELEASE,
    TRACKED,
    SCALING_ANSWER,
    TIME_GOES,
    CHANGES,
    TRAINED,
    GOALS_MET,
    TO_ACCURACY,
    PEAK_MEMORY,
    LARGE_FOLDER,
)
"""Every question, in the order the README asks them and `findings` answers them."""
