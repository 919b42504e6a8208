"""The corpus of known regressions (``bench/corpus/corpus.toml``), read and checked before anything is measured."""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from jaxmlp.errors import JaxmlpError
from jaxmlp.jsonio import Plain, to_json
from jaxmlp.registry import version_key

KINDS = ("step", "transient", "flag", "failure", "compile", "memory", "control")
DIRECTIONS = ("slower", "faster", "none", "fails")
CAUSES = ("flag", "program", "none", "unknown")
METRICS = ("run", "compile", "memory")
NAME = re.compile(r"[a-z0-9][a-z0-9.-]*")
ORIGINS = ("https://", "measured:")
"""How each entry of an expectation's ``from`` starts: a public report's address, or ``measured:``."""
RUN_KEYS = ("processes", "calls", "slowdown_trials")
"""What a case runs with, set once at the manifest's top for every case and by a case for itself (`Runs`)."""


@dataclass(frozen=True)
class Runs(Plain):
    """What a case runs with: processes, calls and injected-slowdown trials (None: the command's default)."""

    processes: int | None = None
    calls: int | None = None
    slowdown_trials: int | None = None

    def over(self, defaults: Runs) -> Runs:
        """These settings, each one not set taken from ``defaults``."""
        return Runs(*(getattr(self, k) if getattr(self, k) is not None else getattr(defaults, k) for k in RUN_KEYS))


@dataclass(frozen=True)
class Expect:
    """What a user should find: the first release that differs (None for a control), which way, the band, what `jaxmlp
    sweep explain` finds, and ``flag`` (an XLA flag column, ``flag_undoes``: whether it undoes the change)."""

    direction: str
    release: str | None = None
    ratio: tuple[float, float] | None = None
    cause: str = "unknown"
    flag: str = ""
    origins: tuple[str, ...] = ()  # the manifest's ``from``: where the release and band come from (`ORIGINS`)
    flag_undoes: bool = True

    @property
    def flag_kept(self) -> str:
        """The XLA flag that must not undo the change ("" where none is named)."""
        return self.flag if self.flag and not self.flag_undoes else ""

    @property
    def said_by(self) -> str:
        """Where the expectation comes from in a word or two: the report, this machine, or both ("" unsaid)."""
        words = ["the report" if o.startswith("https://") else "this machine" for o in self.origins]
        return " and ".join(dict.fromkeys(words))


@dataclass(frozen=True)
class Case(Plain):
    """One known regression (or a control): its workload, releases, bisection range, time and what should be found."""

    name: str
    workload: str
    source: str
    summary: str
    kind: str
    releases: tuple[str, ...]
    expect: Expect
    bisect: tuple[str, str] | None = None
    metric: str = "run"
    runs: Runs = Runs()
    compiles: int = 1  # compiles of its workload a process (`Measuring.compiles`): a compile case asks several

    @property
    def is_control(self) -> bool:
        return self.kind == "control"

    def to_json(self) -> dict[str, Any]:
        doc = to_json(self)  # its expectation and runs last, as written
        expect, runs = doc.pop("expect"), doc.pop("runs")
        return {**doc, "expect": expect, "runs": runs}


def read_manifest(path: Path, only: Sequence[str] = ()) -> list[Case]:
    """The cases of a corpus manifest (``only``'s, if any), each checked; one line naming a wrong field."""
    try:
        doc = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise JaxmlpError(
            f"{path}: no such manifest: give the corpus's corpus.toml (bench/corpus/corpus.toml)"
        ) from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise JaxmlpError(f"{path}: not a readable TOML manifest ({e})") from None
    raw = doc.get("case")
    if not isinstance(raw, list) or not raw:
        raise JaxmlpError(f"{path}: no [[case]] tables: each case is a [[case]] table (bench/corpus/README.md)")
    defaults = _runs(f"{path}: its top", doc)
    cases = [replace(c, runs=c.runs.over(defaults)) for c in (_case(path, i, c) for i, c in enumerate(raw))]
    names = [c.name for c in cases]
    if twice := sorted({n for n in names if names.count(n) > 1}):
        raise JaxmlpError(f"{path}: case names must be unique: {', '.join(twice)} given twice")
    if unknown := [n for n in only if n not in names]:
        raise JaxmlpError(f"--cases {' '.join(unknown)}: no such case in {path} (it holds {', '.join(names)})")
    return [c for c in cases if not only or c.name in only]


