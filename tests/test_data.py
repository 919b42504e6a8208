"""MNIST files (gz and raw, corrupt and missing), the synthetic set and the tutorial's loader shim."""

import gzip
import os
import shutil

import numpy as np
import pytest
from conftest import idx_bytes, write_idx_folder

from jaxmlp.errors import JaxmlpError
from jaxmlp.pipelines import data
from jaxmlp.pipelines.loaders import as_arrays

# --- the loader shim ---------------------------------------------------------


def test_flatten_and_cast_keeps_pixels_unscaled():
    image = np.arange(784, dtype=np.uint8).reshape(28, 28)
    flat = data.FlattenAndCast()(image)
    assert flat.shape == (784,) and flat.dtype == np.float32
    assert flat.max() == 255.0 and flat[17] == 17.0


def test_numpy_loader_yields_numpy_batches_in_order():
    dataset = data.SyntheticMNIST(train=True, size=300, transform=data.FlattenAndCast())
    batches = list(data.make_loader(dataset, batch_size=128))
    assert [x.shape for x, _ in batches] == [(128, 784), (128, 784), (44, 784)]
    x, y = batches[0]
    assert isinstance(x, np.ndarray) and x.dtype == np.float32
    assert isinstance(y, np.ndarray) and y.dtype == np.int64
    images, labels = as_arrays(dataset)
    np.testing.assert_array_equal(np.concatenate([x for x, _ in batches]), images)  # no shuffling
    np.testing.assert_array_equal(np.concatenate([y for _, y in batches]), labels)


def test_numpy_collate_turns_tensors_into_arrays():
    out = data.numpy_collate([(np.zeros(3, np.float32), 1), (np.ones(3, np.float32), 2)])
    assert isinstance(out[0], np.ndarray) and out[0].shape == (2, 3)
    np.testing.assert_array_equal(out[1], [1, 2])


# --- synthetic data ------------------------------------------------------------


def test_synthetic_is_deterministic_mnist_shaped_and_distinct_per_split():
    a = data.SyntheticMNIST(train=True, size=500)
    b = data.SyntheticMNIST(train=True, size=500)
    test = data.SyntheticMNIST(train=False, size=500)
    assert a.data.shape == (500, 28, 28) and str(a.data.dtype) == "torch.uint8"
    np.testing.assert_array_equal(a.data.numpy(), b.data.numpy())
    np.testing.assert_array_equal(a.targets.numpy(), b.targets.numpy())
    assert not np.array_equal(a.data.numpy(), test.data.numpy())
    assert set(np.unique(a.targets.numpy())) == set(range(10))
    assert a.data.numpy().max() > 200 and (a.data.numpy() == 0).mean() > 0.6  # MNIST-like intensities
    assert len(data.SyntheticMNIST(train=True)) == 60000 and len(data.SyntheticMNIST(train=False)) == 10000


def test_synthetic_datasets_are_labelled():
    datasets = data.load_datasets("synthetic", synthetic_sizes=(100, 50))
    assert datasets.name == "synthetic" and "SYNTHETIC data, not MNIST" in datasets.label
    assert len(datasets.train) == 100 and len(datasets.test) == 50


# --- validating IDX files --------------------------------------------------------

IMAGES = data.MNIST_FILES[2]  # t10k images: 10000 x 28 x 28
LABELS = data.MNIST_FILES[3]


def test_check_idx_accepts_a_valid_file(tmp_path):
    data.check_idx(idx_bytes("images", 10000), IMAGES, tmp_path / "f")
    data.check_idx(idx_bytes("labels", 10000), LABELS, tmp_path / "f")


