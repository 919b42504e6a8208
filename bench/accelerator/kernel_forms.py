"""The `pallas` kernel's forms and the `scan` epoch's unrolls and bf16 step forms, timed side by side in one process
on real MNIST (one call of a TPU host), with kernels that time a step's parts apart; writes
``kernel-forms-<time>-<backend>.jsonl`` into ``--out``, one line a variant (`lines`).

    python bench/accelerator/kernel_forms.py --out DIR [--rounds 7] [--epochs 30] [--limit N]

Each variant is compiled apart, checked once against the in-order steps' epoch (its params after one epoch, within
the pipeline's tolerance), then timed in ``--rounds`` rounds of ``--epochs`` epochs, every variant once a round in
turn, each epoch ending in block_until_ready; its test accuracy after ``--train-epochs`` epochs comes with it. Off a
TPU the kernels run in Pallas's interpreter (a check of this script, not a timing)."""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jax
import numpy as np
from jax import random

from jaxmlp import model
from jaxmlp.pipelines import pallas_epoch
from jaxmlp.pipelines.array_epochs import PallasEpoch
from jaxmlp.pipelines.loaders import as_arrays
from jaxmlp.pipelines.mnist import load_arrays
from jaxmlp.pipelines.steps import epoch_steps, images_for, jit_step, padded_batches, scan_steps, slices

SCHEMA_VERSION = 1
F = pallas_epoch.Form
KERNEL_FORMS = {
    "bf16": [F(), F(copies=True), F(columns=True), F(columns=True, copies=True)],
    "f32": [F(), F(columns=True)],
}
"""The forms timed (the first run, reports/kernel-forms-20261206T112958-tpu.json, also timed ``transposed`` and
``images_t``: slower)."""
SCAN_VARIANTS = {
    "bf16": [
        *[(form, unroll, how) for form in ("vjp", "casts") for unroll in (2, 4) for how in ("two programs", "padded")],
        ("vjp", 2, "full batches only"),
        ("casts", 4, "full batches only"),
        *[("vjp", unroll, how) for unroll in (1, 4) for how in ("plain", "plain, two programs")],
        ("casts", 4, "plain"),
    ],
    "f32": [
        *[("-", unroll, how) for unroll in (1, 2) for how in ("two programs", "padded")],
        ("-", 1, "full batches only"),
        *[("-", unroll, how) for unroll in (1, 4) for how in ("plain", "plain, two programs")],
    ],
}
"""(bf16 step form, unroll, how the last batch runs) of each scan variant; how: `scan_program` (the second run,
reports/kernel-forms-20261206T114025-tpu.jsonl, also timed ``one program``, the last batch's step after the scan in the
same program: slower, and gone from the pipelines). ``plain``: the comparison written as plain JAX would write it
(`plain_scan`), beside the pipelines' own epoch (``padded``) in the same call."""


def scan_batches(x: np.ndarray, targets: np.ndarray) -> dict[str, Any]:
    """The scan's inputs: the full batches, the smaller last batch, and every batch as the pipelines' scan takes them
    (`steps.padded_batches`: the last padded to 128 rows, with its step size's factor)."""
    n_full, rest = divmod(len(x), 128)
    cut = n_full * 128
    return {
        "full": jax.device_put((x[:cut].reshape(n_full, 128, -1), targets[:cut].reshape(n_full, 128, -1))),
        "last": jax.device_put((x[cut:], targets[cut:])) if rest else None,
        "padded": jax.device_put(padded_batches(x, targets, 128)),
    }


def plain_scan(settings: dict[str, Any]) -> Callable[..., Any]:
    """The epoch as plain JAX writes it: the step (`model.step_function`) in a `lax.scan` over the full batches, its
    step size the tutorial's constant (folded into the program, where the pipelines' scan takes it as an argument
    scaled by each batch's factor), jitted as one function."""
    step = model.step_function(settings["precision"], settings["bf16_step"])

    def epoch(params: Any, xs: jax.Array, ys: jax.Array) -> Any:
        body = lambda p, batch: (step(p, *batch, model.STEP_SIZE), None)  # noqa: E731
        return jax.lax.scan(body, params, (xs, ys), unroll=settings["unroll"])[0]

    return jax.jit(epoch)


