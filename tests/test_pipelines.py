"""Every pipeline feeds the same batches in the same order, so every epoch computes the same params."""

import jax
import numpy as np
import pytest
from jax import random

from jaxmlp import model, registry
from jaxmlp.model import max_relative_difference
from jaxmlp.pipelines import data, loaders
from jaxmlp.pipelines.epochs import make_epoch
from jaxmlp.pipelines.loaders import as_arrays, make_loader, missing_package
from jaxmlp.pipelines.steps import CompiledStep, batch_sizes, device_batches, padded_batches, slices
from jaxmlp.registry import LOADER_PIPELINES, PIPELINE_BACKENDS, PIPELINES, TORCH_PIPELINES, WORKER_PIPELINES

TORCH_TOLERANCE = 1e-4  # jaxmlp.pipelines.torch_mlp.TOLERANCE (this module imports torch only in the torch tests)


@pytest.fixture(scope="module")
def split():
    return data.SyntheticMNIST(train=True, size=1000, transform=data.FlattenAndCast())


@pytest.fixture(scope="module")
def params():
    return model.init_network_params(model.LAYER_SIZES, random.PRNGKey(0))


@pytest.fixture(scope="module")
def by_hand(split, params):
    """The reference epoch: the tutorial's jitted update over in-order batches of 128 (the last one 104)."""
    images, labels = as_arrays(split)
    targets = model.one_hot(labels, 10)
    p = params
    for start in range(0, 1000, 128):
        p = model.update(p, images[start : start + 128], targets[start : start + 128])
    return p


# torch_compile is left out, not skipped: its check ran (and passed) with gcc here, but Inductor's compile took 183 s
# on a busy 2-core machine; the benchmarks' first epoch checks it against the same reference (bench/bench_epoch.py,
# `nox -s bench -- --size smoke`), and its faults are tested below. pallas (a TPU and a GPU kernel):
# tests/test_pallas.py, tests/test_pallas_gpu.py; the GPU rungs (command buffers, CUDA graphs): at the end.
@pytest.mark.parametrize("pipeline", [p for p in PIPELINES if p != "torch_compile" and p not in PIPELINE_BACKENDS])
def test_every_pipeline_computes_the_reference_epoch(pipeline, split, params, by_hand):
    if why := missing_package(pipeline):
        pytest.skip(why)
    epoch = make_epoch(pipeline, split, batch_size=128)
    assert epoch.compile(params) > 0 or pipeline == "torch"  # eager torch compiles nothing
    assert epoch.n_steps == 8 and epoch.sizes == [128, 104]
    result = epoch(params)
    assert max_relative_difference(result, by_hand) < epoch.tolerance <= TORCH_TOLERANCE
    assert max_relative_difference(epoch(result), by_hand) > 1e-3  # a second epoch moves on
    assert max_relative_difference(params, by_hand) > 1e-3  # the caller's params are untouched


def test_an_epoch_that_skips_a_batch_is_told_apart(split, params, by_hand):
    """The tolerance above is far tighter than what leaving out the last batch changes."""
    images, labels = as_arrays(split)
    targets = model.one_hot(labels, 10)
    p = params
    for start in range(0, 896, 128):
        p = model.update(p, images[start : start + 128], targets[start : start + 128])
    assert max_relative_difference(p, by_hand) > 1e-3


def test_epoch_flops_come_from_the_model_and_xlas_count_stays_beside_them(split, params):
    epoch = make_epoch("batched", split, batch_size=128)
    assert epoch.xla_flops is None  # not compiled yet; the model's count needs no compile
    assert epoch.flops == model.epoch_flops(1000, 128) == 7 * model.step_flops(128) + model.step_flops(104)
    epoch.compile(params)
    per_step_128 = epoch.step.flops(128)
    assert per_step_128 == pytest.approx(model.step_flops(128), rel=0.02)  # XLA:CPU counts the elementwise work too
    assert epoch.xla_flops == pytest.approx(7 * per_step_128 + epoch.step.flops(104))


def test_progress_sees_every_batch(split, params):
    seen = []

    def progress(iterable, total):
        for item in iterable:
            seen.append(total)
            yield item

    make_epoch("batched", split, batch_size=256)(params, progress)
    assert seen == [4, 4, 4, 4]


def test_prefetch_hands_errors_to_the_consumer():
    images = np.zeros((10, 784), np.float32)

    class Boom(Exception):
        pass

    def batches():
        yield slice(0, 5)
        raise Boom

    stream = device_batches(images, images, batches(), jax.devices()[0], depth=2)
    next(stream)
    with pytest.raises(Boom):
        next(stream)