@pytest.mark.parametrize(
    ("raw", "spec", "message"),
    [
        (idx_bytes("images", 10000)[:-100], IMAGES, "truncated"),
        (idx_bytes("images", 10000)[:10], IMAGES, "truncated"),
        (idx_bytes("images", 10000) + b"\0", IMAGES, "too long"),
        (idx_bytes("labels", 10000), IMAGES, "wrong magic number"),
        (idx_bytes("images", 9999), IMAGES, "holds 9999x28x28 items, expected 10000x28x28"),
        (np.array([2049, 10000], ">u4").tobytes() + bytes([12] * 10000), LABELS, "labels outside 0-9"),
    ],
    ids=["truncated", "header-only", "too-long", "wrong-magic", "wrong-count", "bad-labels"],
)
def test_check_idx_names_the_file_and_the_problem(tmp_path, raw, spec, message):
    path = tmp_path / "t10k-images-idx3-ubyte"
    with pytest.raises(JaxmlpError, match=message) as err:
        data.check_idx(raw, spec, path)
    assert str(path) in str(err.value)
    assert "fresh copy" in str(err.value)


@pytest.mark.parametrize("gz", [True, False], ids=["gz", "raw"])
def test_prepare_from_a_flat_folder(tmp_path, gz):
    source = write_idx_folder(tmp_path / "src", gz=gz)
    root = data.prepare_mnist(source, cache_dir=tmp_path / "cache")
    raw_dir = root / "MNIST" / "raw"
    for spec in data.MNIST_FILES:
        expected = idx_bytes("images" if spec.item_shape else "labels", spec.count)
        assert (raw_dir / spec.name).read_bytes() == expected
    assert data.prepare_mnist(source, cache_dir=tmp_path / "cache") == root  # prepared once
    assert sorted(p.name for p in (tmp_path / "src").iterdir()) == sorted(
        spec.name + (".gz" if gz else "") for spec in data.MNIST_FILES
    )  # the source folder is left alone


def test_torchvision_layout_is_used_in_place(tmp_path):
    folder = tmp_path / "data"
    write_idx_folder(folder / "MNIST" / "raw", gz=False)
    assert data.prepare_mnist(folder, cache_dir=tmp_path / "cache") == folder
    assert not (tmp_path / "cache").exists()


def test_truncated_gzip_is_named(tmp_path):
    source = write_idx_folder(tmp_path / "src", gz=True)
    broken = source / "train-labels-idx1-ubyte.gz"
    broken.write_bytes(broken.read_bytes()[:-200])
    with pytest.raises(JaxmlpError, match="train-labels-idx1-ubyte.gz: cannot be read"):
        data.prepare_mnist(source, cache_dir=tmp_path / "cache")
    assert not list((tmp_path / "cache" / "prepared").glob("*/MNIST")), "nothing half-written"


def test_not_gzip_at_all_is_named(tmp_path):
    source = write_idx_folder(tmp_path / "src", gz=True)
    (source / "t10k-images-idx3-ubyte.gz").write_bytes(b"<html>not found</html>")
    with pytest.raises(JaxmlpError, match="t10k-images-idx3-ubyte.gz: cannot be read"):
        data.prepare_mnist(source, cache_dir=tmp_path / "cache")


def test_corrupt_file_inside_a_valid_gzip_is_named(tmp_path):
    source = write_idx_folder(tmp_path / "src", gz=True, overrides={"t10k-images-idx3-ubyte": idx_bytes("images", 10)})
    with pytest.raises(JaxmlpError, match=r"t10k-images-idx3-ubyte.gz: holds 10x28x28 items"):
        data.prepare_mnist(source, cache_dir=tmp_path / "cache")


def test_missing_file_and_missing_folder(tmp_path):
    source = write_idx_folder(tmp_path / "src", gz=True)
    (source / "t10k-labels-idx1-ubyte.gz").unlink()
    with pytest.raises(
        JaxmlpError, match=r"src lacks t10k-labels-idx1-ubyte\[\.gz\] \(has the other 3\).*--dataset synthetic"
    ):
        data.prepare_mnist(source, cache_dir=tmp_path / "cache")
    with pytest.raises(JaxmlpError, match=r"does not exist: pass --data-dir"):
        data.prepare_mnist(tmp_path / "nowhere", cache_dir=tmp_path / "cache")


