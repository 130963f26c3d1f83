"""Our markers on a test's path, found one way for ``domain_policy``, ``web_faults`` and
``agent_budget``: whose they are, where each sits, and two on one node refused.

Each marker's own module reads its arguments (``policies``, ``faults``, ``budget``);
this one walks the test's path (the test, its class, its module, ...), closest first,
and names each place as every message of theirs names it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, NamedTuple

import pytest

from agentloop_tools._plugin import messages
from agentloop_tools._plugin.scope import OUR_MARKERS, project_owns_marker

if TYPE_CHECKING:
    from _pytest.nodes import Node


class Placed(NamedTuple):
    """One of our markers on a test's path, and where it sits."""

    node: Node
    mark: pytest.Mark
    place: str  # "the test", "its class TestX", "its module test_x.py"
    where: str  # how a message names the marker: "@pytest.mark.NAME on NODEID (on ...)"


def markers_are_ours(item: pytest.Item, name: str) -> bool:
    """Whether the test's markers called ``name`` are ours to read; a clash is an error.

    A project that registered a marker of that name itself owns it: its markers are left
    alone, unless one carries our keywords, and then which is meant is not ours to guess.
    """
    if not project_owns_marker(item.config, name):
        return True
    for mark in item.iter_markers(name):
        ours = sorted(OUR_MARKERS[name].intersection(mark.kwargs))
        if ours:
            raise pytest.UsageError(messages.marker_clash(item.nodeid, name, ours))
    return False


def carries(item: pytest.Item, name: str, names: Collection[str] | None = None) -> bool:
    """Whether a ``name`` marker is on the test's path; ``names``: every marker name on
    it, when the caller has walked the path already (collection: one walk per test)."""
    if names is not None:
        return name in names
    return item.get_closest_marker(name) is not None


def on_path(item: pytest.Item, name: str, stacked: Callable[[str, str], str]) -> list[Placed]:
    """Every ``name`` marker on the test's path, closest first.

    Two on one node (stacked decorators, a decorator and ``pytest.param(marks=...)``)
    are a usage error worded by ``stacked(nodeid, place)``: which one was meant is not
    the plugin's guess to make.
    """
    marked = list(item.iter_markers_with_node(name))
    seen: set[int] = set()
    found = []
    for node, mark in marked:
        place = place_of(item, node)
        if id(node) in seen:
            raise pytest.UsageError(stacked(item.nodeid, place))
        seen.add(id(node))
        on = "" if node is item else f" (on {place})"
        found.append(Placed(node, mark, place, f"@pytest.mark.{name} on {item.nodeid}{on}"))
    return found


def place_of(item: pytest.Item, node: Node) -> str:
    """How a message names a node of the test's path."""
    if node is item:
        return "the test"
    if isinstance(node, pytest.Class):
        return f"its class {node.name}"
    if isinstance(node, pytest.Module):
        return f"its module {node.name}"
    return f"{node.nodeid}"
