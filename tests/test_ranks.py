"""The ranks' sharing of a timeline or corpus (`jaxmlp.flows.ranks`) with simulated ranks: no mpirun needed
(tests/test_mpi.py runs real ranks where mpirun is installed)."""

import pytest

from jaxmlp.flows import ranks as sweep_ranks
from jaxmlp.measure.distributed import Ranks, job_key

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
        ranks = Ranks.found()
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
    from jaxmlp.results.sweep.files import Plan, RunLog

    cells = [Runner(label, sys.executable, Measuring(("batched",))) for label in ("0.4.30", "0.4.31")]
    probed = Probed(
        {r.name: r for r in cells}, {r.name: Outcome("ok") for r in cells}, {r.name: 1.0 for r in cells}, {}
    )
    RunLog(tmp_path).start(Plan(tuple(cells), probed, {}, Matrix(processes=6, share=(0, 2)), 42.0))
    ranks = Ranks(1, 2, "node-b", "job")
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


def test_the_meeting_names_the_folder_beside_it_and_a_stale_one_is_ignored(tmp_path, monkeypatch):
    """The meeting file holds the folder's name (each rank joins it to its own path of the shared folder) and when
    the launch started: a file left by an earlier launch is not met, and rank 0 replaces it."""
    ranks = Ranks(1, 2, "node-b", "job")
    meeting = tmp_path / ".jaxmlp-meeting-job"
    sweep_ranks.announce(meeting, tmp_path / "timeline-1")
    assert '"folder": "timeline-1"' in meeting.read_text()
    elsewhere = tmp_path / "mounted" / "elsewhere"
    elsewhere.mkdir(parents=True)
    meeting.rename(elsewhere / meeting.name)
    assert sweep_ranks.meet(elsewhere / meeting.name, ranks) == elsewhere / "timeline-1"
    monkeypatch.setattr(sweep_ranks, "STARTED", sweep_ranks.STARTED + 3600)  # a launch an hour later
    monkeypatch.setattr(sweep_ranks, "MEET_SECONDS", 0.5)
    with pytest.raises(sweep_ranks.JaxmlpError, match="rank 0 did not name its folder within"):
        sweep_ranks.meet(elsewhere / meeting.name, ranks)
    sweep_ranks.announce(elsewhere / meeting.name, elsewhere / "timeline-2")  # the stale file replaced
    assert sweep_ranks.meet(elsewhere / meeting.name, ranks) == elsewhere / "timeline-2"


def test_a_rank_waiting_on_a_silent_rank_0_gives_up_in_one_line(tmp_path, monkeypatch):
    """Rank 0 killed (no stop mark): its meeting file's heartbeat stops, and a rank awaiting the next case gives
    up; while rank 0 beats, the rank waits on."""
    import threading
    import time

    monkeypatch.setattr(sweep_ranks, "SILENT_SECONDS", 0.6)
    monkeypatch.setattr(sweep_ranks, "HEARTBEAT_SECONDS", 0.05)
    ranks = Ranks(1, 2, "node-b", "job")
    meeting, case = tmp_path / ".jaxmlp-meeting-job", tmp_path / "case" / ".jaxmlp-meeting-job"
    sweep_ranks.announce(meeting, tmp_path)
    with sweep_ranks.beating(meeting):
        threading.Timer(1.5, lambda: (case.parent.mkdir(), case.write_text("{}"))).start()
        started = time.monotonic()
        assert sweep_ranks.await_case(case, [], tmp_path, ranks, sweep_ranks.Pulse(meeting, ranks))
        assert time.monotonic() - started > 1.4  # alive for longer than the silence it tolerates
    case.unlink()
    with pytest.raises(sweep_ranks.JaxmlpError, match=r"^rank 1 of 2 on node-b: rank 0 gave no sign for 1 s"):
        sweep_ranks.await_case(case, [], tmp_path, ranks, sweep_ranks.Pulse(meeting, ranks))


def test_waiting_for_rank_0s_plan_reads_its_stop_mark(tmp_path):
    """Rank 0 stopped before it filed its plan: a rank waiting for it says why at once, not after the wait."""
    sweep_ranks.mark_stopped(tmp_path, Ranks(0, 2, "node-a", "job"), "stopped by signal 2")
    with pytest.raises(sweep_ranks.JaxmlpError, match=r"^rank 0 on node-a stopped \(stopped by signal 2\)$"):
        sweep_ranks.rank_0_plan(tmp_path, Ranks(1, 2, "node-b", "job"))


def test_a_folder_removed_under_a_rank_is_one_line(tmp_path):
    ranks = Ranks(1, 2, "node-b", "job")
    gone = tmp_path / "gone"
    with pytest.raises(sweep_ranks.JaxmlpError, match=r"gone/rank-1.jsonl: No such file or directory: --out must"):
        sweep_ranks.rank_log(gone, ranks)
    with pytest.raises(sweep_ranks.JaxmlpError, match="rank-1.done: "):
        sweep_ranks.mark_done(gone, ranks)


def test_rank_0_takes_a_ranks_file_renamed_first(tmp_path):
    """A rank's samples file is renamed before it is read: a line the rank appends afterwards starts a new file
    rather than vanishing with the one taken."""
    from jaxmlp.results.sweep.files import RunLog

    log = RunLog(tmp_path)
    other = sweep_ranks.samples_file(tmp_path, 1)
    other.write_text('{"cell": "a", "round": 1}\n{"cell": "a", "ro')
    log.take(other)
    assert log.log.read_text() == '{"cell": "a", "round": 1}\n'
    assert not other.exists() and not other.with_suffix(".taken").exists()


def test_rank_0_stopped_before_its_plan_keeps_a_shared_folder(tmp_path):
    """The folder holds the other ranks' files and stop marks: kept when shared, removed when alone."""
    from jaxmlp.flows.measured import measure_into
    from jaxmlp.results.sweep.files import RunLog

    def stopped():
        raise sweep_ranks.JaxmlpError("no cell could be measured")

    for shared, kept in ((True, True), (False, False)):
        folder = tmp_path / str(shared)
        folder.mkdir()
        sweep_ranks.samples_file(folder, 1).write_text("")
        with pytest.raises(sweep_ranks.JaxmlpError):
            measure_into(RunLog(folder), [], stopped, 0.0, shared=shared)
        assert folder.exists() == kept


def test_a_silent_rank_is_named_with_its_node(tmp_path):
    sample = '{"cell": "a", "round": 1, "result": {"metadata": {"node": "node-b"}, "workloads": {}}}\n'
    sweep_ranks.samples_file(tmp_path, 1).write_text(sample)
    with pytest.raises(sweep_ranks.JaxmlpError, match=r"^rank 1 on node-b sent no sample for 0 s \(twice a process"):
        sweep_ranks._wait_done(tmp_path, 1, Ranks(0, 2, "node-a", "job"), 0.3)
