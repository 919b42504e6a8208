"""`jaxmlp train` on the command line: its output, its JSON, and one-line errors for bad input."""

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write_idx_folder

from jaxmlp.cli import build_parser, every_parser, main, options
from jaxmlp.errors import EXIT_DIVERGED, EXIT_ERROR, JaxmlpError


def run_cli(*args, timeout=240):
    """``python -m jaxmlp ARGS`` in a fresh process, as a user runs it."""
    env = {**os.environ, "PYTHONWARNINGS": "default"}
    return subprocess.run(
        [sys.executable, "-m", "jaxmlp", *args], capture_output=True, text=True, timeout=timeout, env=env
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--epochs", "0"], "--epochs must be at least 1, got 0"),
        (["--epochs=-3"], "--epochs must be at least 1, got -3"),
        (["--batch-size", "0"], "--batch-size must be at least 1, got 0"),
        (["--step-size", "0"], "--step-size must be a positive finite number, got 0.0"),
        (["--step-size=-0.1"], "--step-size must be a positive finite number, got -0.1"),
        (["--step-size", "nan"], "--step-size must be a positive finite number, got nan"),
        (["--workers", "-1"], "--workers must be at least 0 (0: load in the main process), got -1"),
        (["--limit", "0"], "--limit must be at least 1 (training images), got 0"),
        (
            ["--pipeline", "scan", "--workers", "2"],
            "--workers 2: the scan pipeline has no loader workers; use "
            "--workers 0, or a pipeline with them (seed, seed_batched, grain)",
        ),
        (
            ["--pipeline", "torch", "--workers", "1"],
            "--workers 1: the torch pipeline has no loader workers; use "
            "--workers 0, or a pipeline with them (seed, seed_batched, grain)",
        ),
    ],
)
def test_impossible_settings(capsys, argv, message):
    assert main(["train", *argv]) == EXIT_ERROR
    err = capsys.readouterr().err
    assert err == f"jaxmlp train: error: {message}\n"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--backend", "npu"], "argument --backend: invalid choice: 'npu'"),
        (["--epochs", "two"], "argument --epochs: expected a whole number, got 'two'"),
        (["--dataset", "cifar"], "argument --dataset: invalid choice: 'cifar'"),
    ],
)
def test_unknown_choices_and_malformed_numbers(capsys, argv, message):
    with pytest.raises(SystemExit) as exit_:
        main(["train", *argv])
    assert exit_.value.code == EXIT_ERROR
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "see jaxmlp train --help" in err


@pytest.mark.parametrize("backend", ["gpu", "tpu"])
def test_accelerator_asked_for_and_absent(capsys, backend):
    from jaxmlp.measure.environment import select_device

    try:
        select_device(backend)
        pytest.skip(f"a {backend} is visible here: the refusal cannot be shown")
    except Exception:
        pass
    assert main(["train", "--dataset", "synthetic", "--backend", backend]) == EXIT_ERROR
    err = capsys.readouterr().err
    assert err.startswith(f"jaxmlp train: error: --backend {backend} was asked for, but JAX sees no {backend.upper()}")
    assert "--backend cpu" in err and err.count("\n") == 1


@pytest.mark.parametrize("backend", ["gpu", "tpu"])
def test_roofline_asks_for_its_backend_like_the_other_commands(capsys, tmp_path, backend):
    """`jaxmlp roofline --backend` selects its device as `train` does (`select_device`): an absent accelerator is one
    line, before any ceiling is measured or any file written."""
    from jaxmlp.measure.environment import select_device

    try:
        select_device(backend)
        pytest.skip(f"a {backend} is visible here: the refusal cannot be shown")
    except Exception:
        pass
    assert main(["roofline", "--backend", backend, "--out", str(tmp_path)]) == EXIT_ERROR
    err = capsys.readouterr().err
    assert err.startswith(
        f"jaxmlp roofline: error: --backend {backend} was asked for, but JAX sees no {backend.upper()}"
    )
    assert err.count("\n") == 1 and not list(tmp_path.iterdir())


