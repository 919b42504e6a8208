"""Text from result files made safe for HTML (`html_text`), Markdown (`markdown`) and a terminal (`terminal`): a results
folder's contents are data, never markup or instructions (docs/reference/trust.md)."""

from __future__ import annotations

import contextlib
import html
import re
import sys
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    import pandas as pd

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
"""Control characters (C0 but tab and newline, DEL, C1), Unicode line separators and bidirectional overrides."""
_ESCAPES = re.compile(
    r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC (a title, a hyperlink), ended by BEL or ST
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"  # DCS, SOS, PM, APC strings
    r"|\x1b\[[0-?]*[ -/]*[@-~]?"  # CSI (colours, cursor moves)
    r"|\x9b[0-?]*[ -/]*[@-~]?"  # CSI as one C1 character
    r"|\x1b[ -/]*[0-~]?"  # any other escape
)
_PLAIN = re.compile(r"[\w .,:;=+/%×–'()?!-]*")
"""Words Markdown shows as they are, from which no markup can start: letters, digits, spaces and a few marks."""
_AUTOLINK = re.compile(r"://|www\.", re.IGNORECASE)
"""What GitHub's Markdown links without brackets (an address: ``https://…``, ``www.…``): shown as a code span."""


def html_text(value: object) -> str:
    """``value`` as HTML text or a quoted attribute's value: ``&<>"'`` escaped, control characters dropped."""
    return html.escape(_CONTROL.sub("", str(value)), quote=True)


def terminal(text: str) -> str:
    """``text`` with ANSI/OSC escape sequences and control characters (but newline and tab) dropped."""
    return _CONTROL.sub("", _ESCAPES.sub("", text))


def one_line(value: object) -> str:
    """``value`` on one line, without control characters: each run of line breaks and tabs one space."""
    return terminal(re.sub(r"[\r\n\t\v\f\u0085]+", " ", str(value)))


def code_span(value: object) -> str:
    """``value`` as a Markdown code span, fenced by one backtick more than its longest run, padded where needed."""
    text = one_line(value)
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def markdown(value: object) -> str:
    """A name or free text for a Markdown message: as it is where plain words (`_PLAIN`), else a code span."""
    text = one_line(value)
    plain = _PLAIN.fullmatch(text) and not text.startswith(("-", "+")) and not _AUTOLINK.search(text)
    return text if plain else code_span(text)


def markdown_prose(value: object) -> str:
    """Text that may hold a file's names made safe for jaxmlp's own Markdown (summary.md): it never starts HTML, a link,
    a mention or a heading; jaxmlp's own bold and code spans and its lines are kept."""
    text = terminal(str(value).replace("\r", ""))
    text = re.sub(r"<(?=[A-Za-z/!?])", r"\\<", text).replace("](", "]\\(")
    text = re.sub(r"(?<!\w)@(?=\w)", "@\u200b", text)
    return re.sub(r"^(\s*)([#>])", r"\1\\\2", text, flags=re.MULTILINE)


SHOWN_COLUMNS = (
    "machine",
    "workload",
    "release",
    "against",
    "baseline",
    "python",
    "verdict",
    "unexplained",
    "measured_at",
)
"""The text columns of tracking's frame that its message shows (`jaxmlp.results.sweep.tracked.FRAME_COLUMNS`)."""


def markdown_frame(frame: pd.DataFrame, columns: Sequence[str] = SHOWN_COLUMNS) -> pd.DataFrame:
    """``frame`` with its text ``columns`` made safe by `markdown`; an empty cell stays empty."""
    made = {c: frame[c].map(lambda v: v if v is None or v != v else markdown(v)) for c in columns if c in frame}
    return frame.assign(**made) if made else frame


class TerminalStream:
    """A text stream that writes what it is given through `terminal`."""

    def __init__(self, stream: TextIO):
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(terminal(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def unwrapped(stream: TextIO) -> TextIO:
    r"""The stream under a `TerminalStream`, for a progress bar's own ``\r``."""
    return stream.stream if isinstance(stream, TerminalStream) else stream


@contextlib.contextmanager
def terminal_output() -> Iterator[None]:
    """``sys.stdout`` and ``sys.stderr`` written through `TerminalStream` for as long as it lasts."""
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = TerminalStream(out), TerminalStream(err)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = out, err
