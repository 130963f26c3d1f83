"""The shape of the package, read from its source: imports point one way, rooms stay small.

docs/architecture.md draws the layers this test holds the code to. Every import counts:
module level, inside functions and under ``TYPE_CHECKING`` (a type-level cycle is still
a cycle for a reader). Sizes are counted as a reviewer reads them: a module's lines, and
a function's lines of code (docstring, comments and blank lines not counted).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import agentloop_tools

SOURCE = Path(agentloop_tools.__file__).parent
PACKAGE = "agentloop_tools"
MAX_MODULE_LINES = 500
MAX_FUNCTION_CODE_LINES = 60

# Lowest first. A module may import its own layer's modules and any lower layer's; the
# first prefix that matches a module names its layer (longest prefixes are listed first
# where they overlap).
LAYERS: tuple[tuple[str, ...], ...] = (
    (  # shared leaves: nothing of the package at import time
        "agentloop_tools._errors",
        "agentloop_tools._visible",
        "agentloop_tools._providers",
        "agentloop_tools._docs",
        "agentloop_tools._secrets",  # the credential detector: the standard library only
        "agentloop_tools._transcript_log",  # telling a transcript log from a JSONL transcript
        "agentloop_tools._config_probe",  # may a file hold our table? (bytes, before parsing)
        "agentloop_tools._budget_limits",  # a budget's counters and limits, read at collection
    ),
    ("agentloop_tools.web._domains",),
    ("agentloop_tools.web._text",),
    ("agentloop_tools.web._transcript", "agentloop_tools.web._hosted_search"),
    ("agentloop_tools.web._policy",),
    (
        "agentloop_tools.web._tool_errors",
        "agentloop_tools.web._tool_options",
        "agentloop_tools.web._faults",  # the faults a test injects, asked before a request
    ),
    ("agentloop_tools.web._net",),  # both tools' network safety: deadlines, capped bodies
    ("agentloop_tools.web._search", "agentloop_tools.web._fetch", "agentloop_tools.web.backends"),
    ("agentloop_tools.web._standalone",),
    ("agentloop_tools.web",),  # the face: public names only
    ("agentloop_tools.cassettes",),
    ("agentloop_tools.testing", "agentloop_tools._report"),
    ("agentloop_tools._logs",),  # transcript logs audited in pieces: no command line
    ("agentloop_tools._config",),
    (
        "agentloop_tools.cli",
        "agentloop_tools.logs",
        "agentloop_tools._plugin",
        "agentloop_tools.pytest_plugin",
        "agentloop_tools.__main__",
    ),
)
# The package root holds only the version and the exception base: any layer may use it.
ROOT_LAYER = 0


@dataclass(frozen=True)
class Import:
    source: str
    target: str
    names: tuple[str, ...]
    line: int


def module_name(path: Path) -> str:
    parts = path.relative_to(SOURCE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(SOURCE.rglob("*.py"))}


def imports() -> Iterator[Import]:
    known = modules()
    for name, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                if not base.startswith(PACKAGE):
                    continue
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    target = sub if sub in known else base
                    yield Import(name, target, () if sub in known else (alias.name,), node.lineno)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith(PACKAGE):
                        yield Import(name, alias.name, (), node.lineno)


def layer_of(module: str) -> int:
    if module == PACKAGE:
        return ROOT_LAYER
    best, rank = -1, -1
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, rank = len(prefix), index
    assert rank >= 0, f"{module} is in no layer: add it to LAYERS and docs/architecture.md"
    return rank


def test_every_module_has_a_layer() -> None:
    for module in modules():
        layer_of(module)


def test_imports_point_down_the_layers() -> None:
    upward = [
        f"{i.source}:{i.line} imports {i.target}"
        for i in imports()
        if layer_of(i.target) > layer_of(i.source)
    ]
    assert not upward, "imports that point up the layers:\n" + "\n".join(upward)


def test_there_is_no_import_cycle_not_even_a_type_level_one() -> None:
    graph: dict[str, set[str]] = {m: set() for m in modules()}
    for i in imports():
        if i.target in graph and i.target != i.source:
            graph[i.source].add(i.target)
    cycles = strongly_connected(graph)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(sorted(c)) for c in cycles)


def test_private_names_stay_inside_their_subpackage() -> None:
    # A shared private *module* is fine (its names are the package's); an underscore name
    # taken from another subpackage's module is a boundary in the wrong place.
    crossing = []
    for i in imports():
        for name in i.names:
            private = name.startswith("_") and not name.startswith("__")
            if private and i.target.rpartition(".")[0] != subpackage_of(i.source):
                crossing.append(f"{i.source}:{i.line} takes {name} from {i.target}")
    assert not crossing, "\n".join(crossing)


def subpackage_of(module: str) -> str:
    path = modules()[module]
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def test_modules_and_functions_stay_small() -> None:
    too_big = []
    for name, path in modules().items():
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        if len(lines) > MAX_MODULE_LINES:
            too_big.append(f"{name}: {len(lines)} lines (at most {MAX_MODULE_LINES})")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                count = code_lines(lines, node)
                if count > MAX_FUNCTION_CODE_LINES:
                    too_big.append(
                        f"{name}:{node.lineno} {node.name}: {count} lines of code "
                        f"(at most {MAX_FUNCTION_CODE_LINES})"
                    )
    assert not too_big, "\n".join(too_big)


def code_lines(lines: list[str], node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    skipped: set[int] = set()
    first = node.body[0]
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        skipped = set(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return sum(
        1
        for number in range(node.lineno, (node.end_lineno or node.lineno) + 1)
        if number not in skipped
        and lines[number - 1].strip()
        and not lines[number - 1].strip().startswith("#")
    )


def strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in graph[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = set()
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.add(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(component)

    for node in graph:
        if node not in index:
            visit(node)
    return found


def test_no_name_of_a_package_hides_one_of_its_modules() -> None:
    # ``from pkg import mod`` returns pkg's attribute first: a function ``search`` in a
    # package with a ``search`` submodule makes the import return the function.
    hidden = []
    for name, path in modules().items():
        if path.name != "__init__.py":
            continue
        children = {p.stem for p in path.parent.glob("*.py")} | {
            p.name for p in path.parent.iterdir() if (p / "__init__.py").exists()
        }
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            for bound in _bound_names(node):
                if bound in children and f"{name}.{bound}" != _imported_module(node, bound):
                    hidden.append(f"{name}.{bound} is both a module and a name in {name}")
    assert not hidden, "\n".join(hidden)


def _bound_names(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.ImportFrom | ast.Import):
        return [(alias.asname or alias.name).split(".")[0] for alias in node.names]
    if isinstance(node, ast.Assign):
        return [target.id for target in node.targets if isinstance(target, ast.Name)]
    return []


def _imported_module(node: ast.stmt, bound: str) -> str | None:
    if isinstance(node, ast.ImportFrom) and node.module:
        for alias in node.names:
            if (alias.asname or alias.name) == bound:
                return f"{node.module}.{alias.name}"
    return None


def test_the_plugin_package_lists_every_module_it_holds() -> None:
    # A contributor opens _plugin/__init__.py to find which module does what.
    import agentloop_tools._plugin as plugin

    folder = Path(plugin.__file__).parent
    modules = {path.stem for path in folder.glob("*.py") if path.stem != "__init__"}
    listed = set(re.findall(r"``(\w+)``", plugin.__doc__ or ""))
    assert modules <= listed, sorted(modules - listed)


# --- rooms keep their privates --------------------------------------------------------------

# Private attributes of other libraries' objects whose names one of our rooms also uses:
# the read is of theirs, not of another room of ours.
FOREIGN_PRIVATES = {
    "_replace": "namedtuple's documented method",
    "_asdict": "namedtuple's documented method",
    "_fields": "namedtuple's documented attribute",
}
# Cross-room reads that exist now, each with who removes it; the list only shrinks.
ALLOWED_PRIVATE_READS: dict[tuple[str, str], str] = {
    # vcrpy's Cassette._path (pytest-recording's ``vcr`` fixture hands us vcrpy's
    # cassette); cassettes/_hygiene's own ``_path`` is another attribute of the same name.
    ("agentloop_tools._plugin.cassette", "_path"): "vcrpy's cassette, not ours",
    ("agentloop_tools._plugin.gate", "_path"): "vcrpy's cassette, not ours",
    # vcrpy's Cassette._persister (the guard finds its own persister there); _plugin's
    # replay_speed has a ``_persister`` of its own.
    ("agentloop_tools.cassettes._hygiene._guard", "_persister"): "vcrpy's cassette",
}
# Reads of another room's privates that the policy helper's branch (issue 29 item 3)
# removes: none are left when a room is a package directory (DomainPolicy's ``_index``,
# ``_text_audit`` and ``_judge`` are read inside web/_policy/ only). Add none.


def room_of(module: str) -> str:
    """A module's room: its package directory (``agentloop_tools.web._policy``)."""
    return subpackage_of(module)


