"""What XLA:CPU's options and the step's forms give to a scan epoch of the MLP, f32 and bf16 (README "Precision").

Run alone (`python bench/precision/xla_options.py [--flags-label L]`, with XLA_FLAGS set by the caller): prints one
JSON line per variant, the median of ROUNDS epoch times after a warm-up (each ending in block_until_ready), the
compile time apart, and how many of the step's dots XLA compiled with bfloat16 operands. Real MNIST from
JAXMLP_DATA_DIR. The variants run interleaved, round by round.
"""

import json
import os
import re
import statistics
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax import random

from jaxmlp import model
from jaxmlp.pipelines.data import load_datasets
from jaxmlp.pipelines.loaders import as_arrays

ROUNDS = 5
BF16, F32 = jnp.bfloat16, jnp.float32


def autodiff_bf16(params, x, y, step_size):
    """bf16 by casts inside the step, JAX's own transpose rules for the backward pass."""

    def loss(p):
        a = x.astype(BF16)
        for w, b in p[:-1]:
            a = model.relu(jnp.dot(a, w.astype(BF16).T, preferred_element_type=F32) + b).astype(BF16)
        w, b = p[-1]
        logits = jnp.dot(a, w.astype(BF16).T, preferred_element_type=F32) + b
        return -jnp.mean((logits - jax.scipy.special.logsumexp(logits, axis=1, keepdims=True)) * y)

    g = jax.grad(loss)(params)
    return [(w - step_size * dw, b - step_size * db) for (w, b), (dw, db) in zip(params, g)]


def scan_of(step, unroll=1):
    def epoch(params, xs, ys):
        return jax.lax.scan(lambda p, b: (step(p, *b, model.STEP_SIZE), None), params, (xs, ys), unroll=unroll)[0]

    return epoch


def bf16_dots(text):
    """(dots with bf16 operands, all dots) in optimized HLO: a fused computation's parameter types before its dot."""
    header, bf, total = None, 0, 0
    for line in text.splitlines():
        if m := re.match(r"^%(\S+) \((.*)\) -> ", line):
            header = re.findall(r": (\w+)\[", m.group(2))
        if " dot(" in line:
            total += 1
            bf += bool(line.strip().startswith("ROOT") and header and all(t == "bf16" for t in header))
    return bf, total


def main():
    label = sys.argv[1] if len(sys.argv) > 1 else "default"
    datasets = load_datasets("mnist", os.environ["JAXMLP_DATA_DIR"])
    images, labels = as_arrays(datasets.train)
    n = min(len(images), int(os.environ.get("XLA_OPTIONS_IMAGES", len(images)))) // 128 * 128  # a smoke run: fewer
    xs = jnp.asarray(images[:n].reshape(-1, 128, 784))
    ys = jnp.asarray(np.asarray(model.one_hot(labels[:n], 10)).reshape(-1, 128, 10))
    xs16 = xs.astype(BF16)
    params = model.init_network_params(model.LAYER_SIZES, random.PRNGKey(0))
    variants = {
        "f32 scan": (jax.jit(scan_of(model.sgd_update)), xs),
        "bf16 scan, casts in the step, JAX's transpose rules": (jax.jit(scan_of(autodiff_bf16)), xs16),
        "bf16 scan, written-out VJP (shipped)": (jax.jit(scan_of(model.sgd_update_bf16)), xs16),
    }
    if label == "default":
        variants.update(
            {
                "f32 scan, params donated": (jax.jit(scan_of(model.sgd_update), donate_argnums=0), xs),
                "f32 scan, unroll 4": (jax.jit(scan_of(model.sgd_update, 4)), xs),
                "bf16 scan, written-out VJP, unroll 4": (jax.jit(scan_of(model.sgd_update_bf16, 4)), xs16),
            }
        )
    compiled, compile_s, dots = {}, {}, {}
    for name, (f, data) in variants.items():
        start = time.perf_counter()
        compiled[name] = f.lower(params, data, ys).compile()
        compile_s[name] = time.perf_counter() - start
        dots[name] = bf16_dots(compiled[name].as_text())
        jax.block_until_ready(compiled[name](jax.tree_util.tree_map(jnp.copy, params), data, ys))  # warm-up
    times = {name: [] for name in variants}
    for _ in range(ROUNDS):
        for name, (_, data) in variants.items():
            p = jax.tree_util.tree_map(jnp.copy, params)  # donation consumes its input
            start = time.perf_counter()
            jax.block_until_ready(compiled[name](p, data, ys))
            times[name].append(time.perf_counter() - start)
    for name in variants:
        print(
            json.dumps(
                {
                    "xla_flags": os.environ.get("XLA_FLAGS", ""),
                    "label": label,
                    "variant": name,
                    "median_s": statistics.median(times[name]),
                    "samples_s": times[name],
                    "compile_s": compile_s[name],
                    "bf16_dots": dots[name][0],
                    "dots": dots[name][1],
                    "jax": jax.__version__,
                }
            )
        )


if __name__ == "__main__":
    main()
