"""Collection reads each test's marker names once; the full reading is the oracle.

At collection the session walks a test's path once for every marker name on it and
answers "does it carry web_faults / agent_budget / domain_policy?" from that set (issue
30's collection row). The reading without the set walks the path for each question, as
every test set up after collection still does. Both must leave the same verdicts: the
same scope, the same problem text, the same markers read into the stash, the same
fixtures attached, on marker shapes drawn by Hypothesis (valid and broken markers on the
test, its class and its module; a project that registered ``domain_policy`` itself).
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from agentloop_tools._plugin.budget import BUDGET
from agentloop_tools._plugin.scope import WEB_FAULTS, in_scope
from agentloop_tools._plugin.session import _MARKER_PROBLEM, MARKER, AgentloopSession

MARKERS = (
    "pytest.mark.domain_policy(block=['evil.example'])",
    "pytest.mark.domain_policy(allow=['python.org', 'docs.python.org'], replace=True)",
    "pytest.mark.domain_policy(block=['x.example'], refused_attempts='fail')",
    "pytest.mark.domain_policy(allow='python.org')",  # a string, not a list: refused
    "pytest.mark.domain_policy()",  # no list: refused
    "pytest.mark.domain_policy(require_evidence=False, allow=['python.org'])",
    "pytest.mark.web_faults(pages={'docs.python.org/3/*': 403})",
    "pytest.mark.web_faults(pages={})",  # names no fault: refused
    "pytest.mark.agent_budget(searches=5)",
    "pytest.mark.agent_budget(searches=-1)",  # refused
    "pytest.mark.slow",
)
PLACES = st.lists(st.sampled_from(MARKERS), max_size=3)
FIXTURES = st.sampled_from(["", "agentloop_evidence", "agentloop_env", "tmp_path"])
_NAMES = itertools.count()


def module_source(
    module: list[str], klass: list[str], function: list[str], fixture: str, params: bool
) -> str:
    lines = ["import pytest", f"pytestmark = [{', '.join(module)}]", ""]
    lines += [f"@{mark}" for mark in klass] + ["class TestCase:"]
    lines += [f"    @{mark}" for mark in function]
    if params:  # the function's markers shared by two items, one with a marker of its own
        lines.append(
            "    @pytest.mark.parametrize('n', [1, pytest.param(2, marks=pytest.mark.agent_budget("
            "fetches=1))])"
        )
    lines += [f"    def test_it(self, {'n, ' if params else ''}{fixture}):", "        pass", ""]
    return "\n".join(lines)


def read(session: AgentloopSession, item: pytest.Item, names: set[str] | None) -> Any:
    """What the session's reading leaves: its answer, the stash, the fixtures."""
    try:
        answer: object = session._read_marker(item, names)
    except pytest.UsageError as error:  # a marker stacked on one node
        answer = ("usage error", str(error))
    keys: tuple[pytest.StashKey[Any], ...] = (MARKER, BUDGET, WEB_FAULTS)
    stash = tuple(repr(item.stash.get(key, None)) for key in keys)
    problem: str | None = item.stash.get(_MARKER_PROBLEM, None)
    return answer, stash, problem, list(getattr(item, "fixturenames", ()))


@settings(
    max_examples=15,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],  # each example is a collection
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(PLACES, PLACES, PLACES, FIXTURES, st.booleans(), st.booleans())
# A marker of the project's own name carrying our keywords (a clash), two on one node,
# and every kind broken on the module with a good one on the test.
@example([], [], [MARKERS[0]], "", False, True)
@example([], [MARKERS[1], MARKERS[0]], [MARKERS[8]], "agentloop_env", True, False)
@example([MARKERS[3], MARKERS[7], MARKERS[9]], [], [MARKERS[0]], "tmp_path", False, False)
def test_reading_from_the_collected_names_is_the_full_reading(
    project: pytest.Pytester,
    module: list[str],
    klass: list[str],
    function: list[str],
    fixture: str,
    params: bool,
    project_owns: bool,
) -> None:
    owned = "    domain_policy: the project's own marker\n" if project_owns else ""
    project.makeini(f"[pytest]\nmarkers =\n{owned}    slow: slow tests\n")
    source = module_source(module, klass, function, fixture, params)
    name = f"test_case_{next(_NAMES)}"
    project.makepyfile(**{name: source})
    fast_items = project.getitems(project.path / f"{name}.py")
    full_items = project.getitems(project.path / f"{name}.py")
    assert [i.nodeid for i in fast_items] == [i.nodeid for i in full_items]
    session = AgentloopSession(fast_items[0].config)
    for fast, full in zip(fast_items, full_items, strict=True):
        names = {mark.name for mark in fast.iter_markers()}
        assert in_scope(fast, names) == in_scope(full), source
        assert read(session, fast, names) == read(session, full, None), source
