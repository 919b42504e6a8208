"""``jaxmlp sweep corpus MANIFEST``: every case of a corpus of known regressions run, then its scorecard."""

from __future__ import annotations

import argparse
from pathlib import Path

from jaxmlp.cli import options
from jaxmlp.cli.sweep.common import MEASURING, SWEEP_BACKEND, matrix_of, measuring_of
from jaxmlp.flows.corpus import measure
from jaxmlp.flows.corpus_steps import rescore
from jaxmlp.measure.distributed import Ranks
from jaxmlp.measure.sweep.corpus import Runs
from jaxmlp.measure.sweep.settings import Corpus

MANIFEST = Path("bench") / "corpus" / "corpus.toml"


DESCRIPTION = (
    "For each case of a corpus manifest (bench/corpus/corpus.toml): the release timeline over its releases, "
    "the bisection of its range where it gives one, the explanation of each change found; then a scorecard: found "
    "(the right release, the right direction), the ratio within its band, explained, controls clean, a release that "
    "failed or hung named, and in how many injected-slowdown trials of its own workload (x1.25, x1.5) the detector "
    "found the slowdown. Each case runs with the processes, calls and trials its manifest entry sets (else the "
    "manifest's own); --processes, --calls and --slowdown-trials, given, set every case's. Writes "
    "RESULTS/corpus-<time>/ (scorecard.json and a folder a case). Stopped (Ctrl-C, SIGTERM), the scorecard of the "
    "cases that ended is written, marked partial. --rescore FOLDER scores a corpus folder again from its files "
    "(nothing measured) into FOLDER/scorecard-rescored-<time>.json."
)


FROM_MANIFEST = "the manifest sets it for each case"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    options.add(
        parser,
        options.own("manifest", "the corpus (default: %(default)s)", str(MANIFEST), nargs="?", metavar="MANIFEST"),
        options.own("--cases", "only these cases (default: every one)", metavar="NAME", **options.LIST),
    )
    calls = options.CALLS.but(default=None, why=FROM_MANIFEST, help="timed calls a process (default: the case's)")
    options.add(
        parser,
        *options.reworded(MEASURING[1:], calls),  # no --workload: each case names its own
        SWEEP_BACKEND,
        options.own(
            "--slowdown-trials",
            "injected-slowdown trials a case, 0 for none (default: the case's)",
            None,
            options.whole_number,
            metavar="N",
        ),
        options.own(
            "--rescore",
            "score a corpus folder again from its files, measuring nothing (its manifest's `from` fields read)",
            metavar="FOLDER",
        ),
        options.PROCESSES.but(default=None, why=FROM_MANIFEST, help="processes a release (default: the case's)"),
        *options.RELEASES,
    )


def run(args: argparse.Namespace) -> int:
    """Every case as a user would run it, then the scorecard; under mpirun or srun the ranks share each timeline."""
    settings = Corpus(Path(args.manifest), tuple(args.cases or ()))
    if args.rescore:
        return rescore(folder=Path(args.rescore), manifest=settings.manifest).code
    given = Runs(args.processes, args.calls, args.slowdown_trials)
    fallback = argparse.Namespace(
        **{**vars(args), "processes": options.PROCESSES.default, "calls": options.CALLS.default}
    )
    measuring, matrix = measuring_of(fallback), matrix_of(fallback)
    ranks = Ranks.found()
    return measure(
        settings=settings, measuring=measuring, matrix=matrix, out=Path(args.out), ranks=ranks, given=given
    ).code