def private_attribute(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


@cache
def privates_by_room() -> dict[str, set[str]]:
    """Every private name a room defines: module level, class bodies, ``self._x = ...``."""
    defined: dict[str, set[str]] = {}
    for module, path in modules().items():
        names = defined.setdefault(room_of(module), set())
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    for sub in ast.walk(target):
                        if isinstance(sub, ast.Name):
                            names.add(sub.id)
                        elif isinstance(sub, ast.Attribute) and _on_self(sub):
                            names.add(sub.attr)
                if any(isinstance(t, ast.Name) and t.id == "__slots__" for t in targets):
                    names.update(_strings(node.value))
    return {room: {n for n in names if private_attribute(n)} for room, names in defined.items()}


def _strings(node: ast.AST | None) -> set[str]:
    found = (sub.value for sub in ast.walk(node) if isinstance(sub, ast.Constant)) if node else ()
    return {value for value in found if isinstance(value, str)}


def _on_self(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id in ("self", "cls")
    )


def private_reads(module: str) -> Iterator[tuple[int, str]]:
    """``x._name`` (not on self or cls) and ``getattr(x, "_name")`` in a module."""
    for node in ast.walk(ast.parse(modules()[module].read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and private_attribute(node.attr) and not _on_self(node):
            yield node.lineno, node.attr
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr", "setattr")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
            and private_attribute(node.args[1].value)
        ):
            yield node.lineno, node.args[1].value


@cache
def cross_room_reads() -> tuple[tuple[str, int, str, list[str]], ...]:
    return tuple(_cross_room_reads())


def _cross_room_reads() -> Iterator[tuple[str, int, str, list[str]]]:
    defined = privates_by_room()
    for module in modules():
        own = room_of(module)
        for line, name in private_reads(module):
            if name in FOREIGN_PRIVATES or name in defined.get(own, set()):
                continue
            elsewhere = sorted(room for room, names in defined.items() if name in names)
            if elsewhere:
                yield module, line, name, elsewhere


def test_no_room_reads_a_private_attribute_of_another_room() -> None:
    # A room that needs another's private state gets a small typed view of it instead,
    # so the owner can change its insides without breaking a reader it cannot see.
    reads = [
        f"{module}:{line} reads .{name}, private to {', '.join(rooms)}"
        for module, line, name, rooms in cross_room_reads()
        if (module, name) not in ALLOWED_PRIVATE_READS
    ]
    assert not reads, "\n".join(reads)


def test_the_allowed_private_reads_still_exist() -> None:
    # An entry whose read is gone is removed, so the list only shrinks.
    found = {(module, name) for module, _, name, _ in cross_room_reads()}
    assert set(ALLOWED_PRIVATE_READS) <= found, sorted(set(ALLOWED_PRIVATE_READS) - found)


# --- truth in files ----------------------------------------------------------------------

ROOT = SOURCE.parents[1]
ARCHITECTURE_DOC = ROOT / "docs" / "architecture.md"
# A file name as prose names one: ``_name.py``, or a path ending in one (``web/_fetch/_body.py``).
NAMED_FILE = re.compile(r"(?<![\w./-])((?:[\w.-]+/)*_[a-z0-9_]+\.py)\b")
# A module named with one of its names: ``_providers.SEARCH``, ``_search_http.Overtime``.
NAMED_MODULE = re.compile(r"(?<![\w./-])(_[a-z][a-z0-9_]*)\.[A-Z]\w*")


def described_files() -> Iterator[Path]:
    # The CHANGELOG is history: it names files as they were when it was written.
    yield from sorted(SOURCE.rglob("*.py"))
    yield from sorted((ROOT / "docs").rglob("*.md"))


def test_every_file_named_in_the_source_and_the_docs_exists() -> None:
    files = [path.relative_to(ROOT).as_posix() for path in ROOT.rglob("*.py")]
    files = [name for name in files if not name.startswith((".venv/", ".git/"))]
    stems = {Path(name).stem for name in files} | {
        path.name for path in SOURCE.rglob("_*") if path.is_dir()
    }
    stale = []
    for path in described_files():
        text = path.read_text(encoding="utf-8")
        for number, line in enumerate(text.splitlines(), 1):
            for named in NAMED_FILE.findall(line):
                if not any(name == named or name.endswith("/" + named) for name in files):
                    stale.append(f"{path.relative_to(ROOT)}:{number} names {named}")
            for module in NAMED_MODULE.findall(line):
                if module not in stems:
                    stale.append(f"{path.relative_to(ROOT)}:{number} names module {module}")
    assert not stale, "files named that do not exist (moved or renamed?):\n" + "\n".join(stale)


def layer_path(prefix: str) -> str:
    """How docs/architecture.md writes a layer's module or package: ``web/_domains/``."""
    relative = prefix.removeprefix(PACKAGE + ".").replace(".", "/")
    return relative + "/" if (SOURCE / relative).is_dir() else relative + ".py"


def test_every_layer_of_the_table_is_on_the_architecture_page() -> None:
    page = ARCHITECTURE_DOC.read_text(encoding="utf-8")
    missing = [
        f"{prefix} (as {layer_path(prefix)})"
        for layer in LAYERS
        for prefix in layer
        if layer_path(prefix) not in page
    ]
    assert not missing, "layers docs/architecture.md does not name:\n" + "\n".join(missing)
