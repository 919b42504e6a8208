"""Views of the results: pure functions from the tidy DataFrame (`jaxmlp.results.store.frames`) to small tables, one
module per subject (`floors`, `ladders`, `goals`, `bench`, `runs`), gathered here under one name.

Every table names the benchmarks it shows (`shows`), so a test can check that each registered benchmark reaches
some table. Ratios are only ever taken inside one run, so numbers from different machines or versions never meet in
one ratio; where runs are set side by side (CPU vs an accelerator), `cpu_vs_accelerator` says what differs.
"""

from __future__ import annotations

from jaxmlp.results.tables.base import BEST, SHOWN, TIED, shows
from jaxmlp.results.tables.bench import (
    ACCELERATOR_DIFFER,
    ENVIRONMENT,
    RUN_PEAK,
    SIDE_BY_SIDE,
    bandwidth_table,
    benchmark_medians,
    benchmark_runs,
    bf16_step_table,
    compare_memory,
    compare_samples,
    cpu_vs_accelerator,
    environment,
    jit_vs_eager,
    memory_table,
    newest_by_backend,
    peaks_are_own,
    results_folder_table,
    step_stats,
    verdict_counts,
    vmap_vs_loop,
)
from jaxmlp.results.tables.floors import (
    GEMM_UNAVAILABLE,
    epoch_roofline,
    floor_line,
    floor_of,
    floors,
    gemm_rates,
    matmul_rate,
)
from jaxmlp.results.tables.goals import (
    GOAL_ACCELERATOR_FLOOR,
    GOAL_BF16_SPEEDUP,
    GOAL_FLOOR_FACTOR,
    GOAL_SEED_SPEEDUP,
    floor_vs_fastest,
    goal_line,
    goals,
)
from jaxmlp.results.tables.goals import (
    group as goal_group,
)
from jaxmlp.results.tables.ladders import (
    FLOOR,
    FLOORS,
    LADDER_COLUMNS,
    LADDER_KEYS,
    PIPELINE_RUNG,
    STEP_GEMMS,
    best_workers,
    ladder_headlines,
    loader_ladder,
    pipeline_ladder,
    rung_name,
)
from jaxmlp.results.tables.runs import (
    is_scaling,
    scaling_table,
    training_table,
    tta_line,
    tta_table,
    tutorial_accuracy,
)

__all__ = [
    "ACCELERATOR_DIFFER",
    "BEST",
    "ENVIRONMENT",
    "FLOOR",
    "FLOORS",
    "GEMM_UNAVAILABLE",
    "GOAL_ACCELERATOR_FLOOR",
    "GOAL_BF16_SPEEDUP",
    "GOAL_FLOOR_FACTOR",
    "GOAL_SEED_SPEEDUP",
    "LADDER_COLUMNS",
    "LADDER_KEYS",
    "PIPELINE_RUNG",
    "RUN_PEAK",
    "SHOWN",
    "SIDE_BY_SIDE",
    "STEP_GEMMS",
    "TIED",
    "bandwidth_table",
    "benchmark_medians",
    "benchmark_runs",
    "best_workers",
    "bf16_step_table",
    "compare_memory",
    "compare_samples",
    "cpu_vs_accelerator",
    "environment",
    "epoch_roofline",
    "floor_line",
    "floor_of",
    "floor_vs_fastest",
    "floors",
    "gemm_rates",
    "goal_group",
    "goal_line",
    "goals",
    "is_scaling",
    "jit_vs_eager",
    "ladder_headlines",
    "loader_ladder",
    "matmul_rate",
    "memory_table",
    "newest_by_backend",
    "peaks_are_own",
    "pipeline_ladder",
    "results_folder_table",
    "rung_name",
    "scaling_table",
    "shows",
    "step_stats",
    "training_table",
    "tta_line",
    "tta_table",
    "tutorial_accuracy",
    "verdict_counts",
    "vmap_vs_loop",
]
