"""The nightly job's steps (bench/track/nightly.sh, which docs/ci/nightly.yml runs) for real, against a local bare
git repository standing in for the results branch: night after night, each night's new folders appended to the
branch, a second runner's beside the first's, and a night with nothing new measuring and pushing nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_track import WHEELS
from test_wheels import wheel_folder

from jaxmlp.results.schema.track import TrackDocument
from jaxmlp.results.store import layout
from jaxmlp.results.store.reading import read_document

ROOT = Path(__file__).parents[1]
SCRIPT = ROOT / "bench" / "track" / "nightly.sh"
NIGHT_SECONDS = 1500
"""The longest one night may take here (a real night makes two release environments from the wheels)."""


def night(
    tmp_path: Path, bare: Path, name: str, *args: str, machine: str = "runner-a", command: str = ""
) -> subprocess.CompletedProcess:
    """One night of ``machine``: the script run in a fresh checkout (a git repository standing in for the project's),
    its track run by this Python."""
    env = {
        **os.environ,
        "RESULTS_URL": str(bare),
        "RESULTS_FOLDER": str(tmp_path / name / "results"),
        "TRACK_COMMAND": command or f"{sys.executable} -m jaxmlp track",
        "JAXMLP_MACHINE_NAME": machine,
        "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p),
    }
    checkout = tmp_path / name  # a fresh checkout of the project each night, as a CI job has
    for step in (
        ["init", "--quiet", str(checkout)],
        ["-C", str(checkout), "commit", "--quiet", "--allow-empty", "-m", "x"],
    ):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@localhost", *step], check=True, timeout=60)
    return subprocess.run(
        ["bash", str(SCRIPT), *args],
        cwd=tmp_path / name,
        env=env,
        capture_output=True,
        text=True,
        timeout=NIGHT_SECONDS,
    )


def pushed(bare: Path) -> list[str]:
    """The track.json files on the results branch of ``bare``."""
    listed = subprocess.run(
        ["git", "--git-dir", str(bare), "ls-tree", "-r", "--name-only", "results"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return sorted(line for line in listed.stdout.splitlines() if line.endswith("/track.json"))


def commits(bare: Path) -> int:
    done = subprocess.run(
        ["git", "--git-dir", str(bare), "rev-list", "--count", "results"], capture_output=True, text=True, timeout=60
    )
    return int(done.stdout.strip() or 0)


@pytest.fixture
def bare(tmp_path: Path) -> Path:
    path = tmp_path / "results.git"
    subprocess.run(["git", "init", "--quiet", "--bare", str(path)], check=True, timeout=60)
    return path


def test_nights_append_to_the_results_branch_and_a_night_with_nothing_new_pushes_nothing(tmp_path, bare):
    wheels = wheel_folder(tmp_path / "wheels", ["0.7.0"])  # names only: starting a series makes no environment
    args = ("--wheels", str(wheels), "--pinned", "0.7.0")
    first = night(tmp_path, bare, "night-1", *args, "--message", str(tmp_path / "message.md"))
    assert first.returncode == 0, first.stderr
    assert "no branch results" in first.stderr and "pushed 1 new folder(s) to results" in first.stderr
    assert "Started the series of runner-a: " in first.stdout
    (folder,) = pushed(bare)
    assert folder.startswith("track-") and "-runner-a-" in folder
    other = night(tmp_path, bare, "night-1-b", *args, machine="runner-b")  # a second runner, its own series
    assert (
        other.returncode == 0 and "fetched results" in other.stderr and "Started the series of runner-b" in other.stdout
    )
    assert len(pushed(bare)) == 2 and commits(bare) == 2
    second = night(tmp_path, bare, "night-2", *args)
    assert second.returncode == 0, second.stderr
    assert second.stdout.startswith("Nothing new to track") and "nothing new to push" in second.stderr
    assert len(pushed(bare)) == 2 and commits(bare) == 2


def test_a_runner_that_pushes_while_another_tracks_is_rebased_onto_never_overwritten(tmp_path, bare):
    """Runner B's whole night runs inside runner A's track step (after A fetched the branch, before it pushes): A's
    push finds the branch moved, rebases onto it and pushes; both folders are on the branch."""
    wheels = wheel_folder(tmp_path / "wheels", ["0.7.0"])
    args = ("--wheels", str(wheels), "--pinned", "0.7.0")
    assert night(tmp_path, bare, "night-0", *args).returncode == 0  # the branch exists
    checkout = tmp_path / "b"
    subprocess.run(["git", "init", "--quiet", str(checkout)], check=True, timeout=60)
    subprocess.run(
        [
            "git",
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@localhost",
            "-C",
            str(checkout),
            "commit",
            "-qm",
            "x",
            "--allow-empty",
        ],
        check=True,
        timeout=60,
    )
    meanwhile = tmp_path / "meanwhile.sh"
    meanwhile.write_text(
        "#!/bin/bash\n"
        f"(cd {checkout} && RESULTS_FOLDER={checkout / 'results'} JAXMLP_MACHINE_NAME=runner-b "
        f"TRACK_COMMAND='{sys.executable} -m jaxmlp track' "
        f"bash {SCRIPT} {' '.join(args)}) || exit 9\n"
        f'exec {sys.executable} -m jaxmlp track "$@"\n'
    )
    a = night(tmp_path, bare, "night-1", *args, machine="runner-a-2", command=f"bash {meanwhile}")
    assert a.returncode == 0, a.stderr
    assert "results moved (another runner pushed): rebasing onto it" in a.stderr
    folders = pushed(bare)
    assert len(folders) == 3 and sum("-runner-b-" in f for f in folders) == 1 and commits(bare) == 3


@pytest.mark.xdist_group("processes")
def test_the_second_night_measures_only_the_new_release(tmp_path, bare):
    """The real stream of releases from a folder of wheels (``JAXMLP_TEST_WHEELS``), night after night: the first
    night's folder holds 0.7.0 only (the series starts there); the next night's is the given folder (0.7.1 beside
    0.7.0), each newer release measured side by side with 0.7.0 by real processes in real environments and pushed;
    the night after, nothing new. `jaxmlp track`'s one real stream: what it files is checked here too."""
    given = os.environ.get(WHEELS)
    if not given or not Path(given).is_dir():
        pytest.skip(f"set {WHEELS} to a folder of jax and jaxlib 0.7.0 and 0.7.1 wheels (pip download) to run it")
    first = tmp_path / "first"
    first.mkdir()
    for wheel in Path(given).glob("*-0.7.0-*.whl"):
        (first / wheel.name).symlink_to(wheel.resolve())
    workload = ROOT / "tests" / "workloads" / "while_loop.py"
    args = ["--pinned", "0.7.0", "--workload", f"{workload}:make", "--processes", "2", "--budget", "0.1"]
    args += ["--dataset", "synthetic", "--limit", "512", "--epochs", "2", "--calls", "3"]
    one = night(tmp_path, bare, "night-1", *args, "--wheels", str(first))
    assert one.returncode == 0, one.stderr
    assert "at jax 0.7.0 (--pinned)" in one.stdout  # the series starts there, no environment made
    two = night(tmp_path, bare, "night-2", *args, "--wheels", given)
    assert two.returncode in (0, 3), two.stderr
    assert "New in the wheels in " in two.stdout and "measuring 0.7.0, 0.7.1" in two.stdout
    assert "pushed 1 new folder(s) to results" in two.stderr and len(pushed(bare)) == 2
    # What the measuring night filed (tests/test_track.py's stream is this one): 0.7.1 tracked, measured side by
    # side with 0.7.0, its cells kept, the verdicts last.
    (_, second) = sorted((tmp_path / "night-2" / "results").glob("track-*"))
    doc = read_document(second / layout.TRACK_FILE)
    assert isinstance(doc, TrackDocument) and doc.tracked[0] == "0.7.1" and doc.measured[:2] == ("0.7.0", "0.7.1")
    assert {c.verdict for c in doc.comparisons} <= {"slower", "faster", "the same", "inconclusive"}
    assert {"jax-0.7.0.json", "jax-0.7.1.json"} <= {p.name for p in second.glob("jax-*.json")}
    assert two.stdout.strip().splitlines()[-1].startswith("jax 0.7.")  # the last lines: the verdicts
    three = night(tmp_path, bare, "night-3", *args, "--wheels", given)
    assert three.returncode == 0 and three.stdout.startswith("Nothing new to track")
