"""The ranks' sharing of a timeline or corpus (`jaxmlp.results.sweep_ranks`) with simulated ranks: no mpirun needed
(tests/test_mpi.py runs real ranks where mpirun is installed)."""

import pytest

from jaxmlp.results import sweep_ranks
from jaxmlp.results.sweep_ranks import job_key

SBATCH = {"SLURM_JOB_ID": "81", "SLURM_STEP_ID": "0"}  # what a step inside sbatch sets
OPEN_MPI = {"OMPI_MCA_ess_base_jobid": "3107", "PMIX_NAMESPACE": "prterun-host-3107@1"}


@pytest.mark.parametrize(
    ("launcher", "env", "key"),
    [
        ("Open MPI", {**SBATCH, **OPEN_MPI}, "3107"),  # mpirun inside sbatch: Open MPI's job alone
        ("Open MPI", {**SBATCH, "PMIX_NAMESPACE": "prterun-host-3107@1"}, "prterun-host-3107@1"),
        ("SLURM", {**SBATCH, **OPEN_MPI}, "81.0"),
        ("SLURM", {"SLURM_JOB_ID": "81"}, "job"),  # no step: not srun's
        (None, OPEN_MPI, "job"),
    ],
)
def test_the_job_key_is_the_detected_launchers_own(launcher, env, key):
    assert job_key(launcher, env) == key


def test_ranks_that_see_other_launchers_variables_meet_in_one_file(monkeypatch, tmp_path):
    """Under mpirun inside sbatch one rank may see Slurm's step variable and another not: both name one file."""
    names = set()
    for extra in ({}, {"SLURM_STEP_ID": "0"}):
        for name in ("SLURM_STEP_ID", "SLURM_JOB_ID", "PMIX_NAMESPACE"):
            monkeypatch.delenv(name, raising=False)
        env = {"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2", **OPEN_MPI, "SLURM_JOB_ID": "81", **extra}
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        ranks = sweep_ranks.Ranks.found()
        assert ranks is not None
        names.add(sweep_ranks.meeting_file(tmp_path, ranks).name)
    assert names == {".jaxmlp-meeting-3107"}
