"""`nox -s bench-tpu` on a host whose package index lacks some of jaxmlp's requirements: pip itself looks into a
real local index (a PEP 503 folder, ``PIP_INDEX_URL=file://...``), the rest is installed, and one line names what is
missing and what is skipped for it."""

import os
import sys
import zipfile
from pathlib import Path

import pytest

from jaxmlp import installs

ROOT = Path(__file__).parents[1]


def wheel(folder: Path, name: str, version: str) -> None:
    """A minimal pure-Python wheel of ``name`` in the index folder's project page, as a PEP 503 index serves it."""
    project = folder / name
    project.mkdir(parents=True)
    file = f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
    info = f"{name.replace('-', '_')}-{version}.dist-info"
    with zipfile.ZipFile(project / file, "w") as z:
        z.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        z.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr(f"{info}/RECORD", "")
    (project / "index.html").write_text(f'<html><body><a href="{file}">{file}</a></body></html>\n')


@pytest.fixture
def index(tmp_path, monkeypatch):
    """A host's index holding one of two packages the host may lack; pip reads it as the session would."""
    folder = tmp_path / "simple"
    wheel(folder, "jaxmlp-probe-present", "1.2")
    (folder / "index.html").write_text('<html><body><a href="jaxmlp-probe-present/">x</a></body></html>\n')
    monkeypatch.setenv("PIP_INDEX_URL", f"file://{folder}")
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.delenv("PIP_FIND_LINKS", raising=False)
    monkeypatch.setenv("PIP_NO_CACHE_DIR", "1")
    return folder


MAY_LACK = {
    "jaxmlp-probe-present": ("jaxmlp_probe_present", "nothing"),
    "jaxmlp-probe-absent": ("jaxmlp_probe_absent", "the probe pipeline"),
    "numpy": ("numpy", "everything"),
}


def test_what_the_index_lacks_is_named_in_one_line_with_what_is_skipped(index):
    wanted = ["jax>=0.4.30", "jaxmlp-probe-present>=1.0", "jaxmlp_probe.absent>=0.16", "numpy>=1.26"]
    # numpy is installed (not looked for); the present probe is in the index; the absent one is neither
    assert installs.lacking(sys.executable, wanted, may_lack=MAY_LACK) == ["jaxmlp-probe-absent"]
    # installing nothing (--preinstalled): what this Python cannot import
    assert installs.lacking(sys.executable, wanted, may_lack=MAY_LACK, look=False) == [
        "jaxmlp-probe-present",
        "jaxmlp-probe-absent",
    ]
    line = installs.missing_line("bench-tpu", ["jaxmlp-probe-absent"], MAY_LACK)
    assert line == (
        "bench-tpu: this host's package index has no jaxmlp-probe-absent: the rest is installed; skipped without "
        "them: jaxmlp-probe-absent: the probe pipeline"
    )
    assert installs.offered(sys.executable, "jaxmlp-probe-present==1.2")
    assert not installs.offered(sys.executable, "jaxmlp-probe-present>=2")  # a version it does not have


def test_the_tpu_hosts_missing_packages_are_those_jaxmlp_requires_and_each_says_what_is_skipped():
    """Each package a TPU host's index may lack is a requirement of jaxmlp (with the hf extra), and the line names
    what runs without it: torchvision nothing (the IDX reader), ruptures the change points, grain its pipeline."""
    wanted = {installs.name_of(r) for r in installs.requirements(ROOT / "pyproject.toml", (installs.TUTORIAL, "hf"))}
    assert set(installs.MAY_LACK) <= wanted and "jax" in wanted
    line = installs.missing_line("bench-tpu", ["torchvision", "ruptures", "grain"])
    assert line.startswith("bench-tpu: this host's package index has no torchvision, ruptures, grain: ")
    assert "torchvision: nothing (jaxmlp's IDX reader" in line and "grain: the grain pipeline" in line
    assert "ruptures: the change points across runs" in line and "\n" not in line
    assert installs.name_of("jax[tpu]") == "jax" and installs.name_of("tensorboard_plugin.profile>=2") == (
        "tensorboard-plugin-profile"
    )


