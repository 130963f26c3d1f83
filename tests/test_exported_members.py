"""What a user may import is exactly each public module's ``__all__`` (as httpx's test).

A public module is one whose dotted name has no part starting with ``_``. Its public
names are the names without a leading ``_`` that it defines (``def``, ``class``, an
assignment, a ``type`` alias) or imports from this package, and that exist at run time
(a ``TYPE_CHECKING`` import exists only if the module's ``__getattr__`` provides it).
Submodules reached as attributes (``web.backends``) are not names. An import from
outside the package (the standard library, httpx, Hypothesis) is the module's own
business: it is never a public name, and ``__all__`` must not list it.

Exempt: ``pytest_plugin`` (its hooks and fixtures are public by pytest's rules and
documented in docs/testing.md) and ``__main__``.

docs/reference.md renders each public module from ``__all__``: one ``:::`` directive per
module, no hand-kept ``members:`` list, and no filter that hides a name of ``__all__``.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

import agentloop_tools

SOURCE = Path(agentloop_tools.__file__).parent
PACKAGE = "agentloop_tools"
REFERENCE = Path(__file__).parents[1] / "docs" / "reference.md"
EXEMPT = {
    "agentloop_tools.pytest_plugin": "hooks and fixtures: public by pytest's rules",
}
# Dunder names a module may list besides its public names (as httpx lists __version__).
DUNDERS = {"__version__"}


def module_name(path: Path) -> str:
    parts = path.relative_to(SOURCE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def public_modules() -> list[str]:
    names = (module_name(path) for path in sorted(SOURCE.rglob("*.py")))
    return [
        name
        for name in names
        if not any(part.startswith("_") for part in name.split(".")) and name not in EXEMPT
    ]


PUBLIC_MODULES = public_modules()


def bindings(module: str) -> dict[str, bool]:
    """Each name bound at the module's top level: True if ours, False if imported from outside."""
    path = SOURCE.parent.joinpath(*module.split("."))
    path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    found: dict[str, bool] = {}
    statements = list(ast.parse(path.read_text(encoding="utf-8")).body)
    while statements:
        node = statements.pop(0)
        if isinstance(node, ast.If | ast.Try | ast.With):
            # Names bound under TYPE_CHECKING, in a try/except ImportError or a with block.
            statements[:0] = [
                *node.body,
                *getattr(node, "orelse", []),
                *(line for handler in getattr(node, "handlers", []) for line in handler.body),
                *getattr(node, "finalbody", []),
            ]
        elif isinstance(node, ast.ImportFrom):
            ours = (node.module or "").split(".")[0] == PACKAGE
            for alias in node.names:
                found[alias.asname or alias.name] = ours
        elif isinstance(node, ast.Import):
            for alias in node.names:
                found[(alias.asname or alias.name).split(".")[0]] = False
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found[node.name] = True
        elif isinstance(node, ast.TypeAlias) and isinstance(node.name, ast.Name):
            found[node.name.id] = True
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        found[name.id] = True
    return found


def public_names(module: ModuleType) -> set[str]:
    names = set()
    for name, ours in bindings(module.__name__).items():
        if not ours or name.startswith("_"):
            continue
        try:
            value = getattr(module, name)
        except AttributeError:
            continue  # a TYPE_CHECKING-only import: not there for a user
        if not inspect.ismodule(value):
            names.add(name)
    return names


