"""Optimized HLO text in a canonical form (docs/questions/releases.md), its fingerprint and its operations."""

from __future__ import annotations

import hashlib
import re
from collections import Counter

_DEBUG_SECTIONS = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")
# `, metadata={...}` with quoted strings that may hold braces; also the per-instruction debug frame ids.
_METADATA = re.compile(r',\s*metadata=\{(?:[^{}"]|"(?:[^"\\]|\\.)*")*\}')
_NAME = re.compile(r"%([A-Za-z_][\w.\-]*)")
# A computation's header: `ENTRY %main.4 (Arg_0.1: f32[8], ...) -> f32[8] {`; its parameters are named bare.
_HEADER = re.compile(r"^(ENTRY\s+)?%[A-Za-z_][\w.\-]*\s*\(")
_HEADER_PARAMETER = re.compile(r"(?<=[(,\s])([A-Za-z_][\w.\-]*)(?=:\s)")
_MODULE = re.compile(r"^(HloModule\s+)[\w.\-]+")  # named after the Python function
_OPCODE = re.compile(r"([a-z][\w\-]*)\(")
_FUSION_KIND = re.compile(r"\bkind=(k\w+)")


def _without_debug_sections(text: str) -> list[str]:
    lines, skipping = [], False
    for line in text.splitlines():
        if line.strip() in _DEBUG_SECTIONS:
            skipping = True
        elif skipping and not line.strip():
            skipping = False
        elif not skipping:
            lines.append(line.rstrip())
    return lines


def canonical(text: str) -> str:
    """``text`` without debug sections and metadata, each name renamed in order of first appearance."""
    return _canonical(text)[0]


def canonical_names(text: str) -> dict[str, str]:
    """Each instruction's and computation's name in ``text`` -> its canonical name, matched across releases."""
    return _canonical(text)[1]


def _canonical(text: str) -> tuple[str, dict[str, str]]:
    names: dict[str, str] = {}

    def rename(name: str) -> str:
        return names.setdefault(name, f"v{len(names)}")

    out = []
    for line in _without_debug_sections(text):
        line = _METADATA.sub("", line)
        if _HEADER.match(line):  # the header's bare parameter names are the `%name`s of its parameter()s
            head, _, rest = line.partition("(")
            signature, arrow, tail = rest.rpartition("->")
            signature = _HEADER_PARAMETER.sub(lambda m: "%" + rename(m.group(1)), "(" + signature)
            line = _NAME.sub(lambda m: "%" + rename(m.group(1)), head) + signature + arrow + tail
        else:
            line = _NAME.sub(lambda m: "%" + rename(m.group(1)), _MODULE.sub(r"\1module", line))
        out.append(line)
    while out and not out[-1]:
        out.pop()
    return "\n".join(out) + "\n", names


def fingerprint(text: str) -> str:
    """A short hash of the canonical form: equal for the same optimized program whatever the release's naming."""
    return hashlib.sha256(canonical(text).encode()).hexdigest()[:16]


_ANNOTATIONS = ("backend_config", "frontend_attributes", "control-predecessors", "statistics")
"""What an instruction carries beside what it computes, which `instruction_fingerprint` leaves out."""
_INDEX_COMMENT = re.compile(r"/\*index=\d+\*/")
_ARRAY_TYPE = r"[a-z][a-z0-9]*\[[^\]]*\](?:\{[^{}]*\})?"
_TUPLE_TYPE = r"\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)"
_OPERAND_TYPE = re.compile(rf"(?:{_ARRAY_TYPE}|{_TUPLE_TYPE})\s+(?=%)")  # ``add(f32[8]{0} %a, ...)``: printed or not
_INSTRUCTION = re.compile(r"^\s*(ROOT\s+)?%([\w.\-]+)\s*=\s*(.*)$")
_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')


def _value_end(text: str, start: int) -> int:
    """Where an attribute's value that starts at ``start`` ends."""
    if text.startswith('"', start):
        quoted = _QUOTED.match(text, start)
        return quoted.end() if quoted else len(text)
    if not text.startswith("{", start):
        end = text.find(", ", start)
        return len(text) if end < 0 else end
    depth, i = 0, start
    while i < len(text):
        if text[i] == '"':
            quoted = _QUOTED.match(text, i)
            i = quoted.end() if quoted else len(text)
            continue
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
        if depth == 0:
            break
    return i