def test_the_roofline_workloads_run_on_the_backend_asked_for():
    """What roofline hands its workloads (`Measuring.backend`): they are measured on that backend's device."""
    from jaxmlp.measure.sweep.settings import Measuring
    from jaxmlp.measure.sweep.worker import measure_process

    measuring = Measuring(("step",), "synthetic", None, 512, 2, 2, backend="cpu")
    done = measure_process(measuring)
    assert done.metadata["backend"] == "cpu" and set(done.workloads) == {"step"}
    assert Measuring.from_json(measuring.to_json()) == measuring
    with pytest.raises(JaxmlpError, match="unknown --backend 'npu'"):
        Measuring(backend="npu")


def test_batch_larger_than_the_data(capsys, tmp_path):
    assert main(["train", "--dataset", "synthetic", "--batch-size", "60001"]) == EXIT_ERROR
    assert "--batch-size 60001 is larger than the training set (60000 images)" in capsys.readouterr().err
    tta = ["tta", "--dataset", "synthetic", "--runs", "1", "--max-epochs", "1", "--out", str(tmp_path)]
    assert main([*tta, "--limit", "2048", "--batch-size", "4096"]) == EXIT_ERROR
    assert capsys.readouterr().err == (
        "jaxmlp tta: error: --batch-size 4096 is larger than the training set (2048 images): choose at most 2048\n"
    )
    assert main([*tta, "--limit", "100"]) == EXIT_ERROR  # the default batch, 128
    assert "--batch-size 128 is larger than the training set (100 images)" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_missing_data_offline(capsys, tmp_path, monkeypatch):
    monkeypatch.delenv("JAXMLP_DATA_DIR", raising=False)
    monkeypatch.setenv("JAXMLP_CACHE_DIR", str(tmp_path / "empty-cache"))
    assert main(["train"]) == EXIT_ERROR
    err = capsys.readouterr().err
    assert "empty-cache does not exist: pass --data-dir DIR (or set JAXMLP_DATA_DIR)" in err
    assert "--download" in err and "--dataset synthetic" in err and err.count("\n") == 1


def test_corrupt_data(capsys, tmp_path):
    source = write_idx_folder(tmp_path / "src", gz=False)
    (source / "train-images-idx3-ubyte").write_bytes((source / "train-images-idx3-ubyte").read_bytes()[:5000])
    assert main(["train", "--data-dir", str(source)]) == EXIT_ERROR
    err = capsys.readouterr().err
    assert f"{source / 'train-images-idx3-ubyte'}: truncated (5000 bytes" in err and err.count("\n") == 1


def test_json_is_never_overwritten(capsys, tmp_path):
    existing = tmp_path / "run.json"
    existing.write_text("{}")
    assert main(["train", "--dataset", "synthetic", "--json", str(existing)]) == EXIT_ERROR
    assert "already exists and results are never overwritten" in capsys.readouterr().err
    assert existing.read_text() == "{}"
    assert main(["train", "--dataset", "synthetic", "--json", str(tmp_path / "no" / "run.json")]) == EXIT_ERROR
    assert "folder" in capsys.readouterr().err


def test_json_into_a_folder_takes_the_stores_name_and_the_matmul_precision(tmp_path, monkeypatch):
    monkeypatch.setenv("JAX_DEFAULT_MATMUL_PRECISION", "bfloat16")  # read when jax is imported: in a process
    argv = ["train", "--dataset", "synthetic", "--limit", "1024", "--epochs", "1", "--pipeline", "scan"]  # no torch
    result = run_cli(*argv, "--json", str(tmp_path))
    assert result.returncode == 0, result.stderr
    (written,) = tmp_path.iterdir()
    assert written.name.startswith("train-") and written.name.endswith("-synthetic-scan.json")
    (record,) = json.loads(written.read_text())["records"]
    assert record["jax_default_matmul_precision"] == "bfloat16"


def test_json_to_a_path_ending_in_a_slash_is_a_folder_made_if_missing(capsys, tmp_path):
    folder = tmp_path / "new" / "runs"
    assert main(["train", "--dataset", "synthetic", "--limit", "1024", "--epochs", "1", "--json", f"{folder}/"]) == 0
    (written,) = folder.iterdir()
    assert written.name.startswith("train-") and written.suffix == ".json"
    assert capsys.readouterr().out.splitlines()[-1] == f"Wrote 1 epoch record to {written}"