def _case(path: Path, index: int, raw: Any) -> Case:
    where = f"{path}: case {index + 1}"
    if not isinstance(raw, dict):
        raise JaxmlpError(f"{where} is not a table")
    name = raw.get("name")
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise JaxmlpError(f"{where}: name {name!r}: give a name of a-z, 0-9, dots and dashes (its folder's name)")
    where = f"{path}: case {name}"

    def text(key: str, default: str | None = None) -> str:
        value = raw.get(key, default)
        if not isinstance(value, str):
            raise JaxmlpError(f"{where}: {key} {value!r}: give it as text")
        return value

    def choice(key: str, among: Sequence[str], table: Mapping[str, Any] = raw, default: str | None = None) -> str:
        value = table.get(key, default)
        if value not in among:
            raise JaxmlpError(f"{where}: {key} {value!r}: choose one of {', '.join(among)}")
        return str(value)

    kind = choice("kind", KINDS)
    releases = raw.get("releases")
    if not isinstance(releases, list) or len(releases) < 3 or not all(isinstance(v, str) for v in releases):
        raise JaxmlpError(f"{where}: releases: give 3 or more releases, oldest first (a timeline needs 3)")
    if list(releases) != sorted(releases, key=version_key) or len(set(releases)) != len(releases):
        raise JaxmlpError(f"{where}: releases {', '.join(releases)}: give each once, oldest first")
    workload = text("workload")
    file, _, attribute = workload.partition(":")
    if not file.endswith(".py") or not attribute:
        raise JaxmlpError(f"{where}: workload {workload!r}: give it as cases/FILE.py:make (relative to the manifest)")
    if not (path.parent / file).is_file():
        raise JaxmlpError(f"{where}: workload {workload!r}: {path.parent / file} does not exist")
    ends = raw.get("bisect")
    if ends is not None and (
        not isinstance(ends, list) or len(ends) != 2 or not all(isinstance(v, str) and v in releases for v in ends)
    ):
        raise JaxmlpError(f"{where}: bisect {ends!r}: give two of its releases, [GOOD, BAD]")
    table = raw.get("expect")
    if not isinstance(table, dict):
        raise JaxmlpError(f"{where}: no [case.expect] table: say what should be found")
    return Case(
        name,
        f"{os.path.relpath(path.parent / file)}:{attribute}",  # made absolute for the workers (`Measuring`)
        text("source", ""),
        text("summary", ""),
        kind,
        tuple(releases),
        _expect(where, kind, releases, table, choice),
        None if ends is None else (ends[0], ends[1]),
        choice("metric", METRICS, default="run"),
        _runs(where, raw),
        _compiles(where, raw.get("compiles", 1)),
    )


def _runs(where: str, table: Mapping[str, Any]) -> Runs:
    """The `Runs` a table sets (the manifest's top: every case's; a case's: its own)."""
    for key in RUN_KEYS:
        value = table.get(key)
        least = 0 if key == "slowdown_trials" else 2
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < least):
            raise JaxmlpError(f"{where}: {key} {value!r}: give a whole number, {least} or more")
    return Runs(*(table.get(k) for k in RUN_KEYS))