def test_compiled_step_compiles_an_unforeseen_size(params):
    step = CompiledStep()
    x = np.ones((3, 784), np.float32)
    y = np.asarray(model.one_hot(np.array([0, 1, 2]), 10))
    np.testing.assert_array_equal(step(params, x, y)[0][0], model.update(params, x, y)[0][0])
    assert step.flops(3) > 0


def test_the_scan_takes_the_last_batch_padded_with_its_step_scaled():
    images, targets = np.arange(300 * 3, dtype=np.float32).reshape(300, 3), np.ones((300, 10), np.float32)
    xs, ys, factors = padded_batches(images, targets, 128)
    assert xs.shape == (3, 128, 3) and ys.shape == (3, 128, 10) and factors.tolist() == [1.0, 1.0, np.float32(128 / 44)]
    np.testing.assert_array_equal(xs.reshape(-1, 3)[:300], images)
    assert not xs[2, 44:].any() and not ys[2, 44:].any() and ys[2, :44].all()
    assert padded_batches(images[:256], targets[:256], 128)[2].tolist() == [1.0, 1.0]


@pytest.mark.parametrize(("n", "batch", "sizes"), [(60000, 128, [128, 96]), (256, 128, [128]), (50, 128, [50])])
def test_batch_sizes_and_slices_of_an_epoch(n, batch, sizes):
    assert batch_sizes(n, batch) == sizes
    cuts = slices(n, batch)
    assert cuts[0].start == 0 and cuts[-1].stop == n
    assert sorted({s.stop - s.start for s in cuts}, reverse=True) == sizes


def test_unknown_pipeline(split):
    with pytest.raises(ValueError, match="unknown pipeline 'fast'"):
        make_epoch("fast", split)


@pytest.mark.parametrize("pipeline", LOADER_PIPELINES)
def test_every_loader_yields_the_tutorials_batches(pipeline, split):
    """The input alone (what bench_loader.py times): the same images and labels, batch by batch, in order."""
    if why := missing_package(pipeline):
        pytest.skip(why)
    images, labels = as_arrays(split)
    batches = list(make_loader(pipeline, split, 128))
    assert len(batches) == 8
    for (x, y), s in zip(batches, slices(len(images), 128), strict=True):
        assert x.dtype == np.float32 and x.shape == (s.stop - s.start, 784)
        np.testing.assert_array_equal(x, images[s])
        np.testing.assert_array_equal(y, labels[s])


@pytest.mark.parametrize("pipeline", WORKER_PIPELINES)
def test_loader_workers_are_spawned_and_feed_the_same_batches(pipeline):
    """With 2 worker processes: the same parameters as the tutorial's loader in this process, and no fork of this
    process (JAX warns `os.fork() was called` when a process that runs JAX forks)."""
    import warnings

    train = data.load_datasets("synthetic", synthetic_sizes=(700, 100)).train
    params = model.init_network_params(model.LAYER_SIZES, random.PRNGKey(0))
    seed = make_epoch("seed", train)(params)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fed = make_epoch(pipeline, train, workers=2)(params)
    assert not [w for w in caught if "fork" in str(w.message)]
    assert all(np.array_equal(a, b) for a, b in zip(jax.tree_util.tree_leaves(seed), jax.tree_util.tree_leaves(fed)))


def test_loader_without_one(split):
    with pytest.raises(ValueError, match="pipeline 'scan' has no loader"):
        make_loader("scan", split, 128)


def test_a_pipeline_whose_package_is_missing_says_how_to_install_it(split, monkeypatch):
    from jaxmlp.errors import JaxmlpError
    from jaxmlp.pipelines import loaders

    monkeypatch.setattr(loaders, "OPTIONAL", {"hf": ("no_such_package_here", "hf")})
    assert missing_package("hf") == "the hf pipeline needs the no_such_package_here package: pip install 'jaxmlp[hf]'"
    assert missing_package("seed") is None
    with pytest.raises(JaxmlpError, match=r"pip install 'jaxmlp\[hf\]'"):
        make_epoch("hf", split)


TORCH_FREE = """
import sys
from jaxmlp.measure import scaling, scaling_worker, workers, workload
from jaxmlp.measure.sweep import bisect, matrix, settings, trials, worker
from jaxmlp.pipelines import epochs, loaders, mnist

train, _ = mnist.load_arrays("synthetic", None, 512)
for pipeline in ("grain", "hf", "batched"):
    if loaders.missing_package(pipeline) is None:
        list(loaders.make_loader(pipeline, train, 128))
for pipeline in ("scan", "sharded"):
    epochs.make_epoch(pipeline, train)
print(sorted(m for m in sys.modules if m.split(".")[0] == "torch"))
"""