def test_without_ruptures_the_history_says_no_change_was_searched_for(monkeypatch):
    """The change points across runs need ruptures: without it the answer says so, and nothing fails."""
    from jaxmlp import changepoints
    from jaxmlp.results import history
    from jaxmlp.results.findings.others import changes_across_runs
    from jaxmlp.results.store.frames import load
    from jaxmlp.results.store.writing import ResultsStore

    monkeypatch.setattr(changepoints, "unavailable", lambda: changepoints.MISSING)
    found = changes_across_runs(history.of(load(ResultsStore(ROOT / "tests" / "fixtures" / "history"))))
    assert found and all(f.answer.startswith("No change searched for over ") for f in found)
    assert found[0].answer.endswith(f": {changepoints.MISSING}.") and not found[0].tables


def test_a_gpu_session_without_an_index_is_told_what_to_run_in_one_line(tmp_path):
    """`nox -s bench-gpu` installs from an index; a GPU machine without one is told, in one line, to run the
    session on its installed JAX (`--no-venv ... --preinstalled`) or bench/accelerator/run.sh, not pip's retries."""
    assert installs.index_url({"PIP_NO_INDEX": "1"}) is None
    assert installs.index_url({"PIP_INDEX_URL": "file:///opt/x"}) == "file:///opt/x"
    assert installs.index_url({}) == installs.DEFAULT_INDEX
    assert not installs.index_answers(None) and not installs.index_answers(f"file://{tmp_path}/none")
    assert installs.index_answers(f"file://{tmp_path}")
    assert not installs.index_answers("http://127.0.0.1:9/simple/", seconds=2)  # nothing listens on port 9
    line = installs.no_index_line("bench-gpu", "http://127.0.0.1:9/simple/")
    assert "\n" not in line and "none answers at http://127.0.0.1:9/simple/" in line
    assert "`nox --no-venv -s bench-gpu -- --preinstalled`" in line and "bench/accelerator/run.sh" in line


def test_the_light_install_has_no_torch_and_the_tutorial_extra_has_what_only_the_tutorial_needs():
    """`pip install jaxmlp` installs what `track`, the sweeps and the reports need: none of the tutorial's packages
    (torch and its CUDA libraries are gigabytes); the tutorial extra has each of them, and the sessions that measure
    the tutorial install it."""
    light = {installs.name_of(r) for r in installs.requirements(ROOT / "pyproject.toml")}
    tutorial = {installs.name_of(r) for r in installs.requirements(ROOT / "pyproject.toml", (installs.TUTORIAL,))}
    assert {"jax", "jaxlib", "numpy", "scipy", "pandas", "matplotlib"} <= light
    assert not light & {"torch", "torchvision", "grain", "pytest-benchmark", "tensorboard", "datasets"}
    assert {"torch", "torchvision", "grain", "pytest-benchmark", "tensorboard-plugin-profile"} <= tutorial - light
    noxfile = (ROOT / "noxfile.py").read_text()
    assert 'f".[{installs.TUTORIAL},test]"' in noxfile and '(installs.TUTORIAL, "hf")' in noxfile


@pytest.mark.parametrize("module", ["torch", "torchvision.datasets", "grain.python", "xprof.convert"])
def test_a_command_that_needs_a_tutorial_package_where_it_is_missing_says_so_in_one_line(module, monkeypatch, capsys):
    """Where only the light install is, a command that imports torch (or another tutorial package) ends in one line
    naming the package and the install line, exit 2 (the machine lacks something), no traceback."""
    from jaxmlp import cli
    from jaxmlp.errors import EXIT_ERROR

    def lacking(name):
        raise ModuleNotFoundError(f"No module named {module!r}", name=module)

    monkeypatch.setattr(cli, "_command", lacking)
    assert cli.main(["train"]) == EXIT_ERROR
    err = capsys.readouterr().err
    root = module.split(".")[0]
    assert err == (
        f"jaxmlp train: error: this needs {root}, which the light install leaves out: pip install 'jaxmlp[tutorial]'\n"
    )


def test_a_missing_module_that_is_not_the_tutorials_is_not_hidden(monkeypatch):
    """A module the light install should have (or a bug's import) is raised as it is, not said to be the extra's."""
    from jaxmlp import cli

    def lacking(name):
        raise ModuleNotFoundError("No module named 'pandas'", name="pandas")

    monkeypatch.setattr(cli, "_command", lacking)
    with pytest.raises(ModuleNotFoundError):
        cli.main(["summary"])
