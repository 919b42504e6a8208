"""Releases from a folder of wheels (``--wheels DIR``: nightlies, a private build, `pip download`'s): listed from the
wheels' names, ordered by version then build date, a release the folder lacks named before any environment is made,
and an environment made from the folder without the package index."""

import subprocess
import sys
from pathlib import Path

import pytest

from jaxmlp.cli import main
from jaxmlp.errors import JaxmlpError
from jaxmlp.measure.environments import envs, published
from jaxmlp.measure.environments.envs import Source

HERE = f"cp{sys.version_info.major}{sys.version_info.minor}"


def wheel_folder(folder: Path, versions, jaxlib_tag: str = HERE) -> Path:
    """A folder of (empty) jax and jaxlib wheels of ``versions``: their names are all the listing reads."""
    folder.mkdir(parents=True, exist_ok=True)
    for v in versions:
        (folder / f"jax-{v}-py3-none-any.whl").write_bytes(b"")
        (folder / f"jaxlib-{v}-{jaxlib_tag}-{jaxlib_tag}-manylinux2014_x86_64.whl").write_bytes(b"")
    return folder


def test_a_wheel_folder_lists_its_releases_a_nightly_before_its_release(tmp_path):
    nightlies = ["0.4.36.dev20241122", "0.4.36.dev20241120"]
    folder = wheel_folder(tmp_path / "wheels", ["0.4.36", "0.4.35", *nightlies, "0.4.29"])
    (folder / "jax-0.4.38-py3-none-any.whl").write_bytes(b"")  # no jaxlib beside it: not a release here
    (folder / "notes.txt").write_text("")
    assert published.wheel_releases(folder) == ["0.4.35", "0.4.36.dev20241120", "0.4.36.dev20241122", "0.4.36"]
    assert published.available(folder) == published.wheel_releases(folder)


def test_a_folder_without_matching_wheels_is_one_line(tmp_path):
    with pytest.raises(JaxmlpError, match="no such folder"):
        published.wheel_releases(tmp_path / "nothing")
    other = wheel_folder(tmp_path / "other", ["0.4.35"], jaxlib_tag="cp39")
    with pytest.raises(JaxmlpError, match=f"1 jax and 1 jaxlib wheel\\(s\\), none of jaxlib for {HERE}"):
        published.wheel_releases(other)


def test_the_environment_of_a_folder_is_not_the_index_s_nor_a_nightly_s(tmp_path):
    folder = wheel_folder(tmp_path / "wheels", ["0.4.36", "0.4.36.dev20241122"])
    index, mine = envs.env_path("0.4.36", tmp_path), envs.env_path("0.4.36", tmp_path, Source(folder))
    nightly = envs.env_path("0.4.36.dev20241122", tmp_path, Source(folder))
    assert len({index, mine, nightly}) == 3 and mine.name.startswith(f"jax-0.4.36-py{sys.version_info[0]}")
    assert envs.env_path("0.4.36", tmp_path, Source(folder, "tpu")) != mine
    assert Source(folder).requirements("0.4.36") == ["jax==0.4.36", "jaxlib==0.4.36"]
    assert Source(None, "gpu").requirements("0.7.2") == ["jax[cuda13]==0.7.2", "jaxlib==0.7.2"]
    assert Source(None, "gpu").requirements("0.7.0") == ["jax[cuda12]==0.7.0", "jaxlib==0.7.0"]  # no CUDA 13 build
    assert Source(None, "tpu").requirements("0.7.0")[0] == "jax[tpu]==0.7.0"
    assert Source(folder).pip_options() == ["--no-index", "--find-links", str(folder)]