def scan_program(how: str, init: Any, batches: dict[str, Any], settings: dict[str, Any]) -> Callable[[Any], Any]:
    """The scan epoch compiled ``how``: ``two programs`` (the scan, then the last batch's step dispatched apart),
    ``padded`` (the pipelines' epoch, `steps.sgd_epoch`: every batch in one scan, the last padded), ``full
    batches only`` (the scan alone: not the epoch, a measure of the last batch's cost), ``plain`` (`plain_scan`
    over the full batches), ``plain, two programs`` (it, then the last batch's step)."""
    (xs, ys), last, padded = batches["full"], batches["last"], batches["padded"]
    size = model.STEP_SIZE
    if how.startswith("plain"):
        plain = plain_scan(settings).lower(init, xs, ys).compile()
        if how == "plain" or last is None:
            return lambda p: jax.block_until_ready(plain(p, xs, ys))
        step = jit_step(settings["precision"], settings["bf16_step"]).lower(init, *last, size).compile()
        return lambda p: jax.block_until_ready(step(plain(p, xs, ys), *last, size))
    if how == "padded":  # the pipelines' own epoch (`steps.sgd_epoch`)
        program = epoch_steps.lower(init, *padded, size, **settings).compile()
        return lambda p: jax.block_until_ready(program(p, *padded, size))
    scan = scan_steps.lower(init, xs, ys, size, **settings).compile()
    if how == "full batches only" or last is None:
        return lambda p: jax.block_until_ready(scan(p, xs, ys, size))
    tail = jit_step(settings["precision"], settings["bf16_step"]).lower(init, *last, size).compile()
    return lambda p: jax.block_until_ready(tail(scan(p, xs, ys, size), *last, size))


def update_only(*refs: Any, shape: Any, step_size: float, dtype: Any, precision: Any, form: Any) -> None:
    """A step's weight update alone (no products): each weight read, scaled by a stand-in gradient, written (and its
    bfloat16 copy made where ``form.copies``)."""
    from jax.experimental import pallas as pl

    n_data = 3 if form.images_t else 2
    params_in, params_out, copies = refs[n_data : n_data + 6], refs[n_data + 6 : n_data + 12], refs[n_data + 12 :]

    @pl.when(pl.program_id(0) == 0)
    def _() -> None:
        for source, target in zip(params_in, params_out):
            target[...] = source[...]

    for k in range(3):
        w_ref = params_out[2 * k]
        w = w_ref[...]
        new = w - step_size * (w * 1e-3)
        w_ref[...] = new
        if copies:
            copies[k][...] = new.astype(copies[k].dtype)


def kernel_variants(precision: str) -> list[tuple[str, str, Any, Callable[..., Any] | None]]:
    """(group, name, form, body): the precision's forms with the production body, then the parts (bf16 only)."""
    rows: list[tuple[str, str, Any, Callable[..., Any] | None]] = [
        ("pallas", pallas_epoch.form_name(pallas_epoch.form_for(precision, f)), f, None)
        for f in KERNEL_FORMS[precision]
    ]
    if precision == "bf16":
        no_update = functools.partial(pallas_epoch._kernel, update=False)
        for f in (F(), F(columns=True)):
            rows.append(("pallas-parts", f"{pallas_epoch.form_name(f)}, products without the update", f, no_update))
        for f in (F(), F(copies=True)):
            rows.append(("pallas-parts", f"{pallas_epoch.form_name(f)}, the update alone", f, update_only))
    return rows


def built_kernel(epoch: PallasEpoch, params: Any, body: Callable[..., Any] | None) -> float:
    """Compile ``epoch``'s kernel, with ``body`` in place of the step where given; the seconds it took."""
    if body is None:
        return epoch.compile(params)
    original = pallas_epoch._kernel
    pallas_epoch._kernel = body  # type: ignore[assignment]  # read by epoch_call when it builds the kernel
    try:
        return epoch.compile(params)
    finally:
        pallas_epoch._kernel = original


def summary(samples: list[float]) -> dict[str, float]:
    q1, median, q3 = np.percentile(samples, [25, 50, 75])
    return {"median_seconds": float(median), "iqr_seconds": float(q3 - q1), "min_seconds": float(min(samples))}


