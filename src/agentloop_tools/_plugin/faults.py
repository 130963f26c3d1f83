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
from agentloop_tools._plugin.markers import Placed, on_path
from agentloop_tools._plugin.scope import FAULTS_KEYWORDS, FAULTS_MARKER_NAME

if TYPE_CHECKING:
    from agentloop_tools.web._faults import WebFaults

_EXAMPLE = "e.g. @pytest.mark.web_faults(pages={'docs.python.org/3/*': 403})"


def read_faults(item: pytest.Item) -> WebFaults:
    """Every ``web_faults`` marker on the test's path, checked, closest first."""
    from agentloop_tools.web._faults import WebFaults

    faults = WebFaults()
    for placed in on_path(item, FAULTS_MARKER_NAME, messages.stacked_faults):
        faults = faults.then(_read_one(placed))
    return faults


def _read_one(placed: Placed) -> WebFaults:
    from agentloop_tools.web._faults import ALLOWED, web_faults

    where, mark = placed.where, placed.mark
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