def test_data_dir_precedence(tmp_path, monkeypatch):
    monkeypatch.setenv("JAXMLP_DATA_DIR", str(tmp_path / "env"))
    monkeypatch.setenv("JAXMLP_CACHE_DIR", str(tmp_path / "cache"))
    assert data.resolve_data_dir(tmp_path / "arg") == tmp_path / "arg"
    assert data.resolve_data_dir(None) == tmp_path / "env"
    monkeypatch.delenv("JAXMLP_DATA_DIR")
    assert data.resolve_data_dir(None) == tmp_path / "cache"


def test_download_offline_fails_in_one_line_and_leaves_no_empty_folder(tmp_path, monkeypatch):
    from torchvision.datasets import MNIST

    def offline(self):  # as torchvision fails offline: the raw folder made, then every mirror tried
        os.makedirs(self.raw_folder, exist_ok=True)
        raise RuntimeError(
            "Error downloading train-images-idx3-ubyte.gz:\nTried https://ossci-datasets.s3.amazonaws.com/mnist/, "
            "got:\n<urlopen error [Errno -2] Name or service not known>\n"
        )

    monkeypatch.setattr(MNIST, "download", offline)
    folder = tmp_path / "new" / "data"
    with pytest.raises(JaxmlpError) as raised:
        data.load_datasets("mnist", folder, download=True)
    said = str(raised.value)
    assert "\n" not in said and said.startswith(
        f"downloading MNIST into {folder} failed (RuntimeError: Error downloading train-images-idx3-ubyte.gz: "
        "<urlopen error [Errno -2] Name or service not known>); without a network, put the four MNIST IDX files in "
        f"{folder} (or set JAXMLP_DATA_DIR"
    )
    assert list(tmp_path.iterdir()) == []  # the folders it made for the download are gone


def test_a_data_folder_that_is_a_file_says_so(tmp_path):
    file = tmp_path / "passwd"
    file.write_text("x")
    for read in (lambda: data.prepare_mnist(file), lambda: data.load_arrays("mnist", file)):
        with pytest.raises(JaxmlpError, match=f"MNIST data folder {file} is a file, not a folder: pass --data-dir"):
            read()


# --- the real MNIST files ----------------------------------------------------------


@pytest.mark.mnist
def test_real_mnist_loads_from_gz_and_from_raw(mnist_dir, mnist, tmp_path):
    raw_folder = tmp_path / "raw"
    raw_folder.mkdir()
    for spec in data.MNIST_FILES:
        source = data.find_idx_files(mnist_dir)[spec.name]
        if source.suffix == ".gz":
            with gzip.open(source) as f, open(raw_folder / spec.name, "wb") as out:
                shutil.copyfileobj(f, out)
        else:
            shutil.copy(source, raw_folder / spec.name)
    from_raw = data.load_datasets("mnist", raw_folder)
    for a, b in ((mnist.train, from_raw.train), (mnist.test, from_raw.test)):
        np.testing.assert_array_equal(a.data.numpy(), b.data.numpy())
        np.testing.assert_array_equal(a.targets.numpy(), b.targets.numpy())
    assert len(mnist.train) == 60000 and len(mnist.test) == 10000
    image, label = mnist.train[0]
    assert image.shape == (784,) and image.dtype == np.float32 and image.max() == 255.0
    assert label == 5  # MNIST's first training digit


@pytest.mark.mnist
def test_without_torchvision_the_idx_reader_gives_torchvisions_samples(mnist, mnist_dir):
    """`IdxMNIST` (a machine without torchvision, such as a TPU host) yields the same PIL samples, images and labels
    as torchvision's MNIST over the same files."""
    from jaxmlp.pipelines import data
    from jaxmlp.pipelines.mnist import load_arrays

    train, test = load_arrays("mnist", mnist_dir)
    for ours, theirs in (
        (data.IdxMNIST(train, data.FlattenAndCast()), mnist.train),
        (data.IdxMNIST(test, data.FlattenAndCast()), mnist.test),
    ):
        assert len(ours) == len(theirs)
        for index in (0, 1, len(theirs) // 2, len(theirs) - 1):
            (a, label_a), (b, label_b) = ours[index], theirs[index]
            assert a.dtype == b.dtype == np.float32 and np.array_equal(a, b) and label_a == label_b
        assert np.array_equal(ours.targets.numpy(), np.asarray(theirs.targets))