def test_the_torch_free_pipelines_and_the_workers_never_import_torch():
    """Grain, hf and the array pipelines, the sweep's and the scaling's workers run where torch is not installed."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", TORCH_FREE], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_grain_workers_persist_and_every_epoch_starts_at_batch_0(split):
    """Grain's workers are started once; an epoch stopped early does not shift the next one."""
    images, labels = as_arrays(split)
    loader = make_loader("grain", split, 128, workers=1)
    first = next(iter(loader))  # an epoch stopped after one batch
    np.testing.assert_array_equal(first[1], labels[:128])
    for _ in range(2):
        batches = list(loader)
        assert len(batches) == 8
        np.testing.assert_array_equal(np.concatenate([y for _, y in batches]), labels)
        np.testing.assert_array_equal(batches[-1][0], images[896:])


# --- the PyTorch rung --------------------------------------------------------------------------------------------


def test_the_torch_tolerance_is_stated_once():
    from jaxmlp.pipelines import torch_mlp

    assert torch_mlp.TOLERANCE == TORCH_TOLERANCE < torch_mlp.EPOCH_TOLERANCE
    n = torch_mlp.TOLERANCE_STEPS * 128
    for pipeline in (p for p in TORCH_PIPELINES if p not in PIPELINE_BACKENDS):  # torch_graph: a GPU's, below
        assert make_epoch(pipeline, data.SyntheticMNIST(size=n)).tolerance == TORCH_TOLERANCE
        assert make_epoch(pipeline, data.SyntheticMNIST(size=n + 1)).tolerance == torch_mlp.EPOCH_TOLERANCE


def test_the_torch_math_is_the_tutorials(split, params):
    """Loss and one step's params of `torch_mlp` against `jaxmlp.model`, from the same params and batch."""
    import torch

    from jaxmlp.pipelines import torch_mlp

    images, labels = as_arrays(split)
    x, y = images[:128], np.asarray(model.one_hot(labels[:128], 10))
    mine = torch_mlp.to_torch(params, torch.device("cpu"))
    x, y = x.copy(), y.copy()  # writable, as torch.from_numpy wants them
    got = float(torch_mlp.loss(mine, torch.from_numpy(x), torch.from_numpy(y)).detach())
    assert got == pytest.approx(float(model.loss(params, x, y)), rel=1e-6)
    torch_mlp.sgd_step(mine, torch.from_numpy(x), torch.from_numpy(y), model.STEP_SIZE)
    assert max_relative_difference(torch_mlp.to_numpy(mine), model.update(params, x, y)) < 1e-6
    assert max_relative_difference(params, model.update(params, x, y)) > 1e-4  # the step moved them


@pytest.fixture(scope="module")
def mnist_scan(mnist, params):
    """The scan epoch's params after one epoch on MNIST: the first 4096 training images, and all 60000."""
    from jaxmlp.pipelines.mnist import Split

    subset = Split(np.asarray(mnist.train.data[:4096]), np.asarray(mnist.train.targets[:4096]))
    return {n: (split, make_epoch("scan", split)(params)) for n, split in (("subset", subset), ("all", mnist.train))}


def test_the_torch_epoch_matches_the_scan_epoch_on_mnist(mnist, mnist_scan, params):
    """After one epoch on real MNIST: params within the stated tolerance of the scan epoch's (`torch_mlp.TOLERANCE` on
    the first 4096 images, 32 steps; `EPOCH_TOLERANCE` on all 469), test accuracy within 0.1 point of scan's."""
    from jaxmlp.pipelines import torch_mlp

    images, labels = as_arrays(mnist.test)
    test = model.one_hot(labels, 10)
    for name, bound in (("subset", TORCH_TOLERANCE), ("all", torch_mlp.EPOCH_TOLERANCE)):
        split, scan = mnist_scan[name]
        torch_params = make_epoch("torch", split)(params)
        assert max_relative_difference(torch_params, scan) < bound, name
        accuracies = [float(model.evaluate(p, images, test).accuracy) for p in (torch_params, scan)]
        assert abs(accuracies[0] - accuracies[1]) < 0.001, (name, accuracies)
    assert accuracies[1] > 0.9  # the whole epoch trained


