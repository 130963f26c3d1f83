"""Network safety is written once: one deadline stream, one body reader, in web/_net/.

Read from the source, so a second stream or a second decompressing reader added to a
tool later fails here, naming where it is.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import agentloop_tools

WEB = Path(agentloop_tools.__file__).parent / "web"
PACKAGE = "agentloop_tools.web"


@cache
def _trees() -> dict[str, ast.Module]:
    return {
        path.relative_to(WEB).as_posix(): ast.parse(path.read_text(encoding="utf-8"))
        for path in sorted(WEB.rglob("*.py"))
    }


def _places(test: str) -> list[str]:
    found = []
    for where, tree in _trees().items():
        for node in ast.walk(tree):
            if test in ("NetworkStream", "NetworkBackend") and isinstance(node, ast.ClassDef):
                if any(ast.unparse(base).endswith(test) for base in node.bases):
                    found.append(f"{where}:{node.name}")
            # A zlib stream is what a body reader limits the output of.
            elif test == "inflate" and getattr(node, "attr", None) == "decompressobj":
                found.append(where)
    return found


def test_one_network_stream_enforces_a_deadline_for_both_tools() -> None:
    assert _places("NetworkStream") == ["_net/_deadline.py:DeadlineStream"]


def test_one_network_backend_connects_by_a_deadline_and_the_pinned_one_extends_it() -> None:
    assert _places("NetworkBackend") == ["_net/_deadline.py:DeadlineBackend"]


def test_bodies_are_decompressed_in_the_network_room_only() -> None:
    assert set(_places("inflate")) == {"_net/_body.py"}


def _imported(room: str) -> set[str]:
    names = set()
    for path in sorted((WEB / room).glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                names.add(node.module)
                names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_neither_tool_imports_the_other_for_network_safety() -> None:
    # What web_fetch takes of search: page APIs (via=) and the words of its description.
    allowed = {"_backends_api", "_backends_builtin", "_describe"}
    from_search = {
        name.split(".")[3] for name in _imported("_fetch") if name.startswith(f"{PACKAGE}._search.")
    }
    assert from_search <= allowed, from_search - allowed
    assert not {name for name in _imported("_search") if name.startswith(f"{PACKAGE}._fetch")}
