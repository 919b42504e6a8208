"""How many more rounds of processes fit in what is left of a budget: the one rule `jaxmlp track` and `jaxmlp sweep
trials` settle by, every process of a round taken to be as slow as the slowest process so far, of any cell
(docs/methods/trials.md)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from jaxmlp.measure.records import ProcessResult
from jaxmlp.measure.sweep.matrix import Failure, Record


@dataclass(frozen=True)
class Taken:
    """What processes have taken so far: each cell's slowest, and the most seconds a call of rounds took beyond its
    processes (what ran after its last process: judging them, writing them down), in seconds."""

    slowest: Mapping[str, float] = field(default_factory=dict)
    startup: float = 0.0

    def timed(self, began: float, ends: Sequence[tuple[str, float]], ended: float) -> Taken:
        """With one more call of rounds: it began at ``began`` and ended at ``ended``, each of its processes ending at
        the time ``ends`` gives (its cell, then the clock's reading; a process takes the time since the one before)."""
        slowest, last = dict(self.slowest), began
        for cell, at in ends:
            slowest[cell] = max(slowest.get(cell, 0.0), at - last)
            last = at
        return Taken(slowest, max(self.startup, ended - last))

    def per_round(self, cells: Iterable[str]) -> float:
        """The seconds a round of ``cells`` takes, each process at the slowest any cell has taken so far (a neighbour's
        burst that slowed one cell's process may slow any other's next)."""
        return len(list(cells)) * max(self.slowest.values(), default=0.0)

    def fit(self, left: float, cells: Iterable[str]) -> int:
        """The rounds of ``cells`` that fit in ``left`` seconds: each at `per_round`, the call's `startup` once; 0
        where none does, or where a round's cost is not known."""
        per_round = self.per_round(cells)
        return 0 if per_round <= 0 else max(math.floor((left - self.startup) / per_round), 0)


class Stopwatch:
    """A call of rounds timed as it runs: when it began and when each process ended (``ended``, handed to the rounds
    as they report each process), for `Taken.timed`."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        self.began = clock()
        self.ends: list[tuple[str, float]] = []

    def ended(self, cell: str) -> None:
        self.ends.append((cell, self.clock()))

    def tick(self, round_: int, cell: str) -> None:
        """`ended`, as the rounds' ``tick`` (`jaxmlp.measure.sweep.matrix.Tick`) is told."""
        self.ended(cell)

    def recording(self, record: Record) -> Record:
        """``record``, each process's end noted after it."""

        def both(cell: str, round_: int, sample: ProcessResult | Failure) -> None:
            record(cell, round_, sample)
            self.ended(cell)

        return both

    def taken(self, before: Taken) -> Taken:
        """``before`` with this call's processes and what followed them until now."""
        return before.timed(self.began, self.ends, self.clock())
