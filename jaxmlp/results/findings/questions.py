"""Every question jaxmlp answers, once, in order: its words, its report section, whether one file answers it."""

from __future__ import annotations

from typing import NamedTuple

from jaxmlp.results.findings.model import ANCHOR


class Question(NamedTuple):
    """One question: its ``text``, its section's ``anchor``, and whether `run_findings` answers it (``of_a_run``)."""

    name: str
    text: str
    anchor: str
    of_a_run: bool = False


JIT = Question("jit", "What jit buys", ANCHOR.benchmarks, True)
VMAP = Question("vmap", "What vmap buys", ANCHOR.benchmarks, True)
LOADER = Question("loaders", "Which loader, how many workers", ANCHOR.loaders, True)
FLOOR_DISTANCE = Question("floor", "How far from the floor", ANCHOR.floor, True)
CPU_VS_ACCELERATOR = Question("cpu_vs_accelerator", "CPU against an accelerator", ANCHOR.cpu_accelerator)
OPERATIONS = Question("operations", "Where the accelerator's time goes, by operation", ANCHOR.profiles, True)
SLOWER_RELEASE = Question("matrix", "Which release got slower", ANCHOR.matrix)
ACROSS_RELEASES = Question("timeline", "Where across releases", ANCHOR.timeline)
WHICH_RELEASE = Question("bisection", "Which release did it", ANCHOR.bisection)
TRACKED = Question("tracking", "Is the newest release safe to take", ANCHOR.tracking)
SCALING_ANSWER = Question("scaling", "Scaling", ANCHOR.scaling, True)
TIME_GOES = Question("trace", "Where the time goes", ANCHOR.profiles)
CHANGES = Question("history", "Changes across runs", ANCHOR.history)
TRAINED = Question("training", "Training", ANCHOR.training)
GOALS_MET = Question("goals", "Goals", ANCHOR.goals, True)
TO_ACCURACY = Question("tta", "Time to accuracy", ANCHOR.tta)
PEAK_MEMORY = Question("memory", "Peak memory", ANCHOR.benchmarks, True)
LARGE_FOLDER = Question("results_folder", "How fast the report reads a large folder", ANCHOR.benchmarks, True)

QUESTIONS = tuple(q for q in list(globals().values()) if isinstance(q, Question))
"""Every question above, in the order the README asks them and `findings` answers them (the order defined)."""