def lines(document: dict[str, Any]) -> list[dict[str, Any]]:
    """The file's lines: one a variant, its row with the run's settings and versions beside it."""
    run = {key: value for key, value in document.items() if key != "rows"}
    return [{**run, **row} for row in document["rows"]]


@dataclass(frozen=True)
class Data:
    """The training images (float32) and their one-hot targets, the test split, and the initial parameters."""

    images: np.ndarray
    labels: np.ndarray
    targets: np.ndarray
    test_images: Any
    test_targets: Any
    init: Any

    def accuracy(self, params: Any, precision: str) -> float:
        """The test split's accuracy of ``params``, its products at ``precision``."""
        with model.precision_scope(precision):
            return float(model.evaluate(params, self.test_images, self.test_targets).accuracy)


def load_data(data_dir: str | None, limit: int | None) -> Data:
    """MNIST (the first ``limit`` training images), and the parameters every variant starts from."""
    train, test = load_arrays("mnist", data_dir, limit)
    images, labels = as_arrays(train)
    test_images, test_labels = as_arrays(test)
    init = model.init_network_params(model.LAYER_SIZES, random.PRNGKey(0))
    targets = np.asarray(model.one_hot(labels, 10))
    return Data(images, labels, targets, test_images, model.one_hot(test_labels, 10), init)


def reference_epoch(x: Any, data: Data, precision: str) -> Any:
    """The in-order steps' epoch from ``data.init``: what every variant must compute."""
    with model.precision_scope(precision):
        step = jit_step(precision)
        reference = data.init
        for s in slices(len(x), 128):
            reference = step(reference, x[s], data.targets[s], model.STEP_SIZE)
        return jax.block_until_ready(reference)


Run = tuple[dict[str, Any], Callable[[], Any] | None]
"""A variant's row, and its timed call (None: it failed, its row says why)."""


def kernel_runs(precision: str, groups: set[str], data: Data, reference: Any, args: argparse.Namespace) -> list[Run]:
    """Each kernel variant of ``groups`` compiled and checked (a form with the production body trained too); a
    variant this backend cannot compile or run has its error in its row, and no call."""
    device = jax.devices()[0]
    runs: list[Run] = []
    for group, name, form, body in kernel_variants(precision) if {"pallas", "pallas-parts"} & groups else []:
        if group not in groups:
            continue
        interpret = device.platform != "tpu"
        epoch = PallasEpoch(
            "pallas", data.images, data.labels, 128, model.STEP_SIZE, device, precision, interpret=interpret, form=form
        )
        row: dict[str, Any] = {"group": group, "name": name, "precision": precision, "form": name}
        try:
            row["compile_seconds"] = built_kernel(epoch, data.init, body)
            if body is None:
                row["max_relative_difference"] = model.max_relative_difference(epoch(data.init), reference)
                row["tolerance"] = epoch.tolerance
                params = data.init
                for _ in range(args.train_epochs):
                    params = epoch(params)
                row["test_accuracy"] = data.accuracy(params, precision)
        except Exception as e:  # a form this backend cannot compile or run: the row says why, the rest run
            row["error"] = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"
            print(f"failed {group} {precision} {name}: {row['error']}", flush=True)
            runs.append((row, None))
            continue
        print(f"compiled {group} {precision} {name} in {row['compile_seconds']:.1f} s", flush=True)
        runs.append((row, functools.partial(epoch, data.init)))
    return runs


def scan_runs(precision: str, x: Any, data: Data, reference: Any, train_epochs: int) -> list[Run]:
    """Each scan variant of ``precision`` compiled, checked and trained for ``train_epochs`` epochs."""
    batches = scan_batches(x, data.targets)
    runs: list[Run] = []
    for bf16_step, unroll, how in SCAN_VARIANTS[precision]:
        form = bf16_step if precision == "bf16" else model.DEFAULT_BF16_STEP
        settings = {"precision": precision, "bf16_step": form, "unroll": unroll}
        with model.precision_scope(precision):
            t0 = time.perf_counter()
            run = scan_program(how, data.init, batches, settings)
            compile_seconds = time.perf_counter() - t0
        name = f"{form if precision == 'bf16' else 'f32'}, unroll {unroll}, {how}"
        row = {"group": "scan", "name": name, "how": how, "compile_seconds": compile_seconds, **settings}
        with model.precision_scope(precision):
            row["max_relative_difference"] = model.max_relative_difference(run(data.init), reference)
            params = data.init
            for _ in range(train_epochs):
                params = run(params)
        row["tolerance"] = 5e-2 if precision == "bf16" else 1e-5
        row["test_accuracy"] = data.accuracy(params, precision)
        print(f"compiled scan {name} in {compile_seconds:.1f} s", flush=True)
        runs.append((row, functools.partial(run, data.init)))
    return runs


