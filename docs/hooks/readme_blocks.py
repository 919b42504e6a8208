"""The READMEs' generated blocks: each a docs page's block of the same name, rendered.

The READMEs cannot be rendered by the docs build, so each block between ``<!-- figures:NAME -->`` and
``<!-- /figures -->`` of a README is its docs page's block of that name rendered (`PAGES`: README.md's headline table
from the home page, bench/corpus/README.md's table of cases from the corpus's results page): the build fails if a
README's block differs (`readme_problems`), and ``python docs/hooks/figures.py --readme`` rewrites them
(`write_readme`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from runs_table import ROOT

if TYPE_CHECKING:
    from figure_functions import Figures

README = ROOT / "README.md"
HOME = ROOT / "docs" / "index.md"
CORPUS_README = ROOT / "bench" / "corpus" / "README.md"
CORPUS_PAGE = ROOT / "docs" / "results" / "corpus.md"
PAGES = ((README, HOME), (CORPUS_README, CORPUS_PAGE))
"""Each README, and the docs page whose blocks it holds rendered."""
BLOCK = re.compile(r"<!-- figures:(\w+) -->\n(.*?)<!-- /figures -->", re.S)


def blocks(text: str) -> dict[str, str]:
    return {m.group(1): m.group(2) for m in BLOCK.finditer(text)}


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def readme_problems(figures: Figures, pages: tuple[tuple[Path, Path], ...] = PAGES) -> list[str]:
    """Where a README's figure blocks differ from its page's, rendered."""
    problems = []
    for readme, page in pages:
        source, held = blocks(page.read_text()), blocks(readme.read_text())
        problems += [
            f"{_shown(readme)}'s block {name!r} differs from {_shown(page)}'s, rendered: "
            "run `python docs/hooks/figures.py --readme`"
            for name, text in source.items()
            if held.get(name) != figures.render(text, f"{_shown(page)}, block {name}")
        ]
    return problems


def write_readme(figures: Figures, pages: tuple[tuple[Path, Path], ...] = PAGES) -> None:
    """Each README's figure blocks rewritten: its page's, rendered."""
    for readme, page in pages:
        source = blocks(page.read_text())
        text = BLOCK.sub(
            lambda m, source=source: (  # type: ignore[misc]
                f"<!-- figures:{m.group(1)} -->\n{figures.render(source[m.group(1)])}<!-- /figures -->"
                if m.group(1) in source
                else m.group(0)
            ),
            readme.read_text(),
        )
        readme.write_text(text)
