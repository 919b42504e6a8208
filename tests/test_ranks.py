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


def test_ranks_1_on_measure_rank_0s_plan_without_probing(tmp_path, monkeypatch):
    """Rank 1 of 2 reads rank 0's filed plan (its cells, its probe's findings, its time limit), probes nothing, runs
    its own rounds of each cell under rank 0's limit, and records a failure for each round of a planned cell it has
    no environment for."""
    import sys
    from dataclasses import replace

    from jaxmlp.measure.records import ProcessResult, WorkloadTimes
    from jaxmlp.measure.sweep import matrix as sweep_matrix
    from jaxmlp.measure.sweep.matrix import Failure, Outcome, Probed, Runner, follow
    from jaxmlp.measure.sweep.settings import Matrix, Measuring
    from jaxmlp.results.sweep_files import Plan, RunLog

    cells = [Runner(label, sys.executable, Measuring(("batched",))) for label in ("0.4.30", "0.4.31")]
    probed = Probed(
        {r.name: r for r in cells}, {r.name: Outcome("ok") for r in cells}, {r.name: 1.0 for r in cells}, {}
    )
    RunLog(tmp_path).start(Plan(tuple(cells), probed, {}, Matrix(processes=6, share=(0, 2)), 42.0))
    ranks = sweep_ranks.Ranks(1, 2, "node-b", "job")
    plan = sweep_ranks.rank_0_plan(tmp_path, ranks)
    assert (plan.matrix.processes, plan.limit, list(plan.probed.runners)) == (6, 42.0, [r.name for r in cells])

    def no_probe(*args, **kwargs):
        raise AssertionError("rank 1 probed")

    limits = []

    def run_worker(runner, pythonpath=None, timeout=None):
        limits.append(timeout)
        return ProcessResult({"jax": runner.label}, {"batched": WorkloadTimes.of(0.1, [2.0, 1.0])})

    monkeypatch.setattr(sweep_matrix, "probe", no_probe)
    monkeypatch.setattr(sweep_matrix, "run_worker", run_worker)
    recorded = []
    mine = replace(Matrix(processes=2, share=(1, 2)), processes=plan.matrix.processes)  # its own asked 2
    here = [cells[0]]  # 0.4.31's environment missing on this node
    measured = follow(here, plan.probed, plan.differs, mine, plan.limit, record=lambda *a: recorded.append(a))
    assert limits == [42.0] * 3 and len(measured.processes[cells[0].name]) == 3  # rounds 1, 3, 5
    lacking = [s for *_, s in recorded if isinstance(s, Failure)]
    assert [(f.cell, f.round) for f in lacking] == [(cells[1].name, r) for r in (1, 3, 5)]
    assert set(measured.failures) == set(lacking)
