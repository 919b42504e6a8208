"""Make a large results folder from real ones: many benchmark runs, sweep folders and release timelines, with a few
corrupt and truncated files among them, to measure `jaxmlp report` and `jaxmlp summary` at scale.

    python bench/make_scale_folder.py reports/ /tmp/scale --runs 1000 --sweeps 50 --timelines 20

The runs are copies of the source's ``bench-*.json`` files (taken in turn), the sweeps of its ``sweep-*/`` (and older
``jaxlib-*/``) folders and the timelines of its ``timeline-*/`` folders, each dated anew (one run every ``--every``
hours, ending at the newest source run) and its times multiplied by a random factor per benchmark (``--jitter``, 3% by
default); from two thirds of the runs on, every benchmark is ``--step`` slower (8% by default), so the history has one
change to find. Then ``--corrupt`` files are added: truncated copies, an empty file, bytes that are not text, a JSON
list, a file with a malformed field, and a truncated file inside a sweep folder. The numbers are the real files'
numbers moved by a seeded random factor: the folder is a load for the report, not a measurement."""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import random
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere: this checkout's jaxmlp
    sys.path.insert(0, str(ROOT))

from jaxmlp import registry  # noqa: E402
from jaxmlp.errors import JaxmlpError  # noqa: E402
from jaxmlp.results.schema.bench import PER_ROUND  # noqa: E402
from jaxmlp.results.store import layout  # noqa: E402
from jaxmlp.results.store.writing import check_new_folder, write_new  # noqa: E402

CORRUPTIONS = ("truncated", "empty", "binary", "list", "malformed", "truncated-cell")


def jittered(doc: dict[str, Any], rng: random.Random, jitter: float, slower: float) -> dict[str, Any]:
    """``doc`` (a pytest-benchmark file) with each benchmark's samples and times multiplied by one random factor
    (log-normal, ``jitter`` wide) and by ``slower``."""
    for bench in doc.get("benchmarks") or ():
        stats = bench.get("stats")
        if not isinstance(stats, dict):
            continue
        factor = rng.lognormvariate(0.0, jitter) * slower
        for key in PER_ROUND:  # the times, scaled with the samples
            if isinstance(stats.get(key), (int, float)):
                stats[key] *= factor
        if isinstance(stats.get("ops"), (int, float)):
            stats["ops"] /= factor
        if isinstance(stats.get("data"), list):
            stats["data"] = [x * factor for x in stats["data"]]
    return doc


def redated(doc: dict[str, Any], when: dt.datetime, commit: str) -> dict[str, Any]:
    """``doc`` (a pytest-benchmark file) as if run at ``when`` from ``commit``."""
    iso = when.isoformat()
    doc["datetime"] = iso
    info = doc.get("commit_info")
    if isinstance(info, dict):
        info.update(id=commit, time=iso, author_time=iso)
    meta = (doc.get("machine_info") or {}).get("jaxmlp")
    if isinstance(meta, dict):
        meta.update(timestamp=iso, commit=commit)
        for device in (meta.get("devices") or {}).values():
            if isinstance(device, dict):
                device.update(timestamp=iso, commit=commit)
    return doc


def dates(count: int, end: dt.datetime, every_hours: float, rng: random.Random) -> list[dt.datetime]:
    """``count`` times, oldest first, ``every_hours`` apart (give or take a quarter of that) and ending at ``end``;
    whole seconds, all different."""
    out, seen = [], set()
    for i in range(count):
        offset = (count - 1 - i) * every_hours + rng.uniform(-0.25, 0.25) * every_hours * (i < count - 1)
        when = (end - dt.timedelta(hours=offset)).replace(microsecond=0)
        while when in seen:
            when += dt.timedelta(seconds=1)
        seen.add(when)
        out.append(when)
    return sorted(out)


def fake_commit(i: int) -> str:
    return hashlib.sha1(f"scale-{i}".encode()).hexdigest()


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def _dump(doc: object) -> str:
    return json.dumps(doc, indent=1) + "\n"


