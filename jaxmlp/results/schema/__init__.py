"""The result files' schemas, one module per kind; `parse` reads a file, upgrading an earlier form. No pandas."""

from __future__ import annotations

import typing
from collections.abc import Mapping
from typing import Any

from jaxmlp.errors import JaxmlpError
from jaxmlp.results.schema.bench import BenchmarkDocument
from jaxmlp.results.schema.bisect import BisectDocument
from jaxmlp.results.schema.common import BENCH, SCALING, SWEEP
from jaxmlp.results.schema.corpus import CorpusDocument
from jaxmlp.results.schema.explain import ExplainDocument
from jaxmlp.results.schema.roofline import CeilingsDocument, RooflineDocument
from jaxmlp.results.schema.sweep import CellsDocument
from jaxmlp.results.schema.track import TrackDocument
from jaxmlp.results.schema.train import TrainDocument
from jaxmlp.results.schema.trials import TrialsDocument
from jaxmlp.results.schema.tta import TtaDocument
from jaxmlp.results.schema.upgrade import upgrade
from jaxmlp.results.schema.validation import ValidationDocument

Document = (
    BenchmarkDocument
    | TrainDocument
    | TrialsDocument
    | BisectDocument
    | CellsDocument
    | ExplainDocument
    | CeilingsDocument
    | RooflineDocument
    | ValidationDocument
    | TtaDocument
    | CorpusDocument
    | TrackDocument
)


def parse(raw: object) -> Document:
    """The typed document a result file's JSON holds (upgraded), or a `JaxmlpError` saying what it is not."""
    try:
        kind, doc = upgrade(raw)
        if kind not in TYPED:  # a sweep's log (samples.jsonl): read line by line by `jaxmlp.results.sweep.files`
            raise JaxmlpError(f"a {kind} file is not one results document: read its folder instead")
        return TYPED[kind].from_json(doc)  # type: ignore[no-any-return]
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError, RecursionError) as e:
        raise JaxmlpError(  # any shape a file may take is its own one line, never a traceback
            f"a jaxmlp results file with a missing or malformed field ({type(e).__name__}: {e})"
        ) from None


TYPED: Mapping[str, Any] = {
    **dict.fromkeys((BENCH, SCALING, SWEEP), BenchmarkDocument),
    **{cls.written_kind: cls for cls in typing.get_args(Document)[1:]},  # each other a `ResultFile` of its kind
}
"""The document class of each kind (`common.KINDS`): each reads its JSON with ``from_json``."""
