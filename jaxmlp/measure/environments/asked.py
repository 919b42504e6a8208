"""What a command asks of the release environments (`Asked`): a protocol that a sweep's `Matrix` meets."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from jaxmlp.measure.environments.envs import Source


class Asked(Protocol):
    """Where and how the environments are asked for (a sweep's `Matrix` is one): their folder (None: the default),
    their source, the interpreters given, the whole series a Python is chosen for, the environments made by hand."""

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