def timed(runs: list[Run], rounds: int, epochs: int) -> None:
    """``rounds`` rounds of ``epochs`` epochs of every variant that runs, in turn; each row's samples and summary."""
    calls = [(row, call) for row, call in runs if call is not None]
    for _ in range(rounds):
        for row, call in calls:
            samples = row.setdefault("samples_seconds", [])
            for _ in range(epochs):
                t0 = time.perf_counter()
                call()  # ends in block_until_ready
                samples.append(time.perf_counter() - t0)
    for row, _ in calls:
        row.update(summary(row["samples_seconds"]))


def written(out: Path, document: dict[str, Any]) -> Path:
    """The document's lines written into ``out`` (whole or not at all), named by the time and backend."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    path = out / f"kernel-forms-{stamp}-{document['backend']}.jsonl"
    temporary = out / f".{path.name}.tmp"
    temporary.write_text("".join(json.dumps(line) + "\n" for line in lines(document)))
    temporary.rename(path)
    return path


def said(row: dict[str, Any]) -> str:
    """A variant's line: its median and IQR, its difference from the reference and its accuracy (or its error)."""
    if "error" in row:
        return f"{row['group']:12} {row['precision']:5} {row['name']:45} {row['error']}"
    diff = row.get("max_relative_difference")
    return (
        f"{row['group']:12} {row.get('precision', ''):5} {row['name']:45} "
        f"{row['median_seconds'] * 1e3:8.3f} ms  iqr {row['iqr_seconds'] * 1e3:6.3f}  "
        f"diff {'' if diff is None else f'{diff:.1e}'}  acc {row.get('test_accuracy', '')}"
    )


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="the folder the JSON file goes to")
    parser.add_argument("--data-dir", default=os.environ.get("JAXMLP_DATA_DIR"))
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--epochs", type=int, default=30, help="timed epochs a variant a round")
    parser.add_argument("--train-epochs", type=int, default=8)
    parser.add_argument("--limit", type=int, default=None, help="the first N training images (a check)")
    parser.add_argument("--only", default="pallas,pallas-parts,scan", help="the groups to run")
    return parser.parse_args()


def main() -> int:
    args = arguments()
    out = Path(args.out)
    if not out.is_dir():
        print(f"kernel_forms.py: --out {out} is not a folder: make it first", file=sys.stderr)
        return 2
    groups = set(args.only.split(","))
    device = jax.devices()[0]
    start = time.perf_counter()
    data = load_data(args.data_dir, args.limit)
    runs: list[Run] = []
    for precision in ("bf16", "f32"):
        x = images_for(data.images, precision)
        reference = reference_epoch(x, data, precision)
        runs += kernel_runs(precision, groups, data, reference, args)
        if "scan" in groups:
            runs += scan_runs(precision, x, data, reference, args.train_epochs)
    timed(runs, args.rounds, args.epochs)
    rows = [row for row, _ in runs if "error" not in row] + [row for row, _ in runs if "error" in row]
    document = {
        "kind": "kernel-forms",
        "schema_version": SCHEMA_VERSION,
        "command": " ".join(sys.argv),
        "commit": os.environ.get("JAXMLP_COMMIT"),
        "jax": jax.__version__,
        "python": platform.python_version(),
        "device_kind": device.device_kind,
        "backend": device.platform,
        "interpreted": device.platform != "tpu",
        "samples": len(data.images),
        "rounds": args.rounds,
        "epochs_a_round": args.epochs,
        "train_epochs": args.train_epochs,
        "wall_seconds": time.perf_counter() - start,
        "rows": rows,
    }
    path = written(out, document)
    for row in rows:
        print(said(row))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