def test_torch_compile_without_a_c_compiler_says_why(split, params, monkeypatch):
    import shutil

    from jaxmlp.errors import JaxmlpError

    monkeypatch.setattr(shutil, "which", lambda name: None)
    epoch = make_epoch("torch_compile", split)
    with pytest.raises(JaxmlpError, match=r"^torch.compile needs a C compiler .*: none found here \(cc, gcc\)$"):
        epoch.compile(params)


def test_a_torch_compile_failure_is_one_line(params):
    import torch

    from jaxmlp.errors import JaxmlpError
    from jaxmlp.pipelines import torch_mlp

    def broken(*_):
        raise RuntimeError("\nInductor: cc1plus not found\nand more lines")

    mine = torch_mlp.to_torch(params, torch.device("cpu"))
    with pytest.raises(JaxmlpError, match=r"^torch.compile failed here \(RuntimeError\): Inductor: cc1plus not found$"):
        torch_mlp.warm_up(mine, [(torch.zeros(2, 784), torch.zeros(2, 10))], broken)


def test_without_torch_the_splits_are_arrays_and_torch_pipelines_are_refused(monkeypatch):
    """A JAX-only machine without torch: the splits come as arrays equal to torchvision's, the array pipelines take
    them, and a pipeline needing torch is refused in one line naming what is missing."""
    from jaxmlp.errors import JaxmlpError

    with_torch = loaders.load_splits("synthetic", synthetic_sizes=(512, 256), limit=300)
    real_missing = loaders.missing_modules
    monkeypatch.setattr(
        loaders,
        "missing_modules",
        lambda modules: (
            [m for m in modules if m in ("torch", "torchvision")]
            + real_missing([m for m in modules if m not in ("torch", "torchvision")])
        ),
    )
    arrays = loaders.load_splits("synthetic", synthetic_sizes=(512, 256), limit=300)
    assert "no torch here" in arrays.source and "first 300 training images" in arrays.source
    for ours, theirs in ((arrays.train, with_torch.train), (arrays.test, with_torch.test)):
        assert all(np.array_equal(a, b) for a, b in zip(as_arrays(ours), as_arrays(theirs)))
    assert make_epoch("batched", arrays.train, batch_size=128).n_steps == 3
    assert missing_package("seed") == (
        "the seed pipeline needs torch, which this Python lacks (a JAX-only machine, such as a TPU host, may): pip "
        "install 'jaxmlp[tutorial]'"
    )
    with pytest.raises(JaxmlpError, match="the torch pipeline needs torch"):
        make_epoch("torch", arrays.train, batch_size=128)


