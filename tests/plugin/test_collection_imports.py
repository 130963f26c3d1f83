"""Reading the markers at collection loads neither agentloop nor a transport (issue 30).

Every ``domain_policy``, ``web_faults`` and ``agent_budget`` marker is read before any
test runs. agentloop (with pydantic and its clients) cost a marked suite seven times an
unmarked one's collection time: building a policy, a fault table or a budget must not
import it, nor httpx. Each check runs in a fresh interpreter, since this test session
has long imported them all.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

# What a collection that reads our markers must leave unloaded.
HEAVY = ("agentloop", "httpx", "httpcore", "pydantic", "agentloop_tools.testing")

BUILD = textwrap.dedent(
    """
    import json, sys
    from agentloop_tools.web import DomainPolicy
    from agentloop_tools.web._faults import web_faults
    from agentloop_tools._budget_limits import check_limits, parse_limits

    policy = DomainPolicy.block(["evil.example", "tracker.example/pixel"])
    allow = DomainPolicy.allow(["python.org"])
    faults = web_faults({"docs.python.org/3/*": 403}, {"python*": "timeout"}, where="here")
    limits = parse_limits("searches=5, output_tokens=2000", "ini") | check_limits(
        {"fetches": 1}, "marker"
    )
    print(json.dumps({
        "loaded": sorted(m for m in json.loads(sys.argv[1]) if m in sys.modules),
        "judged": [policy.permits("https://evil.example/x"), allow.permits("docs.python.org")],
        "fault": faults.pages[0][0],
        "limits": limits,
    }))
    """
)


def test_building_a_policy_faults_and_a_budget_loads_neither_agentloop_nor_httpx() -> None:
    done = subprocess.run(
        [sys.executable, "-c", BUILD, json.dumps(HEAVY)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["loaded"] == [], (
        f"building a DomainPolicy, web_faults or a budget loaded {result['loaded']}: import "
        "them where a transcript is audited or a tool built, not at module level"
    )
    assert result["judged"] == [False, True]
    assert result["fault"] == "docs.python.org/3/*"
    assert result["limits"] == {"searches": 5, "output_tokens": 2000, "fetches": 1}


MARKED = """
import pytest

pytestmark = pytest.mark.domain_policy(block=["evil.example"])


@pytest.mark.domain_policy(allow=["python.org", "docs.python.org"])
@pytest.mark.agent_budget(searches=5, output_tokens=2000)
@pytest.mark.web_faults(pages={"docs.python.org/3/*": 403}, searches={"python*": 429})
def test_marked():
    pass


@pytest.mark.domain_policy(allow=["python.org", "docs.python.org"])
def test_same_list():
    pass
"""

# Asked after our collection hook has read every marker (it runs tryfirst).
CONFTEST = """
import json, sys

HEAVY = {heavy!r}


def pytest_collection_finish(session):
    print("LOADED " + json.dumps(sorted(m for m in HEAVY if m in sys.modules)))
"""


def test_collecting_marked_tests_reads_every_marker_without_loading_agentloop(
    project: pytest.Pytester,
) -> None:
    project.makeini("[pytest]\nagentloop_budget = model_requests=10\n")
    project.makeconftest(CONFTEST.format(heavy=HEAVY))
    project.makepyfile(test_marked=MARKED)
    result = project.runpytest_subprocess("--collect-only", "-q", "-p", "no:randomly")
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    result.stdout.fnmatch_lines(["*test_marked.py::test_marked", "*::test_same_list"])
    [line] = [line for line in result.outlines if line.startswith("LOADED ")]
    assert json.loads(line.removeprefix("LOADED ")) == []


def test_a_bad_marker_still_stops_the_collection_it_no_longer_imports_for(
    project: pytest.Pytester,
) -> None:
    # Lazy is not lenient: the marker is still read, and still refused, at collection.
    project.makepyfile(
        test_bad="""
        import pytest

        @pytest.mark.domain_policy(allow=["python.org"])
        @pytest.mark.agent_budget(searchs=5)
        def test_one():
            pass
        """
    )
    result = project.runpytest_subprocess("--collect-only", "-q", "-p", "no:randomly")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unknown budget counter(s) searchs*"])


def test_the_web_module_lists_and_resolves_each_public_name_lazily() -> None:
    # Each public name is imported from the module the face names for it under
    # TYPE_CHECKING (what type checkers and IDEs read), and dir() shows every one.
    import ast
    import importlib
    from pathlib import Path

    import agentloop_tools.web as web

    tree = ast.parse(Path(web.__file__).read_text(encoding="utf-8"))
    typed: dict[str, str] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        module = node.module or ""
        if module.startswith("agentloop_tools"):
            for alias in node.names:
                typed[alias.asname or alias.name] = module
    assert set(typed) == set(web.__all__)
    for name, module in typed.items():
        assert getattr(web, name) is getattr(importlib.import_module(module), name), name
    assert set(web.__all__) <= set(dir(web))
    assert web.backends is importlib.import_module("agentloop_tools.web.backends")
    with pytest.raises(AttributeError, match="no attribute 'DomainPolicyy'"):
        web.DomainPolicyy  # noqa: B018