def test_diverging_run_is_reported_not_scored(capsys, tmp_path):
    out = tmp_path / "diverged.json"
    argv = ["train", "--dataset", "synthetic", "--limit", "1024", "--step-size", "1e4"]  # 8 steps: epoch 0 diverges
    code = main([*argv, "--epochs", "2", "--json", str(out)])
    assert code == EXIT_DIVERGED
    stdout = capsys.readouterr().out
    assert "Diverged: the training loss is not finite after epoch 0" in stdout
    assert "Summary: DIVERGED" in stdout and "Training set accuracy" not in stdout
    records = json.loads(out.read_text())["records"]
    assert records[-1]["diverged"] is True and records[-1]["train_accuracy"] is None


def test_one_epoch_on_synthetic_data_end_to_end_its_workers_spawned_without_the_fork_warning(tmp_path):
    """The tutorial's DataLoader in a real process, its 2 workers spawned (Python's fork warning never shown), on
    the first 4096 images (the workers' start is what the process adds; learning is tests/test_train.py's)."""
    out = tmp_path / "run.json"
    argv = ["train", "--dataset", "synthetic", "--limit", "4096", "--epochs", "1", "--workers", "2"]
    result = run_cli(*argv, "--json", str(out))
    assert result.returncode == 0, result.stderr
    assert "os.fork() was called" not in result.stderr, result.stderr
    lines = result.stdout.splitlines()
    assert "synthetic (generated, first 4096 training images; SYNTHETIC data, not MNIST)" in lines[0]
    assert lines[2].startswith("Epoch 0 in ") and lines[2].endswith(" sec")
    assert lines[3].startswith("Training set accuracy 0.") and lines[4].startswith("Test set accuracy 0.")
    assert "[SYNTHETIC data, not MNIST]" in lines[5]
    assert "; 1 epoch, batch 128" in lines[0] and ", 2 workers," in lines[0]  # one epoch in the singular
    assert sum("compile" in line.lower() for line in lines) == 1  # the compile time said once, at the start
    assert " after 1 epoch;" in lines[5] and lines[6] == f"Wrote 1 epoch record to {out}"
    assert "Traceback" not in result.stderr and "\r" not in result.stderr  # no progress bar in logs
    (record,) = json.loads(out.read_text())["records"]
    assert record["dataset"] == "synthetic" and record["epoch"] == 0
    assert record["train_accuracy"] > 0.3  # 0.37 on these 4096 images: chance is 0.1
    for key in ("epoch_seconds", "compile_seconds", "jax", "jaxlib", "torch", "backend", "device_kind", "commit"):
        assert key in record
    assert sorted(os.listdir(tmp_path)) == ["run.json"]  # no temporary file left


def test_one_epoch_of_the_torch_pipeline_prints_the_same_lines(capsys):
    """The PyTorch rung trains like the others (in this process: torch and JAX are already imported)."""
    argv = ["train", "--pipeline", "torch", "--dataset", "synthetic", "--limit", "2048", "--epochs", "2"]
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "pipeline torch; 2 epochs, batch 128" in lines[0]
    assert lines[1] == "Compiled in 0 s (before epoch 0, not in any epoch time)"  # eager: nothing to compile
    assert [line.split(" in ")[0] for line in lines[2:8:3]] == ["Epoch 0", "Epoch 1"]
    assert lines[3].startswith("Training set accuracy 0.") and lines[4].startswith("Test set accuracy 0.")
    assert lines[-1].startswith("Summary: train accuracy ") and lines[-1].endswith("[SYNTHETIC data, not MNIST]")


def test_errors_have_no_traceback_in_a_real_process(tmp_path):
    result = run_cli("train", "--data-dir", str(tmp_path / "nowhere"))
    assert result.returncode == EXIT_ERROR
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert result.stdout == ""


def test_what_a_failed_child_process_said_last():
    from jaxmlp.errors import last_error_line

    told = "warming up\njaxmlp sweep: error: no MNIST IDX files in /x: use --dataset synthetic\nbye\n"
    assert last_error_line(told) == "no MNIST IDX files in /x: use --dataset synthetic"
    assert last_error_line("Traceback ...\nRuntimeError: boom\n") == "RuntimeError: boom"
    assert last_error_line("\n  \n") is None


