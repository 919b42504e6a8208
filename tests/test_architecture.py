"""The package's shape: its imports run one way through the layers `ARCHITECTURE.md` lists, with no circle."""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "jaxmlp"
LAYERS_BLOCK = re.compile(r"```layers\n(.*?)```", re.S)
INNER_BLOCKS = re.compile(r"```layers (\S+)\n(.*?)```", re.S)


def read_layers(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """The ``layers`` block of ARCHITECTURE.md: one line per layer, lowest first, ``name: module prefixes``."""
    (block,) = LAYERS_BLOCK.findall(text)
    return [
        (name.strip(), tuple(prefixes.split()))
        for name, prefixes in (line.split(":", 1) for line in block.strip().splitlines())
    ]


def read_inner_layers(text: str) -> dict[str, list[tuple[str, tuple[str, ...]]]]:
    """The ``layers PACKAGE`` blocks of ARCHITECTURE.md: a package's own sub-layers, lowest first."""
    return {
        package: [(n.strip(), tuple(p.split())) for n, p in (line.split(":", 1) for line in block.strip().splitlines())]
        for package, block in INNER_BLOCKS.findall(text)
    }


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path, root: Path) -> set[str]:
    """Every jaxmlp module a file imports, anywhere in it: at the top, inside functions, under TYPE_CHECKING;
    ``from a import b`` counts as ``a`` and, where b is a module, ``a.b``."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, *([node.module] if node.module else [])])
            found |= {base} | {f"{base}.{alias.name}" for alias in node.names}
    return {m for m in found if m == root.name or m.startswith(root.name + ".")}


def import_graph(root: Path) -> dict[str, set[str]]:
    modules = {module_name(p, root): p for p in root.rglob("*.py")}
    return {m: {d for d in imported(p, root) if d in modules and d != m} for m, p in modules.items()}


def layer_of(module: str, layers: list[tuple[str, tuple[str, ...]]]) -> int:
    """The index of the layer whose longest prefix names ``module``."""
    matches = [
        (len(p), i)
        for i, (_, prefixes) in enumerate(layers)
        for p in prefixes
        if module == p or module.startswith(p + ".")
    ]
    if not matches:
        raise AssertionError(f"{module} is in no layer of ARCHITECTURE.md's layers block: add it there")
    return max(matches)[1]


def upward(graph: dict[str, set[str]], layers: list[tuple[str, tuple[str, ...]]]) -> list[str]:
    return sorted(
        f"{m} ({layers[layer_of(m, layers)][0]}) imports {d} ({layers[layer_of(d, layers)][0]})"
        for m, deps in graph.items()
        for d in deps
        if layer_of(d, layers) > layer_of(m, layers)
    )


def inner_upward(graph: dict[str, set[str]], package: str, layers: list[tuple[str, tuple[str, ...]]]) -> list[str]:
    """`upward` among the modules of ``package`` alone, by its own sub-layers."""
    inside = {
        m: {d for d in deps if d.startswith(package + ".")} for m, deps in graph.items() if m.startswith(package + ".")
    }
    return upward(inside, layers)


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every import circle, each once (a depth-first walk that reports the path back to a module on the stack)."""
    found, done, stack = [], set(), []

    def visit(module: str) -> None:
        stack.append(module)
        for dep in sorted(graph[module]):
            if dep in stack:
                circle = stack[stack.index(dep) :]
                if sorted(circle) not in [sorted(c) for c in found]:
                    found.append([*circle, dep])
            elif dep not in done:
                visit(dep)
        stack.pop()
        done.add(module)

    for module in sorted(graph):
        if module not in done:
            visit(module)
    return found


@pytest.fixture(scope="module")
def layers():
    return read_layers((ROOT / "ARCHITECTURE.md").read_text())


def test_every_import_runs_down_the_layers(layers):
    graph = import_graph(PACKAGE)
    assert len(graph) > 50 and {"jaxmlp.cli.sweep", "jaxmlp.flows.track"} <= set(graph)
    assert upward(graph, layers) == []