def _without_annotations(line: str) -> str:
    """An instruction line without its annotations (`_ANNOTATIONS`)."""
    for key in _ANNOTATIONS:
        while (at := line.find(f", {key}=")) >= 0:
            line = line[:at] + line[_value_end(line, at + len(key) + 3) :]
    return line


def instruction_fingerprint(text: str) -> str:
    """A short hash of what the program computes, blind to names, order, metadata, annotations and operand types."""
    computations: dict[str, str] = {}  # each computation read so far: its hash
    values: dict[str, str] = {}  # each instruction of the one being read: its hash
    body: list[str] = []
    name, entry = "", False

    def resolved(match: re.Match[str]) -> str:
        return "%" + values.get(match.group(1), computations.get(match.group(1), "?"))

    for line in canonical(text).splitlines():
        if _HEADER.match(line) and line.rstrip().endswith("{"):
            name, entry = line.split("(")[0].split("%")[-1].strip(), line.startswith("ENTRY")
            values, body = {}, []
        elif line.strip() == "}" and name:
            computations[name] = _digest(("ENTRY " if entry else "") + " ".join(sorted(body)))
            name = ""
        elif name and (found := _INSTRUCTION.match(line)):
            form = _OPERAND_TYPE.sub("", _without_annotations(_INDEX_COMMENT.sub("", found.group(3))))
            values[found.group(2)] = _digest(_NAME.sub(resolved, form))
            body.append(("ROOT " if found.group(1) else "") + values[found.group(2)])
    return _digest(" ".join(sorted(computations.values())))


def _digest(words: str) -> str:
    return hashlib.sha256(words.encode()).hexdigest()[:16]


def _opcode(line: str) -> str | None:
    """The opcode of an instruction line (``%x = f32[2]{0} add(%a, %b)``), or None for other lines."""
    _, eq, rest = line.partition(" = ")
    if not eq or not line.lstrip().startswith(("%", "ROOT")):
        return None
    rest = rest.lstrip()
    if rest.startswith("("):  # a tuple shape: skip its balanced parentheses
        depth = 0
        for i, char in enumerate(rest):
            depth += {"(": 1, ")": -1}.get(char, 0)
            if depth == 0:
                rest = rest[i + 1 :]
                break
    else:
        rest = rest.partition(" ")[2]
    match = _OPCODE.match(rest.lstrip())
    return match.group(1) if match else None


def operations(text: str) -> Counter[str]:
    """How many instructions of each opcode the program has (every computation); fusions by kind."""
    counts: Counter[str] = Counter()
    for line in _without_debug_sections(text):
        op = _opcode(line)
        if op is None:
            continue
        if op == "fusion" and (kind := _FUSION_KIND.search(line)):
            op = f"fusion:{kind.group(1)}"
        counts[op] += 1
    return counts


_NUMBERED = re.compile(r"^(.+?)(?:\.\d+)+$")


def op_name(name: str) -> str:
    """An operation's short name: ``run.1`` for an event named by its whole instruction, else the name itself."""
    text = name.strip().removeprefix("ROOT ").lstrip()
    left, eq, _ = text.partition(" = ")
    return left.removeprefix("%") if eq and text.startswith("%") else name.strip()


def op_category(name: str) -> str:
    """An operation's kind where nothing better is known: an opcode, else the name without numbers."""
    text = name.strip()
    opcode = _opcode(text if text.startswith(("%", "ROOT")) else "")
    if opcode is not None:
        return opcode
    short = op_name(text)
    numbered = _NUMBERED.match(short)
    return numbered.group(1) if numbered else short


def op_label(name: str, category: object = None) -> str:
    """How every output names an operation, ``run.1 (custom-call)``, the category given or `op_category`."""
    given = category if isinstance(category, str) and category.strip() else op_category(name)
    return f"{op_name(name)} ({given})"
