"""The progress of a command's processes: a bar on a terminal, a line per process in a log; the files a folder's
walk skipped, a line each."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from jaxmlp.report.escape import terminal, unwrapped

if TYPE_CHECKING:
    from jaxmlp.measure.sweep.matrix import Tick
    from jaxmlp.results.store.reading import Skipped


def warn_skipped(skipped: Iterable[Skipped], command: str) -> None:
    """One line on stderr for each file a folder held that is not a result (never modified)."""
    for s in skipped:
        print(s.line(f"jaxmlp {command}"), file=sys.stderr)


@contextlib.contextmanager
def progress_bar(total: int, unit: str = "process") -> Iterator[Tick]:
    """A bar on a terminal; in a log, a plain line per ``unit`` (a process, or what the caller counts)."""
    from tqdm import tqdm

    bar = tqdm(total=total, unit=unit, disable=None, file=unwrapped(sys.stderr))  # its \r kept: one line
    start = time.monotonic()
    done = [0]

    def tick(round_: int, label: str) -> None:
        done[0] += 1
        bar.set_postfix_str(terminal(f"round {round_ + 1}, {label}"))
        bar.update()
        if bar.disable:
            where = f"{label}, round {round_ + 1}" if unit == "process" else label
            print(
                f"  {done[0]}/{total} {'processes' if unit == 'process' else unit + 's'} ({where}), "
                f"{time.monotonic() - start:.0f} s",
                file=sys.stderr,
                flush=True,
            )

    try:
        yield tick
    finally:
        bar.close()