def test_every_import_inside_a_layer_runs_down_its_sub_layers():
    """Inside results (schema → store → tables → sweep → history → findings), measure, report and flows: a module
    of one sub-layer imports none of a later one."""
    inner = read_inner_layers((ROOT / "ARCHITECTURE.md").read_text())
    assert {"jaxmlp.results", "jaxmlp.measure", "jaxmlp.report", "jaxmlp.flows"} <= set(inner)
    graph = import_graph(PACKAGE)
    for package, layers in inner.items():
        assert inner_upward(graph, package, layers) == [], package


def test_the_tables_are_reached_through_their_front_only():
    """Outside `jaxmlp.results.tables` (the package, the docs' hooks), its names come from the package itself, never
    from one of its modules: one way in."""
    tables = "jaxmlp.results.tables"
    graph = import_graph(PACKAGE)
    hooks = {p.stem: imported(p, PACKAGE) for p in (ROOT / "docs" / "hooks").glob("*.py")}
    front = ast.parse((PACKAGE / "results" / "tables" / "__init__.py").read_text())
    exported = {a.asname for n in front.body if isinstance(n, ast.ImportFrom) for a in n.names if a.asname}
    # a name the front exports (the function `floors`) is not its module of the same name
    submodules = {m for m in graph if m.startswith(f"{tables}.") and m.rpartition(".")[2] not in exported}
    assert len(submodules) > 5
    reached = {m: sorted(d & submodules) for m, d in {**graph, **hooks}.items() if not m.startswith(tables)}
    assert {m: d for m, d in reached.items() if d} == {}


def test_the_package_has_no_import_circle():
    assert circles(import_graph(PACKAGE)) == []


def test_the_check_finds_an_upward_import_and_a_circle(tmp_path, layers):
    """The same checks over a copy of the package with one upward import and one circle added."""
    copy = tmp_path / "jaxmlp"
    for path in PACKAGE.rglob("*.py"):
        (copy / path.relative_to(PACKAGE)).parent.mkdir(parents=True, exist_ok=True)
        (copy / path.relative_to(PACKAGE)).write_text(path.read_text())
    with (copy / "model.py").open("a") as f:
        f.write("\n\ndef later():\n    from jaxmlp.results.store import frames  # noqa\n")
    with (copy / "results" / "store" / "layout.py").open("a") as f:
        f.write("\nfrom .writing import ResultsStore  # noqa\n")
    with (copy / "results" / "schema" / "common.py").open("a") as f:
        f.write("\nfrom jaxmlp.results.store import layout  # noqa\n")
    graph = import_graph(copy)
    inner = read_inner_layers((ROOT / "ARCHITECTURE.md").read_text())["jaxmlp.results"]
    assert inner_upward(graph, "jaxmlp.results", inner) == [
        f"jaxmlp.results.schema.common (schema) imports jaxmlp.results.store{m} (store)" for m in ("", ".layout")
    ]
    added = [f"jaxmlp.model (model) imports jaxmlp.results.store{m} (results)" for m in ("", ".frames")]
    assert upward(graph, layers) == added
    store = "jaxmlp.results.store"
    assert [f"{store}.layout", f"{store}.writing", f"{store}.layout"] in circles(graph)


def stray_strings(path: Path) -> list[int]:
    """The lines of a file's strings that document nothing: a string statement at a module's or class's top level
    that is neither its first statement nor right after an assignment (the attribute it documents)."""
    tree = ast.parse(path.read_text())
    found = []
    for owner in [tree, *(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef))]:
        for before, node in zip(owner.body, owner.body[1:]):
            text = (
                isinstance(node, ast.Expr)
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
            )
            if text and not isinstance(before, (ast.Assign, ast.AnnAssign)):
                found.append(node.lineno)
    return found


def test_every_docstring_documents_what_it_follows():
    """A constant's docstring right after it, a module's first: none left over from a merge or a move."""
    stray = {str(p.relative_to(ROOT)): lines for p in sorted(PACKAGE.rglob("*.py")) if (lines := stray_strings(p))}
    assert stray == {}
