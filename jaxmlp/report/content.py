"""The report's content types (`ReportSection`) and the words every section shares. Pure: no matplotlib, no HTML."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from jaxmlp import registry
from jaxmlp.results.findings import Finding as Finding
from jaxmlp.results.findings import Table as Table
from jaxmlp.results.store import layout


class Figure(NamedTuple):
    """A plot to draw: its alt text, its kind (`jaxmlp.report.plots.PLOTTERS`) and the data it is drawn from."""

    alt: str
    kind: str
    data: tuple[Any, ...]


@dataclass(frozen=True)
class Run:
    """One run's part of a section: its ``label``, a line saying where its numbers come from, its tables and plots."""

    label: str
    note: str
    tables: tuple[Table, ...] = ()
    plots: tuple[Figure, ...] = ()
    stamp: str = ""  # `jaxmlp.results.store.layout.stamp_in`: runs sort by it
    backends: str = ""  # where a section shows the newest run of each backend


@dataclass(frozen=True)
class ReportSection:
    """One subject: its title, anchor, findings, how to read it, the runs shown in full and the earlier runs."""

    title: str
    note: str
    shown: tuple[Run, ...] = ()
    earlier: tuple[Run, ...] = ()
    anchor: str = ""
    answers: tuple[Finding, ...] = ()

    @property
    def tables(self) -> tuple[Table, ...]:
        return tuple(t for run in self.shown for t in run.tables)

    @property
    def plots(self) -> tuple[Figure, ...]:
        return tuple(p for run in self.shown for p in run.plots)


def host_note(name: Any) -> str:
    """`` (host NAME)`` where a run recorded its host's name (only where the user gave it), else nothing."""
    return f" (host {name})" if isinstance(name, str) and name else ""


def describe(env: dict[str, Any]) -> str:
    """One run's environment as one line."""
    return (
        f"{env['file']}: {env['timestamp']}, {env['machine']}{host_note(env.get('host'))}, backends {env['backends']} "
        f"({env['devices']}); jax {env['jax']}, jaxlib {env['jaxlib']}, torch {env['torch']}, python {env['python']}; "
        f"XLA_FLAGS '{env['xla_flags'] or ''}'; commit {env['commit']}; size {env['size']}; "
        f"data {registry.dataset_label(env['dataset'])}"
    )


FOLDED = "Earlier runs are listed below the newest (`jaxmlp summary PATH` shows one in full)."


def shown_first(answers: Sequence[Finding]) -> Callable[[str], tuple[bool, str]]:
    """The order of a section's runs by their stamps: the one its findings rest on first, then the newest."""
    preferred = {layout.stamp_in(f.run.split(" (")[0]) for f in answers} - {""}
    return lambda stamp: (stamp in preferred, stamp)


def subject(title: str, anchor: str, note: str, runs: Sequence[Run], answers: Sequence[Finding] = ()) -> ReportSection:
    """A section over runs: the one its findings rest on (else the newest) in full, the others as labels."""
    key = shown_first(answers)
    ordered = sorted(runs, key=lambda r: key(r.stamp), reverse=True)
    earlier = tuple(replace(r, tables=(), plots=()) for r in ordered[1:])
    return ReportSection(
        title, f"{note} {FOLDED}" if earlier else note, tuple(ordered[:1]), earlier, anchor, tuple(answers)
    )
