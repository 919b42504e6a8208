"""The command reference, generated from jaxmlp's own argparse parsers when the docs are built.

A page holding ``<!-- commands -->`` gets, in its place, every command's and subcommand's ``--help`` text as the
parser formats it, so the reference cannot drift from ``jaxmlp COMMAND --help``; one holding ``<!-- questions -->``
gets the table of questions `jaxmlp summary` and the report answer (`jaxmlp.results.findings.questions`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
MARKER = "<!-- commands -->"
QUESTIONS_MARKER = "<!-- questions -->"
WIDTH = "88"  # argparse wraps to $COLUMNS; the page's code box holds about 90


def reference() -> str:
    """Markdown: a heading and the help text of ``jaxmlp`` and of each command and subcommand."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from jaxmlp.cli import COMMANDS, build_parser, every_parser

    columns = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH
    try:
        parts = []
        for path, parser in every_parser(build_parser(COMMANDS)):
            level = len(path) + 1
            parts.append(f"{'#' * level} `{parser.prog}`\n\n```text\n{parser.format_help().rstrip()}\n```\n")
    finally:
        if columns is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = columns
    return "\n".join(parts)


def questions() -> str:
    """Markdown: the questions' table, in the order every face answers them."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from jaxmlp.results.findings.questions import QUESTIONS

    rows = [f"| {q.text} | `#{q.anchor}` | {'yes' if q.of_a_run else 'no'} |" for q in QUESTIONS]
    head = ["| question | report section | one file asked for by name answers it |", "| --- | --- | --- |"]
    return "\n".join([*head, *rows])


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if QUESTIONS_MARKER in markdown:
        markdown = markdown.replace(QUESTIONS_MARKER, questions())
    return markdown.replace(MARKER, reference()) if MARKER in markdown else markdown
