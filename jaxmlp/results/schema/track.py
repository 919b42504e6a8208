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
    """One comparison of a tracked release against ``baseline`` on one workload's steady state, and its verdict
    (slower, faster, the same, inconclusive; ``results differ`` where ``differs``, with no comparison on time)."""

    workload: str
    release: str
    baseline: str
    against: str  # previous or pinned
    comparison: Comparison
    verdict: str
    settle: int = 0  # inconclusive: about how many more processes a side would settle it (0: unknown, out of reach)
    explanation: str = ""  # slower or faster: its explain-<time> folder, relative to the results folder
    unexplained: str = ""  # or why it has none, in one line
    differs: str = ""  # why the two sides' values differ
    metric: str = ""  # the time it rests on (wall, or CPU where a neighbour showed) and why; "" in older files: wall
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
