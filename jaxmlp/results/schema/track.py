"""`jaxmlp track`'s record of one call (``track.json`` in its ``track-<time>-<machine>-<pid>`` folder, beside the
sweep files of what it measured): its series (machine and workloads), the release it started the series at or the
last one tracked before it, the releases it measured and now tracks, and each comparison with its verdict. The
history of a series is every such file of its machine and workloads: the files are the truth."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jaxmlp.jsonio import Plain
from jaxmlp.results.schema.common import JSON, TRACK, ResultFile
from jaxmlp.results.schema.fields import LIST, OBJECT, TEXT, record
from jaxmlp.results.schema.fields import field as checked
from jaxmlp.stats import Comparison


@dataclass(frozen=True)
class Tracked(Plain):
    """One comparison of a tracked release: ``release`` against ``baseline`` (``against``: ``previous`` or
    ``pinned``) on one workload's steady state, its comparison, its verdict (slower, faster, the same,
    inconclusive), where inconclusive, about how many more processes a side would settle it (0: unknown or not
    within reach), and, where slower or faster, its explanation (``explanation``: its ``explain-<time>`` folder
    relative to the results folder) or why it has none (``unexplained``: one line). Where the two sides' values
    differ (``differs``: why), its verdict is ``results differ`` and it has no comparison on time. ``metric``: the
    time it rests on (wall time, or CPU time where a neighbour showed) and ``metric_why``; "" in older files (wall
    time)."""

    workload: str
    release: str
    baseline: str
    against: str
    comparison: Comparison
    verdict: str
    settle: int = 0
    explanation: str = ""
    unexplained: str = ""
    differs: str = ""
    metric: str = ""
    metric_why: str = ""


@dataclass(frozen=True)
class TrackDocument(ResultFile, kind=TRACK):
    """One call of `jaxmlp track`: ``series`` (``machine``: its label; ``workloads``: their names), where it
    started the series (``start``: why; "" for a series begun before), the last release tracked before it, the
    pinned release, the releases measured side by side and those it now tracks (measured, or the start), each
    comparison, the cells it could not measure (and why) and its seconds."""

    metadata: Mapping[str, Any]
    series: Mapping[str, Any]
    settings: Mapping[str, Any]
    start: str
    last: str
    pinned: str
    measured: tuple[str, ...]
    tracked: tuple[str, ...]
    comparisons: tuple[Tracked, ...]
    unmeasured: Mapping[str, str]
    seconds: float

    @property
    def machine(self) -> str:
        return str(self.series.get("machine", ""))

    @property
    def workloads(self) -> tuple[str, ...]:
        return tuple(str(w) for w in self.series.get("workloads", ()))

    @property
    def timestamp(self) -> str:
        return str(self.metadata.get("timestamp") or "")

    def to_json(self) -> JSON:
        series = {"machine": self.machine, "workloads": list(self.workloads)}  # only these, as text
        return {**super().to_json(), "series": series}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> TrackDocument:
        """The call's record, each field checked (`record`), its series' machine and workloads too."""
        series = checked(doc, "series", "", OBJECT)
        checked(series, "machine", "series.", TEXT)
        checked(series, "workloads", "series.", LIST)
        return record(cls, doc)
