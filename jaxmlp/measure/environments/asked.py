"""What a command asks of the release environments (`Asked`): a protocol that a sweep's `Matrix` meets."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from jaxmlp.measure.environments.envs import Source


class Asked(Protocol):
    """Where and how the environments are asked for: their folder, source, interpreters, series and hand-made ones."""

    @property
    def envs(self) -> Path | None: ...
    @property
    def source(self) -> Source: ...
    @property
    def pythons(self) -> tuple[str, ...]: ...
    @property
    def series(self) -> tuple[str, ...]: ...
    @property
    def hand_made(self) -> Mapping[str, str]: ...
