"""One run's rows (a backend's part) with the tables the findings read of them, each made once when read."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import pandas as pd

from jaxmlp.results.tables.bench import bandwidth_table, bf16_step_table, jit_vs_eager, memory_table, vmap_vs_loop
from jaxmlp.results.tables.floors import epoch_roofline, floors, gemm_rates
from jaxmlp.results.tables.goals import floor_vs_fastest, goals
from jaxmlp.results.tables.ladders import loader_ladder, pipeline_ladder


@dataclass(frozen=True, eq=False)
class RunTables:
    """``rows`` and the tables of them, each made once when first read (a reader copies what it alters)."""

    rows: pd.DataFrame

    @cached_property
    def gemm_rates(self) -> pd.DataFrame:
        return gemm_rates(self.rows)

    @cached_property
    def floors(self) -> pd.DataFrame:
        return floors(self.rows, self.gemm_rates)

    @cached_property
    def pipeline_ladder(self) -> pd.DataFrame:
        return pipeline_ladder(self.rows, self.floors)

    @cached_property
    def loader_ladder(self) -> pd.DataFrame:
        return loader_ladder(self.rows, self.floors)

    @cached_property
    def epoch_roofline(self) -> pd.DataFrame:
        return epoch_roofline(self.rows, self.floors)

    @cached_property
    def floor_vs_fastest(self) -> pd.DataFrame:
        return floor_vs_fastest(self.rows, self.floors, self.pipeline_ladder)

    @cached_property
    def jit_vs_eager(self) -> pd.DataFrame:
        return jit_vs_eager(self.rows)

    @cached_property
    def vmap_vs_loop(self) -> pd.DataFrame:
        return vmap_vs_loop(self.rows)

    @cached_property
    def memory_table(self) -> pd.DataFrame:
        return memory_table(self.rows)

    @cached_property
    def bandwidth_table(self) -> pd.DataFrame:
        return bandwidth_table(self.rows)

    @cached_property
    def bf16_step_table(self) -> pd.DataFrame:
        return bf16_step_table(self.rows)

    def goals(self, accuracy: Mapping[str, float] | None = None) -> list[dict[str, Any]]:
        """`goals` of the rows, from their ladder and GEMMs."""
        return goals(self.rows, accuracy, self.pipeline_ladder, self.gemm_rates)