def test_every_shared_option_is_declared_once_and_added_alike_everywhere():
    """Every command's parser built: every option goes through `options.add` (argparse's --help, --version and
    subcommands aside); a flag that a shared option declares comes from `jaxmlp.cli.options` wherever
    it appears, with that option's type, choices and action, its help unless the command rewords it, and its default
    unless the command says why not."""
    shared_flags = {flag for option in options.SHARED for flag in option.flags}
    used = set()
    for path, parser in every_parser(build_parser()):
        for action in parser._actions:
            option = getattr(action, "jaxmlp_option", None)
            if option is None:  # argparse's own: --help, --version, the subcommands
                assert isinstance(action, (argparse._HelpAction, argparse._VersionAction, argparse._SubParsersAction))
                continue
            if not option.shared:  # a command's own (`options.own`)
                assert not shared_flags & set(action.option_strings), f"{' '.join(path)} declares {action.dest} anew"
                continue
            base = option.base or option
            assert base in options.SHARED, f"{' '.join(path)}: {option.flags} is not in options.SHARED"
            used.add(base)
            assert (option.type, option.choices, option.action) == (base.type, base.choices, base.action)
            assert action.default == base.default or (option.why and action.default == option.default), path
            assert action.help == option.help and action.type == base.type
    assert used == set(options.SHARED)  # no shared option declared and never used


def test_the_noxfile_parses_its_switches_with_the_cli_options():
    noxfile = (Path(__file__).parents[1] / "noxfile.py").read_text()
    assert "options.bench_session()" in noxfile and "add_argument" not in noxfile
    switches, rest = options.bench_session().parse_known_args(["--full", "-k", "epoch"])
    assert switches.full and not switches.profile and not switches.upgrade and rest == ["-k", "epoch"]
    assert options.bench_session().parse_known_args(["--upgrade"])[0].upgrade


def test_every_nox_session_that_measures_with_jax_says_which_and_takes_upgrade():
    """nox reuses a session's environment (``reuse_venv``): each session that installs jax and runs it says the jax
    and jaxlib it measures, and ``-- --upgrade`` installs the newest again (`_jax`)."""
    import ast

    noxfile = (Path(__file__).parents[1] / "noxfile.py").read_text()
    functions = {
        f.name: ast.get_source_segment(noxfile, f) or ""
        for f in ast.parse(noxfile).body
        if isinstance(f, ast.FunctionDef)
    }
    measuring = (
        "train",
        "tests",
        "report",
        "_bench",
        "bench_scaling",
        "profile",
        "tensorboard",
        "bench_jaxlib",
        "corpus",
    )
    assert [name for name in measuring if "_jax(session" not in functions[name]] == []
    assert "session.posargs" not in "".join(functions[name] for name in measuring if name != "_bench")


def test_help_lists_the_public_commands_only(capsys):
    """Internal entries (the worker processes' modules) never show: ``jaxmlp --help`` and ``jaxmlp sweep --help``
    list the commands a user runs, and nothing named worker."""
    from jaxmlp.cli import COMMANDS
    from jaxmlp.cli.sweep import SUBCOMMANDS

    for argv, listed in ((["--help"], COMMANDS), (["sweep", "--help"], SUBCOMMANDS)):
        with pytest.raises(SystemExit):
            main(argv)
        shown = capsys.readouterr().out
        assert "worker" not in shown.lower()
        commands = shown.split("positional arguments:")[1].split("options:")[0]
        assert [
            line.split()[0]
            for line in commands.splitlines()[2:]
            if line.startswith("    ") and not line.startswith("     ")
        ] == list(listed)
    with pytest.raises(SystemExit, match=str(EXIT_ERROR)):
        main(["worker"])
    assert "invalid choice: 'worker'" in capsys.readouterr().err


def test_version_names_jaxmlp_and_jax(capsys):
    from importlib import metadata

    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    said = capsys.readouterr().out
    assert said.startswith(f"jaxmlp {metadata.version('jaxmlp')} (jax {metadata.version('jax')}, jaxlib ")
    assert said.count("\n") == 1


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["tta", "--runs", "1", "stray"], "jaxmlp tta: error: unrecognized arguments: stray"),
        (["sweep", "run", "0.6.2", "--bogus"], "jaxmlp sweep run: error: unrecognized arguments: --bogus"),
        (["sweep", "0.6.2", "--bogus"], "jaxmlp sweep run: error: unrecognized arguments: --bogus"),  # run: implied
        (["sweep", "env", "--processes", "2"], "jaxmlp sweep env: error: unrecognized arguments: --processes"),
        (["--bogus", "train"], "jaxmlp: error: unrecognized arguments: --bogus"),  # before any command
    ],
)
def test_an_argument_error_names_the_subcommand_that_refused_it(capsys, argv, said):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == EXIT_ERROR
    err = capsys.readouterr().err
    assert err.startswith(said) and err.count("\n") == 1, err