def test_a_release_the_folder_lacks_is_named_before_any_environment_is_made(tmp_path, capsys):
    folder = wheel_folder(tmp_path / "wheels", ["0.4.30", "0.4.31"])
    root = tmp_path / "envs"
    argv = ["sweep", "timeline", "0.4.30", "0.4.33", "--versions", "0.4.31", "--wheels", str(folder)]
    assert main([*argv, "--envs", str(root), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"--wheels {folder} holds no jax and jaxlib wheels of 0.4.33" in err
    assert not root.exists()
    with pytest.raises(JaxmlpError, match="holds no jax_cuda12_plugin wheel"):  # 0.4.30's CUDA build: CUDA 12's
        published.check_held(["0.4.30"], Source(folder, "gpu"))


def test_a_release_without_a_cuda_build_is_named_in_one_line_before_any_environment(tmp_path, capsys):
    """jax-cuda13-plugin exists from 0.7.2, jax-cuda12-plugin from 0.4.30: a GPU sweep takes each release's newest
    CUDA build, and names the releases with none in one line, for the index and a folder alike."""
    assert envs.cuda_build("0.11.2") == envs.cuda_build("0.7.2") == ("cuda13", "jax_cuda13_plugin")
    assert envs.cuda_build("0.7.1") == envs.cuda_build("0.4.30") == ("cuda12", "jax_cuda12_plugin")
    assert envs.cuda_build("0.4.29") is None and Source(None, "tpu").accelerator("0.4.29") == ("tpu", "libtpu")
    with pytest.raises(JaxmlpError) as refused:
        published.check_held(["0.4.26", "0.4.29", "0.4.30"], Source(None, "gpu"))
    said = str(refused.value)
    assert "\n" not in said and said.startswith("--backend gpu: 0.4.26, 0.4.29 has no CUDA build on the index (")
    assert "jax[cuda13] from 0.7.2, jax[cuda12] from 0.4.30" in said
    published.check_held(["0.4.26"], Source(None, "cpu"))  # the CPU's build: every release has one
    published.check_held(["0.4.30", "0.7.2"], Source(None, "gpu"))


RELEASE = "0.4.30"
"""The release downloaded for the real folder: the oldest jaxmlp supports (its wheels are in pip's cache wherever
its environment was made from the index)."""


def downloaded(folder: Path) -> Path:
    """``RELEASE``'s wheels and what they need, `pip download`ed into ``folder`` once; a skip naming why where the
    package index cannot be reached."""
    try:
        if published.wheel_releases(folder) == [RELEASE]:
            return folder
    except JaxmlpError:  # not there yet
        folder.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--only-binary", ":all:"]
    command += [f"jax=={RELEASE}", f"jaxlib=={RELEASE}", "-d", str(folder)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=envs.MAKE_SECONDS)
    except subprocess.TimeoutExpired:
        pytest.skip(f"pip download of jax {RELEASE} took over {envs.MAKE_SECONDS} s: is the package index slow?")
    if done.returncode != 0:
        pytest.skip(f"pip download of jax {RELEASE} failed (is the package index reachable?): {done.stderr[-300:]}")
    return folder


@pytest.mark.xdist_group("processes")
def test_an_environment_is_made_from_a_folder_of_wheels_without_the_index(monkeypatch):
    """The folder and its environment are kept under the environments' root, made once a machine."""
    folder = downloaded(envs.envs_root() / ".wheels-test")
    source = Source(folder)
    python = envs.make_env(RELEASE, log=lambda line: None, source=source)
    assert envs.env_path(RELEASE, source=source) != envs.env_path(RELEASE)
    code = "import jax, jaxlib; print(jax.__version__, jaxlib.__version__)"
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == [RELEASE, RELEASE], done.stderr[-2000:]


def test_the_corpus_names_a_release_its_wheel_folder_lacks_before_any_case_runs(tmp_path, capsys):
    manifest = Path(__file__).parent / "fixtures" / "corpus" / "corpus.toml"
    folder = wheel_folder(tmp_path / "wheels", ["0.4.30", "0.4.31", "0.4.33"])
    argv = ["sweep", "corpus", str(manifest), "--wheels", str(folder), "--envs", str(tmp_path / "envs")]
    assert main([*argv, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert f"--wheels {folder} holds no jax and jaxlib wheels of 0.4.34, 0.4.35" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "envs").exists() and not list((tmp_path / "out").iterdir())
