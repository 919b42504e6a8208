"""A result file with one field of the wrong type (null, text, a list, an object where the tables read something
else) is one line naming the file and the field, never a traceback; a folder's walk skips it with a warning."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jaxmlp.cli import main
from jaxmlp.errors import EXIT_ERROR, JaxmlpError
from jaxmlp.results.store.reading import read_document, scan

FIXTURES = Path(__file__).parent / "fixtures"
WRONG = (None, "x", [1], {})


def _bench_row() -> dict[str, Any]:
    """The hand-made benchmark run cut to its richest row (an epoch of the ``scan`` pipeline): a benchmark file's
    summary costs the same whatever its rows, so one row keeps the mutations quick."""
    doc = json.loads((FIXTURES / "bench-cpu.json").read_text())
    doc["benchmarks"] = [row for row in doc["benchmarks"] if row["name"] == "test_epoch[cpu-scan]"]
    return doc


SOURCES = {
    "bench": _bench_row,
    "scaling": lambda: json.loads((FIXTURES / "runs" / "scaling-20261203T073946-cpu.json").read_text()),
    "train": lambda: json.loads((FIXTURES / "train-cpu.json").read_text()),
    "tta": lambda: json.loads((FIXTURES / "tta-synthetic.json").read_text()),
    "corpus": lambda: json.loads((FIXTURES / "corpus" / "scorecard.json").read_text()),
}
SKIPPED_PATHS = {"bench": ("machine_info", "jaxmlp")}
"""The benchmark run's metadata is read as the scaling run's is (one schema, one frame): mutated there."""


def paths(doc: object, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every field's path, a list's first item standing for its others."""
    if at:
        yield at
    if isinstance(doc, dict):
        for key, value in doc.items():
            yield from paths(value, (*at, key))
    elif isinstance(doc, list) and doc:
        yield from paths(doc[0], (*at, 0))


def mutated(doc: dict[str, Any], path: tuple[Any, ...], value: object) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    inner: Any = out
    for key in path[:-1]:
        inner = inner[key]
    inner[path[-1]] = value
    return out


@pytest.mark.parametrize("kind", SOURCES)
def test_every_field_of_the_wrong_type_is_one_line_or_read(kind, tmp_path, capsys):
    doc = SOURCES[kind]()
    file = tmp_path / f"{kind}.json"
    crashes = []
    for path in paths(doc):
        if path[: len(SKIPPED_PATHS.get(kind, ()))] == SKIPPED_PATHS.get(kind) and len(path) > 2:
            continue
        for value in WRONG:
            file.write_text(json.dumps(mutated(doc, path, value)))
            try:
                code = main(["summary", str(file)])
            except Exception as e:  # what the test is for: no traceback, whatever the field
                crashes.append(f"{'.'.join(map(str, path))} = {json.dumps(value)}: {type(e).__name__}: {e}")
                continue
            err = capsys.readouterr().err
            assert code in (0, EXIT_ERROR), (path, value, err)
            if code:
                assert len(err.strip().splitlines()) == 1 and str(file) in err, err
    assert not crashes, "\n".join(crashes)


@pytest.mark.parametrize(
    ("kind", "path", "value", "said"),
    [
        ("tta", ("runs", 0, "target"), None, "field runs[0].target is null, not a number"),
        ("tta", ("runs", 0, "data_seconds"), "1.5", "field runs[0].data_seconds is '1.5', not a number"),
        ("bench", ("benchmarks",), None, "field benchmarks is null, not a list"),
        ("bench", ("benchmarks", 0, "params"), "x", "field benchmarks[0].params is 'x', not an object"),
        ("scaling", ("benchmarks", 0, "stats"), "x", "field benchmarks[0].stats is 'x', not an object"),
        ("train", ("records", 0, "epoch"), "x", "field records[0].epoch is 'x', not a whole number"),
        ("corpus", ("scores", 0, "found"), "x", "field scores[0].found is 'x', not true or false"),
        ("corpus", ("scores", 0, "case", "expect", "ratio"), "x", "field scores[0].case.expect.ratio is 'x', not a"),
    ],
)
def test_the_line_names_the_file_and_the_field(kind, path, value, said, tmp_path, capsys):
    file = tmp_path / f"{kind}.json"
    file.write_text(json.dumps(mutated(SOURCES[kind](), path, value)))
    with pytest.raises(JaxmlpError, match="^" + str(file).replace(".", r"\.") + ": " + said.replace("[", r"\[")):
        read_document(file)
    assert main(["summary", str(file)]) == EXIT_ERROR
    err = capsys.readouterr().err.strip()
    assert said in err and str(file) in err and len(err.splitlines()) == 1
    good = tmp_path / "good.json"
    good.write_text(json.dumps(SOURCES[kind]()))
    found = scan(tmp_path)  # the folder's good file read, the damaged one skipped with why
    assert [f.path for f in found.documents] == [good]
    assert [s.path for s in found.skipped] == [file] and said in found.skipped[0].why
    if kind in ("bench", "scaling"):
        assert main(["compare", str(file), str(good)]) == EXIT_ERROR
        err = capsys.readouterr().err.strip()
        assert said in err and str(file) in err and len(err.splitlines()) == 1


def test_a_kept_ceilings_file_without_its_flop_rate_is_named_and_measured_again(tmp_path, capsys):
    from jaxmlp.flows.roofline import kept_ceilings
    from jaxmlp.results.schema.roofline import CeilingsDocument, ceilings_key
    from jaxmlp.results.store.writing import ResultsStore

    meta = {"host": "h", "cpu_model": "c", "cpu_affinity": 2, "jax": "0.10.2", "backend": "cpu"}
    rates = {"flops_per_second": 1e11, "best_shape": "1024x1024x1024", "bytes_per_second": 1e10}
    good = CeilingsDocument(meta, {**rates, "best_kernel": "triad"}).to_json()
    store = ResultsStore(tmp_path)
    (tmp_path / "ceilings-20261201T000000.json").write_text(json.dumps(good))
    assert kept_ceilings(store, ceilings_key(meta)) is not None
    bad = tmp_path / "ceilings-20261202T000000.json"
    bad.write_text(json.dumps(mutated(good, ("ceilings", "flops_per_second"), None)))
    (tmp_path / "ceilings-20261201T000000.json").unlink()
    assert kept_ceilings(store, ceilings_key(meta)) is None  # measured again
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"jaxmlp roofline: warning: skipped {bad}: field ceilings.flops_per_second is null, not")
    assert err.endswith("its ceilings are measured again") and len(err.splitlines()) == 1