def _compiles(where: str, value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise JaxmlpError(f"{where}: compiles {value!r}: give the compiles a process, a whole number from 1")
    return value


def _expect(where: str, kind: str, releases: Sequence[str], table: Mapping[str, Any], choice: Any) -> Expect:
    direction = choice("direction", DIRECTIONS, table)
    cause = choice("cause", CAUSES, table, "none" if kind == "control" else "unknown")
    release = table.get("release")
    if (kind == "control") != (direction == "none"):
        raise JaxmlpError(f'{where}: a control expects direction "none", and only a control does')
    if direction == "none":
        if release is not None:
            raise JaxmlpError(f"{where}: a control names no release in [case.expect]")
        return Expect(direction, cause=cause, origins=_origins(where, table))
    if release not in releases[1:]:
        raise JaxmlpError(f"{where}: expect.release {release!r}: give one of its releases after the first")
    band = table.get("ratio")
    ratio = None
    if direction != "fails":
        if (
            not isinstance(band, list)
            or len(band) != 2
            or not all(isinstance(x, (int, float)) and x > 0 for x in band)
            or band[0] > band[1]
        ):
            raise JaxmlpError(f"{where}: expect.ratio {band!r}: give the band of new over old time, [LOW, HIGH]")
        ratio = (float(band[0]), float(band[1]))
    flag, undoes = table.get("flag", ""), table.get("flag_undoes", True)
    if not isinstance(undoes, bool):
        raise JaxmlpError(f"{where}: expect.flag_undoes {undoes!r}: give true or false")
    if cause == "flag" and not undoes:
        raise JaxmlpError(f'{where}: cause "flag" is a flag that undoes it: drop flag_undoes = false, or the cause')
    if (cause == "flag" or not undoes) and not (isinstance(flag, str) and flag.startswith("--xla")):
        said = "that undoes it" if undoes else "that must not undo it"
        raise JaxmlpError(f"{where}: expect.flag {flag!r}: give the XLA flag {said} (--xla_...)")
    origins = _origins(where, table)
    if ratio is not None and not origins:
        raise JaxmlpError(
            f'{where}: expect.from: say where its band comes from: the report\'s own figure ("https://...: x2") or '
            'this machine\'s measurement ("measured: x2.2, `jaxmlp sweep run ...`, which run")'
        )
    named = cause == "flag" or not undoes
    return Expect(direction, str(release), ratio, cause, str(flag) if named else "", origins, undoes)


def _origins(where: str, table: Mapping[str, Any]) -> tuple[str, ...]:
    """An expectation's ``from``: each entry a report's address with its figure, or ``measured:`` and the run."""
    raw = table.get("from", [])
    if not isinstance(raw, list) or not all(isinstance(o, str) and o.startswith(ORIGINS) for o in raw):
        raise JaxmlpError(
            f"{where}: expect.from {raw!r}: give a list, each entry starting with {' or '.join(ORIGINS)} (the "
            "report's own figure at its address, or this machine's measurement and which run)"
        )
    return tuple(raw)


SHARED_STEPS = ("timeline", "bisect")
"""The steps of a case that a later case measuring the same thing reads instead of measuring again."""


def step_key(case: Case, step: str) -> tuple[Any, ...] | None:
    """What a case's ``step`` measures, equal for two cases that measure the same; None where it has no such step."""
    if step == "bisect" and case.bisect is None:
        return None
    runs = (case.runs.processes, case.runs.calls, case.compiles)
    if step == "timeline":
        return (step, case.workload, case.releases, case.expect.flag, *runs)
    return (step, case.workload, case.bisect, *runs)


def shared_steps(cases: Sequence[Case]) -> dict[str, dict[str, str]]:
    """For each case, each step an earlier case measures the same, and that case's name (pure)."""
    first: dict[tuple[Any, ...], str] = {}
    out: dict[str, dict[str, str]] = {}
    for case in cases:
        for step in SHARED_STEPS:
            key = step_key(case, step)
            if key is None:
                continue
            if key in first:
                out.setdefault(case.name, {})[step] = first[key]
            else:
                first[key] = case.name
    return out