def test_a_package_that_is_installed_but_does_not_import_skips_its_pipeline_saying_so(tmp_path, monkeypatch):
    """A carried wheel that does not import here (built for another Python, say) is found by importing it, not by
    looking it up: its pipeline is refused in one line naming the error, not failed mid-row."""
    (tmp_path / "jaxmlp_broken_grain.py").write_text("raise ImportError('built for another Python')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(loaders, "PIPELINE_NEEDS", {"grain": ("jaxmlp_broken_grain",)})
    assert loaders.missing_modules(("jaxmlp_broken_grain", "numpy")) == ["jaxmlp_broken_grain"]
    assert missing_package("grain") == (
        "the grain pipeline needs jaxmlp_broken_grain, installed but not importing here (jaxmlp_broken_grain: "
        "ImportError: built for another Python)"
    )


# --- the GPU rungs: XLA's command buffers and the step as a CUDA graph (what only a GPU runs, on a GPU machine) ---


def test_the_command_buffer_variants_are_xlas_option_per_compile():
    from jaxmlp.pipelines.array_epochs import command_buffer_options

    assert command_buffer_options("scan") == {}  # XLA's own (or XLA_FLAGS', which the metadata records)
    assert command_buffer_options("scan_cb_off") == {"xla_gpu_enable_command_buffer": ""}
    loops = command_buffer_options("scan_cb_loops")["xla_gpu_enable_command_buffer"].split(",")
    newer = [kind for kind in registry.COMMAND_BUFFER_NEWER if kind in loops]  # where this XLA knows them
    assert loops == [*registry.COMMAND_BUFFER_DEFAULT, *newer, "WHILE", "CONDITIONAL"]
    assert set(registry.COMMAND_BUFFERS) == set(registry.COMMAND_BUFFER_VARIANTS) <= set(registry.SCAN_LOOP)


def test_each_command_buffer_variant_reaches_xla_and_computes_the_scan_epoch(split, params):
    """XLA:CPU takes the option and has no command buffers: the scan epoch's params exactly; a command type XLA does
    not know fails a compile (the option reaches XLA), and is left out; a GPU's row records the variant and flag."""
    from jaxmlp.errors import JaxmlpError
    from jaxmlp.pipelines import array_epochs
    from jaxmlp.pipelines.array_epochs import ScanEpoch

    images, labels = as_arrays(split)
    reference = make_epoch("scan", split)(params)
    for pipeline in ("scan_cb_off", "scan_cb_loops"):
        with pytest.raises(JaxmlpError, match=f"^the {pipeline} pipeline sets XLA:GPU's command buffers .* GPU host"):
            make_epoch(pipeline, split)
        epoch = ScanEpoch(pipeline, images, labels, 128, model.STEP_SIZE, jax.devices()[0])
        assert max_relative_difference(epoch(params), reference) == 0.0
        assert "xla_scan_command_buffers" not in epoch.facts()  # counted on a GPU only
        assert epoch.training() == {"scan_unroll": 1}  # a CPU's row claims no command buffers
        epoch.platform = "gpu"  # what a GPU's row records
        flag = epoch.training()["xla_gpu_enable_command_buffer"]
        assert epoch.training()["command_buffer"] == registry.COMMAND_BUFFER_VARIANTS[pipeline]
        assert flag == array_epochs.command_buffer_options(pipeline)["xla_gpu_enable_command_buffer"]
    # a type XLA does not know is refused by its compile, so left out: the option reaches XLA
    assert array_epochs.known_command_types(("FUSION", "NO_SUCH_COMMAND", "WHILE")) == ("FUSION", "WHILE")


def test_the_command_buffers_of_a_program_are_counted_from_its_hlo():
    from jaxmlp.pipelines.array_epochs import command_buffer_count

    hlo = """HloModule m, is_scheduled=true

%command_buffer (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
}

command_buffer.12 {
  p = f32[4]{0} parameter(0)
}

ENTRY %main (x: f32[4]) -> f32[4] {
  %call = f32[4]{0} call(%x), to_apply=%command_buffer
}
"""
    assert command_buffer_count(hlo) == 2 and command_buffer_count("") == 0


def test_the_graph_step_on_static_buffers_computes_the_scan_epoch(split, params, by_hand):
    """The CUDA-graph torch epoch's steps, run eagerly on the same static buffers a GPU captures (the capture alone
    needs CUDA): the scan epoch's params within the torch tolerance, the last batch its own size, the caller's params
    untouched, each epoch from the params it is given."""
    from jaxmlp.errors import JaxmlpError
    from jaxmlp.pipelines.torch_epochs import TorchGraphEpoch

    with pytest.raises(JaxmlpError, match="^the torch_graph pipeline replays .* CUDA GPU.*--pipeline torch$"):
        make_epoch("torch_graph", split)
    images, labels = as_arrays(split)
    epoch = TorchGraphEpoch("torch_graph", images, labels, 128, model.STEP_SIZE, jax.devices()[0], capture=False)
    assert epoch.compile(params) > 0 and sorted(epoch.steps) == [104, 128]
    result = epoch(params)
    assert max_relative_difference(result, by_hand) < epoch.tolerance == TORCH_TOLERANCE
    assert max_relative_difference(epoch(params), result) == 0.0  # the static params are reset from the given ones
    assert max_relative_difference(epoch(result), by_hand) > 1e-3  # a second epoch moves on
    assert max_relative_difference(params, by_hand) > 1e-3
    assert epoch.facts()["torch_cuda_graph"] is False


def test_the_graph_step_captures_autocast_without_its_cache():
    import torch

    from jaxmlp.pipelines import torch_mlp

    cuda, cpu = torch.device("cuda", 0), torch.device("cpu")  # devices as names: no GPU needed to choose
    assert torch_mlp.loss_of("bf16", cuda, graphed=True) is torch_mlp.loss_bf16_graphed
    assert torch_mlp.loss_of("bf16", cuda) is torch_mlp.loss_bf16_cuda
    assert torch_mlp.loss_of("bf16", cpu, graphed=True) is torch_mlp.loss_bf16
    assert torch_mlp.loss_of("f32", cuda, graphed=True) is torch_mlp.loss


def test_every_pipeline_that_runs_on_some_backends_says_why_and_what_instead():
    from jaxmlp.pipelines.epoch_base import BACKEND_REASONS, FALLBACKS

    assert set(BACKEND_REASONS) == set(PIPELINE_BACKENDS)
    assert set(FALLBACKS) <= set(PIPELINE_BACKENDS) and not set(FALLBACKS.values()) & set(PIPELINE_BACKENDS)