def standard_library(value: object) -> bool:
    if not (inspect.isclass(value) or inspect.isroutine(value) or inspect.ismodule(value)):
        return False
    origin = value.__name__ if inspect.ismodule(value) else getattr(value, "__module__", "")
    return str(origin).split(".")[0] in sys.stdlib_module_names


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_a_public_modules_all_is_exactly_its_public_names(name: str) -> None:
    module = importlib.import_module(name)
    exported = list(getattr(module, "__all__", ()))
    assert exported, f"{name} has no __all__: say what a user may import from it"
    assert len(exported) == len(set(exported)), f"{name}.__all__ lists a name twice"
    missing = [n for n in exported if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ lists names the module does not have: {missing}"
    outside = bindings(name)
    foreign = sorted(n for n in exported if outside.get(n) is False)
    stdlib = sorted(n for n in exported if standard_library(getattr(module, n)))
    assert not foreign, f"{name}.__all__ lists names imported from outside the package: {foreign}"
    assert not stdlib, f"{name}.__all__ lists standard-library names: {stdlib}"
    dunders = {n for n in exported if n.startswith("_")}
    assert dunders <= DUNDERS, f"{name}.__all__ lists private names: {sorted(dunders - DUNDERS)}"
    public = public_names(module)
    unlisted = sorted(public - set(exported))
    extra = sorted(set(exported) - public - dunders)
    assert not unlisted, (
        f"{name} has public names outside __all__: {unlisted}. Export them (add them to "
        "__all__ and say so in CHANGELOG.md) or make them private (import them as _name)."
    )
    assert not extra, f"{name}.__all__ lists names it neither defines nor imports: {extra}"


def test_every_public_module_is_found() -> None:
    # The walk above is what the surface test covers: a public module it missed would
    # go unchecked.
    assert {
        "agentloop_tools",
        "agentloop_tools.web",
        "agentloop_tools.web.backends",
        "agentloop_tools.cassettes",
        "agentloop_tools.testing",
        "agentloop_tools.testing.strategies",
        "agentloop_tools.logs",
        "agentloop_tools.cli",
    } <= set(PUBLIC_MODULES)


def directives() -> dict[str, dict[str, object]]:
    """Each ``::: module`` directive of docs/reference.md and its options."""
    import yaml

    found: dict[str, dict[str, object]] = {}
    blocks = re.split(r"^::: ", REFERENCE.read_text(encoding="utf-8"), flags=re.MULTILINE)[1:]
    for block in blocks:
        target, _, rest = block.partition("\n")
        indented = []
        for line in rest.splitlines():
            if line and not line.startswith("    "):
                break
            indented.append(line[4:])
        loaded = yaml.safe_load("\n".join(indented)) or {}
        found[target.strip()] = dict(loaded.get("options") or {})
    return found


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_the_reference_shows_every_name_of_a_public_modules_all(name: str) -> None:
    options = directives().get(name)
    assert options is not None, f"docs/reference.md has no '::: {name}' section"
    assert "members" not in options, (
        f"docs/reference.md lists the members of {name} by hand: drop the list, "
        "__all__ decides what is shown"
    )
    filters = options.get("filters", [])
    assert isinstance(filters, list), f"{name}: filters must be a list of patterns"
    hidden = [
        n
        for n in importlib.import_module(name).__all__
        if any(f.startswith("!") and re.search(f[1:], n) for f in filters)
    ]
    assert not hidden, f"docs/reference.md's filters hide names of {name}.__all__: {hidden}"
    assert options.get("show_if_no_docstring") is True, (
        f"{name}: a name without a docstring (a type alias) would be left out"
    )


def test_the_reference_renders_each_name_from_the_source() -> None:
    # What mkdocstrings renders is what griffe finds: every name of __all__ must resolve
    # (an alias griffe cannot follow is dropped from the page without a warning).
    griffe = pytest.importorskip("griffe")
    package = griffe.load(PACKAGE, search_paths=[str(SOURCE.parent)], resolve_aliases=True)
    lost = []
    for name in PUBLIC_MODULES:
        obj = package if name == PACKAGE else package[name.removeprefix(PACKAGE + ".")]
        for member in importlib.import_module(name).__all__:
            if member not in obj.members:
                lost.append(f"{name}.{member}")
    assert not lost, f"names of __all__ the generated reference cannot show: {lost}"


def test_the_types_a_user_meets_in_a_signature_are_importable_from_web() -> None:
    # A user annotating their own code needs the type of what they pass and read:
    # Violation.where, DomainPolicy.mode, web_fetch(via=), web_search(undated=, on_fatal=).
    import agentloop_tools.web as web

    mode = vars(web.DomainPolicy)["mode"]
    assert isinstance(mode, property)
    assert mode.fget is not None
    met = {
        "Where": inspect.get_annotations(web.Violation)["where"],
        "Mode": inspect.get_annotations(mode.fget)["return"],
        "PageApi": inspect.get_annotations(web.web_fetch)["via"],
        "Undated": inspect.get_annotations(web.web_search)["undated"],
        "OnFatal": inspect.get_annotations(web.web_search)["on_fatal"],
    }
    for name, annotation in met.items():
        assert re.search(rf"\b{name}\b", str(annotation)), (name, annotation)
        assert name in web.__all__, f"agentloop_tools.web does not export {name}"
    assert "tool-result" in web.Where.__value__.__args__
    assert web.Mode.__value__.__args__ == ("allow", "block")