def test_a_settings_error_names_the_subcommand(capsys, tmp_path):
    assert main(["sweep", "validate", str(tmp_path), "--histories", "0", "--out", str(tmp_path)]) == EXIT_ERROR
    assert capsys.readouterr().err == "jaxmlp sweep validate: error: --histories must be at least 1, got 0\n"


def test_every_command_and_subcommand_says_what_it_does():
    for path, parser in every_parser(build_parser()):
        assert parser.description and parser.description.endswith("."), " ".join(path)
        for action in parser._actions:
            assert action.help or isinstance(action, argparse._SubParsersAction), (path, action.dest)


@pytest.mark.parametrize(
    ("command", "flag", "says", "not_said"),
    [
        (["scaling"], "--calls", "sharded step", "your workloads"),
        (["scaling"], "--epochs", "sharded epochs", "built-in epoch workload"),
        (["sweep", "explain"], "--xla-flags", "both releases", "column of the matrix"),
        (["sweep", "explain"], "--workload", "the workload to explain", "repeatable"),
        (["sweep", "trials"], "--workload", "the workload to compare", "repeatable"),
    ],
)
def test_a_shared_option_says_what_it_does_in_that_command(command, flag, says, not_said):
    parsers = dict(every_parser(build_parser()))
    (action,) = [a for a in parsers[("jaxmlp", *command)]._actions if flag in a.option_strings]
    assert says in action.help and not_said not in action.help


def test_counts_say_one_in_the_singular():
    from jaxmlp.units import count

    assert [count(1, "epoch"), count(2, "epoch"), count(1.5, "epoch"), count(0, "worker")] == [
        "1 epoch",
        "2 epochs",
        "1.5 epochs",
        "0 workers",
    ]
    assert count(1, "process", "processes") == "1 process" and count(3, "process", "processes") == "3 processes"


def test_profile_says_its_times_in_human_units(capsys, tmp_path):
    argv = ["profile", "--dataset", "synthetic", "--limit", "1024", "--pipeline", "batched", "--steps", "1"]
    assert main([*argv, "--logdir", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith("Traced 1 step in ")
    (median,) = [line for line in lines if line.startswith("Median step ")]
    unit = r"[\d.]+ (µs|ms|s|min)"
    op = r"[\w.\-]+ \([\w\-:]+\)"  # its short name and category, never a whole HLO instruction
    assert re.fullmatch(rf"Median step {unit} \(load {unit}, compute {unit}\); top op: {op}", median), median
    argv = ["profile", "--dataset", "synthetic", "--limit", "1024", "--pipeline", "scan", "--steps", "1"]
    assert main([*argv, "--logdir", str(tmp_path)]) == 0  # one program an epoch: no load step to time
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith("Traced 1 epoch (one scan each) in ")
    (median,) = [line for line in lines if line.startswith("Median ")]
    assert re.fullmatch(rf"Median epoch {unit} \(one program, no batch loads\); top op: {op}", median), median


LISTS = [
    (["tta"], "--pipeline", ["scan", "torch"], ["batched"]),
    (["tta"], "--precision", ["f32"], ["bf16"]),
    (["scaling"], "--devices", ["1", "2"], ["4"]),
    (["scaling"], "--processes", ["1"], ["2"]),
    (["sweep", "timeline", "0.4.30", "0.5.0"], "--versions", ["0.4.30", "0.4.31"], ["0.5.0"]),
    (["sweep", "bisect", "0.4.30", "0.5.0"], "--versions", ["0.4.31"], ["0.4.33"]),
    (["sweep", "validate"], "--detectors", ["pelt", "binseg"], ["edivisive"]),
    (["sweep", "run", "0.6.2"], "--workload", ["scan", "step"], ["batched"]),
    (["sweep", "run"], "--env", ["A=python", "B=python"], ["C=python"]),
    (["roofline"], "--workload", ["scan"], ["step"]),
]


@pytest.mark.parametrize(("command", "flag", "first", "then"), LISTS)
def test_a_list_is_space_separated_and_the_option_repeatable(command, flag, first, then):
    args = build_parser([command[0]]).parse_args([*command, flag, *first, flag, *then])
    got = getattr(args, flag.lstrip("-").replace("-", "_"))
    assert [str(x) for x in got] == [*first, *then]


def test_every_option_of_several_values_takes_them_one_way():
    """Space-separated and repeatable (`options.LIST`), in every command; --xla-flags alone is repeatable only (its
    values start with a dash)."""
    for path, parser in every_parser(build_parser()):
        for action in parser._actions:
            if not action.option_strings or action.nargs in (None, 0, "?"):
                continue
            assert (action.nargs, type(action)) == ("+", argparse._ExtendAction), (path, action.option_strings)
            assert action.default is None, (path, action.option_strings)  # argparse would extend a default list
    (xla,) = [
        a
        for a in dict(every_parser(build_parser()))[("jaxmlp", "sweep", "run")]._actions
        if a.option_strings == ["--xla-flags"]
    ]
    assert isinstance(xla, argparse._AppendAction)


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["sweep", "bisect", "0.6.2", "0.8.3", "--versions", "0.7.0,0.7.1"], "give the releases space-separated"),
        (["sweep", "run", "--workload", "scan", "0.6.2"], "--workload 0.6.2: a release, not a workload"),
        (["sweep", "validate", "--detectors", "pelt,binseg"], "--detectors pelt,binseg: choose among"),
    ],
)
def test_a_list_given_the_old_way_says_how(capsys, tmp_path, argv, said):
    assert main([*argv, "--out", str(tmp_path / "out")]) == EXIT_ERROR
    err = capsys.readouterr().err
    assert said in err and err.count("\n") == 1, err
    assert not (tmp_path / "out").exists()


