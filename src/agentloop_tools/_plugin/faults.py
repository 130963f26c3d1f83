"""The ``web_faults`` marker, read and checked when the tests are collected.

Keyword form only, as ``domain_policy``: ``pages={URL_PATTERN: FAULT}`` and
``searches={QUERY_PATTERN: FAULT}``. A bad pattern or FAULT stops the run before any
test, naming the test and the values accepted. Every marker on a test's path applies,
the closest first (its pattern wins where two match); two on one node are refused.
The faults themselves are the core's (``agentloop_tools.web._faults``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from agentloop_tools._plugin import messages
from agentloop_tools._plugin.policies import markers_are_ours
from agentloop_tools._plugin.scope import (
    FAULTS_KEYWORDS,
    FAULTS_MARKER_NAME,
)

if TYPE_CHECKING:
    from _pytest.nodes import Node

    from agentloop_tools.web._faults import WebFaults

_EXAMPLE = "e.g. @pytest.mark.web_faults(pages={'docs.python.org/3/*': 403})"


def faults_are_ours(item: pytest.Item) -> bool:
    """Whether the test's ``web_faults`` markers are ours to read; a clash is an error."""
    return markers_are_ours(item, FAULTS_MARKER_NAME, FAULTS_KEYWORDS)


def read_faults(item: pytest.Item) -> WebFaults:
    """Every ``web_faults`` marker on the test's path, checked, closest first."""
    from agentloop_tools.web._faults import WebFaults

    marked = list(item.iter_markers_with_node(FAULTS_MARKER_NAME))
    nodes = [node for node, _ in marked]
    faults = WebFaults()
    for node, mark in marked:
        if nodes.count(node) > 1:
            raise pytest.UsageError(messages.stacked_faults(item.nodeid, _node_name(item, node)))
        faults = faults.then(_read_one(item, node, mark))
    return faults


def _read_one(item: pytest.Item, node: Node, mark: pytest.Mark) -> WebFaults:
    from agentloop_tools.web._faults import ALLOWED, web_faults

    on = "" if node is item else f" (on {_node_name(item, node)})"
    where = f"@pytest.mark.web_faults on {item.nodeid}{on}"
    if mark.args:
        raise pytest.UsageError(
            f"{where}: pass keyword arguments only, pages={{URL_PATTERN: FAULT}} and/or "
            f"searches={{QUERY_PATTERN: FAULT}}; {_EXAMPLE}."
        )
    unknown = sorted(set(mark.kwargs) - FAULTS_KEYWORDS)
    if unknown:
        raise pytest.UsageError(
            f"{where}: unknown argument(s) {', '.join(unknown)}; it takes pages= and "
            f"searches= ({_EXAMPLE})."
        )
    try:
        faults = web_faults(mark.kwargs.get("pages"), mark.kwargs.get("searches"), where=where)
    except (TypeError, ValueError) as error:
        raise pytest.UsageError(str(error)) from None
    if not faults.pages and not faults.searches:
        # An empty marker would read as "this test meets a fault" and meet none.
        raise pytest.UsageError(
            f"{where}: names no fault; give pages={{URL_PATTERN: FAULT}} and/or "
            f"searches={{QUERY_PATTERN: FAULT}}, a FAULT being {ALLOWED} ({_EXAMPLE})."
        )
    return faults


def record_faults(faults: WebFaults, met: list[dict[str, str]]) -> dict[str, object]:
    """The test's faults for its report record: as written, and each one its tools met."""
    return {**faults.shown(), "met": list(met)}


def _node_name(item: pytest.Item, node: Node) -> str:
    if node is item:
        return "the test"
    if isinstance(node, pytest.Class):
        return f"its class {node.name}"
    if isinstance(node, pytest.Module):
        return f"its module {node.name}"
    return f"{node.nodeid}"
