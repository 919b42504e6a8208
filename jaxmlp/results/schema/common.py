"""What every result file carries: its kind and the version of its schema."""

from __future__ import annotations

from typing import Any, ClassVar

from jaxmlp import jsonio

KIND = "kind"
SCHEMA_VERSION = "schema_version"
CURRENT = 10
"""The schema every file is written in now; `upgrade` reads every earlier one (docs/reference/results-files.md)."""


METADATA_KEY = "jaxmlp"
"""The key of jaxmlp's metadata in a pytest-benchmark file's ``machine_info`` (version 1: of a document's kind)."""

# The kinds of document.
BENCH = "bench"  # a pytest-benchmark file of `nox -s bench`
SCALING = "scaling"  # `jaxmlp scaling` (a pytest-benchmark file)
SWEEP = "sweep"  # one cell of a version sweep (a pytest-benchmark file, a sample per process)
CELLS = "sweep-cells"  # a sweep's cells.json
BISECT = "bisect"  # `jaxmlp sweep bisect`
TRAIN = "train"  # `jaxmlp train --json`
TRIALS = "detector-trials"  # `jaxmlp sweep trials`
VALIDATION = "detector-validation"  # `jaxmlp sweep validate`: the change-point detector on synthetic histories
SWEEP_LOG = "sweep-log"  # the first line of a sweep's samples.jsonl: its plan (the samples follow, a line each)
EXPLAIN = "explain"  # `jaxmlp sweep explain A B`
CEILINGS = "ceilings"  # this machine's FLOP rate and memory bandwidth (the roofline's ceilings)
ROOFLINE = "roofline"  # `jaxmlp roofline`: each workload against the ceilings
TTA = "tta"  # `jaxmlp tta`: time to accuracy
CORPUS = "corpus"  # `jaxmlp sweep corpus`: the known regressions, scored
TRACK = "track"  # `jaxmlp track`: one call's releases measured and their verdicts
KINDS = (
    BENCH,
    SCALING,
    SWEEP,
    CELLS,
    BISECT,
    TRAIN,
    TRIALS,
    SWEEP_LOG,
    EXPLAIN,
    CEILINGS,
    ROOFLINE,
    VALIDATION,
    TTA,
    CORPUS,
    TRACK,
)

JSON = dict[str, Any]


def header(kind: str) -> JSON:
    """The first two keys of every file written now."""
    assert kind in KINDS
    return {KIND: kind, SCHEMA_VERSION: CURRENT}


class ResultFile(jsonio.Plain):
    """A result file's dataclass: its fields as `jsonio` writes them, after the `header` of its kind (``kind=``)."""

    written_kind: ClassVar[str]

    def __init_subclass__(cls, kind: str = "", **rest: Any) -> None:
        super().__init_subclass__(**rest)
        cls.written_kind = kind

    def to_json(self) -> JSON:
        return {**header(self.written_kind), **jsonio.to_json(self)}