def _source_date(path: Path) -> dt.datetime:
    return dt.datetime.strptime(layout.stamp_in(path), layout.STAMP_FORMAT).replace(tzinfo=dt.UTC)


def _times_folders(path: Path) -> bool:
    """Whether a benchmark file is a run of `bench_scale.py` alone (the commands' times over such a folder): no
    source of one."""
    try:
        names = [b.get("name", "") for b in _load(path).get("benchmarks") or ()]
    except (OSError, ValueError, AttributeError):
        return False
    return bool(names) and all(str(n).startswith(f"{registry.RESULTS_FOLDER.id}[") for n in names)


def sources(folder: Path) -> tuple[list[Path], list[Path], list[Path]]:
    """The source's benchmark files, sweep folders and timeline folders (top level, oldest first)."""

    def named(prefix: str, want: Callable[[Path], bool]) -> list[Path]:
        found = [p for p in folder.glob(f"{prefix}-*") if want(p) and layout.stamp_in(p.name)]
        return sorted(found, key=lambda p: layout.stamp_in(p.name))

    runs = named(layout.BENCH, lambda p: p.is_file() and p.suffix == ".json" and not _times_folders(p))

    def is_sweep(p: Path) -> bool:
        return (p / layout.CELLS_FILE).is_file()

    sweeps = named(layout.SWEEP, is_sweep) + named(layout.SWEEP_BEFORE, is_sweep)
    sweeps.sort(key=lambda p: layout.stamp_in(p.name))
    timelines = named(layout.TIMELINE, lambda p: (p / layout.CELLS_FILE).is_file())
    return runs, sweeps, timelines


def copy_sweep(source: Path, target: Path, when: dt.datetime, commit: str, rng: random.Random, jitter: float) -> None:
    """A sweep (or timeline) folder copied under a new name, its cells' files redated and jittered, the rest (cells,
    samples log, HLO) as they are."""
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(".*"))
    for cell in sorted(target.glob("jax-*.json")):
        doc = _load(cell)
        cell.unlink()
        write_new(cell, _dump(jittered(redated(doc, when, commit), rng, jitter, 1.0)))