def test_compare_of_two_fixture_runs_is_the_gate(capsys):
    """Two releases' files of a real sweep: 0.4.33 is slower than 0.4.31 (x2.29), so `compare` exits 3 with no
    switch (`errors.gate`). A file against itself is not slower (exit 0), but ten noisy processes cannot show its
    steady state the same within 5%: with `--strict` that is exit 4, and the line says how many more would."""
    runs = Path(__file__).parent / "fixtures" / "runs" / "jaxlib-20261203T055619"
    old, new = str(runs / "jax-0.4.31.json"), str(runs / "jax-0.4.33.json")
    assert main(["compare", old, new]) == 3
    assert "3 slower, 0 faster, 0 the same, 0 inconclusive" in capsys.readouterr().out
    assert main(["compare", old, old]) == 0
    assert main(["compare", old, old, "--strict"]) == 4
    out = capsys.readouterr().out
    assert out.count("0 slower, 0 faster, 1 the same, 2 inconclusive") == 2
    assert "widest, sweep_steady[scan_heavy] ×0.821–×1.22; " in out  # about 150 more rounds: wide, not at the edge
    assert "about 153 more rounds a side would settle them" in out  # a wide interval is within reach, however many


def test_upgrade_installs_the_newest_jax_again_and_the_session_says_which_it_measures():
    pytest.importorskip("nox")
    import importlib.util

    spec = importlib.util.spec_from_file_location("jaxmlp_noxfile", Path(__file__).parents[1] / "noxfile.py")
    assert spec and spec.loader
    noxfile = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(noxfile)

    class Session:
        name = "train"

        def __init__(self, posargs):
            self.posargs, self.calls = posargs, []

        def install(self, *args):
            self.calls.append(("install", args))

        def run(self, *args, env):
            self.calls.append(("run", args))

    upgraded = Session(["--upgrade", "--epochs", "2"])
    assert noxfile._jax(upgraded) == ["--epochs", "2"]
    assert upgraded.calls[0] == ("install", ("--upgrade", "jax", "jaxlib"))
    assert "train: measuring jax {jax.__version__}, jaxlib {jaxlib.__version__}" in upgraded.calls[1][1][-1]
    kept = Session(["--epochs", "2"])
    assert noxfile._jax(kept) == ["--epochs", "2"] and [c[0] for c in kept.calls] == ["run"]
