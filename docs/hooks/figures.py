"""Every figure a docs page states, read from the results file it cites when the docs are built: the MkDocs hook.

A page writes a figure as ``{{ EXPR }}`` (the functions it may call: `figure_functions`), over the runs named in
``reports/README.md`` (`runs_table`). An expression that cannot be resolved fails the build, so no page can state a
figure its file does not hold; so does a README block that differs from its page's, rendered (`readme_blocks`), and a
run whose "cited by" cell is not the pages that read it. ``python docs/hooks/figures.py --readme`` rewrites the
READMEs' blocks.
"""

from __future__ import annotations

import sys
from typing import Any

from expressions import FigureError
from figure_functions import Figures
from readme_blocks import readme_problems, write_readme
from runs_table import RUNS_TABLE, citation_problems

_figures: Figures | None = None


def on_pre_build(config: Any) -> None:
    global _figures
    from mkdocs.exceptions import PluginError

    _figures = Figures()
    problems = readme_problems(_figures)
    if problems:
        raise PluginError("; ".join(problems))


def on_post_build(config: Any) -> None:
    from mkdocs.exceptions import PluginError

    if _figures is not None and (problems := citation_problems(RUNS_TABLE, _figures.used)):
        raise PluginError("; ".join(problems))


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    from mkdocs.exceptions import PluginError

    try:
        return (_figures or Figures()).render(markdown, page.file.src_path, page=page.file.src_path)
    except FigureError as e:
        raise PluginError(str(e)) from None


if __name__ == "__main__":
    if sys.argv[1:] != ["--readme"]:
        sys.exit("usage: python docs/hooks/figures.py --readme  (rewrites README.md's figure blocks)")
    write_readme(Figures())