def corrupt_one(out: Path, kind: str, runs: list[Path], sweeps: list[Path], rng: random.Random) -> Path:
    """One corrupt file of ``kind`` (`CORRUPTIONS`), named like a result; returns its path."""
    text = runs[rng.randrange(len(runs))].read_text(encoding="utf-8") if runs else "{}"
    when = dt.datetime(2020, 1, 1, tzinfo=dt.UTC) + dt.timedelta(minutes=rng.randrange(10**6))
    path = out / layout.name(layout.BENCH, when, kind, suffix=".json")
    if kind == "truncated":
        return write_new(path, text[: max(1, int(len(text) * rng.uniform(0.2, 0.9)))])
    if kind == "empty":
        return write_new(path, "")
    if kind == "binary":
        return write_new(path, bytes(rng.randrange(256) for _ in range(4096)))
    if kind == "list":
        return write_new(path, "[1, 2, 3]\n")
    if kind == "malformed":
        doc = json.loads(text)
        doc["benchmarks"] = [{"name": "test_epoch[cpu-scan-0]", "stats": {"median": "fast", "data": ["x"]}}]
        return write_new(path, _dump(doc))
    if not sweeps:  # truncated-cell
        return corrupt_one(out, "truncated", runs, sweeps, rng)
    folder = sweeps[rng.randrange(len(sweeps))]
    cell = sorted(folder.glob("jax-*.json"))[0]
    text = cell.read_text(encoding="utf-8")
    cell.unlink()
    return write_new(cell, text[: len(text) // 2])


def make(
    source: Path,
    out: Path,
    runs: int,
    sweeps: int,
    timelines: int,
    corrupt: int,
    *,
    seed: int = 0,
    jitter: float = 0.03,
    step: float = 0.08,
    every_hours: float = 6.0,
    log: Callable[[str], None] = print,
) -> dict[str, int]:
    """Fill the new folder ``out`` from the real results in ``source``; returns how many of each it wrote."""
    bench_files, sweep_folders, timeline_folders = sources(source)
    wanted = {
        "runs": (runs, bench_files),
        "sweeps": (sweeps, sweep_folders),
        "timelines": (timelines, timeline_folders),
    }
    for what, (count, found) in wanted.items():
        if count and not found:
            raise SystemExit(
                f"{source} holds no {what} to copy (bench-*.json, sweep-*/ or jaxlib-*/, timeline-*/): give the "
                f"folder of real results, or --{what} 0"
            )
    out.mkdir(parents=True)
    rng = random.Random(seed)
    newest = max((_source_date(p) for p in [*bench_files, *sweep_folders, *timeline_folders]), default=None)
    end = newest or dt.datetime(2026, 12, 1, tzinfo=dt.UTC)
    docs = [_load(p) for p in bench_files]
    for i, when in enumerate(dates(runs, end, every_hours, rng)):
        doc = json.loads(json.dumps(docs[i % len(docs)]))  # a fresh copy
        slower = 1.0 + step if i >= runs * 2 // 3 else 1.0
        doc = jittered(redated(doc, when, fake_commit(i)), rng, jitter, slower)
        backends = sorted({str((b.get("extra_info") or {}).get("backend")) for b in doc["benchmarks"]} - {"None"})
        write_new(out / layout.name(layout.BENCH, when, "-".join(backends) or "host", suffix=".json"), _dump(doc))
        if (i + 1) % 100 == 0:
            log(f"{i + 1} of {runs} runs")
    made_sweeps = []
    for kind, count, found in ((layout.SWEEP, sweeps, sweep_folders), (layout.TIMELINE, timelines, timeline_folders)):
        for i, when in enumerate(dates(count, end, every_hours * runs / max(count, 1), rng)):
            target = out / layout.name(kind, when)
            copy_sweep(found[i % len(found)], target, when, fake_commit(10**6 + i), rng, jitter)
            made_sweeps.append(target)
        log(f"{count} {kind} folders")
    for i in range(corrupt):
        log(f"corrupt: {corrupt_one(out, CORRUPTIONS[i % len(CORRUPTIONS)], bench_files, made_sweeps, rng)}")
    return {"runs": runs, "sweeps": sweeps, "timelines": timelines, "corrupt": corrupt}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "source", type=Path, help="a folder of real results (bench-*.json, sweep-*/, jaxlib-*/, timeline-*/)"
    )
    parser.add_argument("out", type=Path, help="the new folder to fill (must not exist)")
    parser.add_argument("--runs", type=int, default=1000, help="benchmark runs (default: %(default)s)")
    parser.add_argument("--sweeps", type=int, default=50, help="sweep folders (default: %(default)s)")
    parser.add_argument("--timelines", type=int, default=20, help="timeline folders (default: %(default)s)")
    parser.add_argument(
        "--corrupt",
        type=int,
        default=len(CORRUPTIONS),
        help="corrupt or truncated files (default: %(default)s, one of each kind)",
    )
    parser.add_argument("--seed", type=int, default=0, help="the random factors' seed (default: %(default)s)")
    parser.add_argument(
        "--jitter", type=float, default=0.03, help="spread of the per-benchmark factor (default: %(default)s)"
    )
    parser.add_argument(
        "--step", type=float, default=0.08, help="how much slower the last third of the runs are (default: %(default)s)"
    )
    parser.add_argument("--every", type=float, default=6.0, help="hours between runs (default: %(default)s)")
    args = parser.parse_args(argv)
    if not args.source.is_dir():
        parser.error(f"{args.source} is not a folder: give a folder of real results, such as reports/")
    try:
        check_new_folder(args.out, "out")
    except JaxmlpError as e:
        parser.error(str(e))
    made = make(
        args.source,
        args.out,
        args.runs,
        args.sweeps,
        args.timelines,
        args.corrupt,
        seed=args.seed,
        jitter=args.jitter,
        step=args.step,
        every_hours=args.every,
        log=lambda line: print(line, file=sys.stderr),
    )
    print(f"{args.out}: " + ", ".join(f"{n} {what}" for what, n in made.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
