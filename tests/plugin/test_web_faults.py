"""@pytest.mark.web_faults: recorded with the fault, replayed with it, marked in the reports.

Real pytest runs (pytester) of an agent on a scripted provider: the faulted page and
search never reach the cassette, the tool result the model saw does, and the replay
with the same marker matches it.
"""

from __future__ import annotations

import json

import pytest

from agentloop_tools._plugin.scope import FROM_SCRIPTS_OPTION, HTML_REPORT_OPTION, REPORT_OPTION

PAGE = "https://docs.python.org/3/whatsnew/3.13.html"

AGENT_TEST = """
import pytest
from agentloop.transcript import ToolResultPart
from agentloop_tools.testing import (
    ScriptedPages, ScriptedSearch, assert_links_grounded, chat_completion,
)
from agentloop_tools.web import DomainPolicy, web_fetch, web_search
from agentloop_tools.web.backends import backend_from_env

PAGE = "https://docs.python.org/3/whatsnew/3.13.html"
QUERY = {"query": "python 3.13 repl", "count": 3, "allowed_domains": None,
         "blocked_domains": None}
SCRIPT = [
    chat_completion(calls=[("c1", "web_fetch", {"url": PAGE, "start": None}),
                           ("c2", "web_search", QUERY)]),
    chat_completion("I could not read the release notes: the page answered 403 Forbidden."),
]


@pytest.fixture
def agentloop_script():
    return SCRIPT


@pytest.mark.vcr
MARKER
def test_agent(agentloop_agent, agentloop_env, agentloop_evidence, agentloop_from_scripts):
    search, pages = None, {}
    if agentloop_from_scripts:  # nothing scripted: every request must be faulted
        search = ScriptedSearch("brave", []).http_client()
        pages = ScriptedPages({}).tool_options()
    tools = [web_fetch(policy=DomainPolicy.allow(["python.org"]), **pages),
             web_search(backend_from_env(agentloop_env), http_client=search)]
    answer = agentloop_agent(tools, provider="openrouter").run("What changed in 3.13?")
    assert "could not read" in answer
    [conversation] = agentloop_evidence.transcripts
    read, searched = [part.content for message in conversation.messages
                      for part in message.content if isinstance(part, ToolResultPart)]
    assert read.startswith(f"Error: [fetch-error] {PAGE} answered 403 Forbidden")
    assert "the last failure was a timeout" in searched
    assert_links_grounded(agentloop_evidence)
"""
MARKER = (
    '@pytest.mark.web_faults(pages={"docs.python.org/3/whatsnew/*": 403}, '
    'searches={"3.13": "timeout"})'
)


@pytest.fixture
def recorded(project: pytest.Pytester) -> pytest.Pytester:
    project.makeini("[pytest]\nagentloop_search_backend = brave\n")
    project.makepyfile(test_agent=AGENT_TEST.replace("MARKER", MARKER))
    run = project.runpytest("--record-mode=once", FROM_SCRIPTS_OPTION.flag)
    run.assert_outcomes(passed=1)
    return project


@pytest.mark.agentloop_06
def test_the_faulted_result_is_recorded_and_replays_with_the_marker(
    recorded: pytest.Pytester,
) -> None:
    cassette = (recorded.path / "cassettes" / "test_agent" / "test_agent.yaml").read_text()
    # Neither the page nor the search API was asked: only the model's two turns, the
    # second carrying the faulted results the model read.
    assert cassette.count("uri: https://openrouter.ai/api/v1/chat/completions") == 2
    assert "api.search.brave.com" not in cassette
    assert "uri: https://docs.python.org" not in cassette
    assert "answered 403 Forbidden" in cassette
    recorded.runpytest().assert_outcomes(passed=1)
    # Without the marker the tool asks for the page, which the cassette does not hold.
    path = recorded.path / "test_agent.py"
    path.write_text(path.read_text().replace(MARKER, ""))
    replayed = recorded.runpytest()
    replayed.assert_outcomes(failed=1)
    replayed.stdout.fnmatch_lines(["*this request is not in the cassette*"])


@pytest.mark.agentloop_06
def test_the_reports_mark_the_faults_and_each_one_met(recorded: pytest.Pytester) -> None:
    report, page = recorded.path / "report.json", recorded.path / "report.html"
    recorded.runpytest(
        f"{REPORT_OPTION.flag}={report}", f"{HTML_REPORT_OPTION.flag}={page}"
    ).assert_outcomes(passed=1)
    [test] = json.loads(report.read_text())["tests"]
    met = sorted(test["web_faults"].pop("met"), key=lambda entry: entry["tool"])
    assert met == [  # sorted: the model's two calls run in parallel threads
        {"tool": "web_fetch", "target": PAGE, "fault": "403"},
        {"tool": "web_search", "target": "python 3.13 repl", "fault": "timeout"},
    ]
    assert test["web_faults"] == {
        "pages": {"docs.python.org/3/whatsnew/*": "403"},
        "searches": {"3.13": "timeout"},
    }
    html = page.read_text()
    assert (
        "Web faults injected:</span> pages docs.python.org/3/whatsnew/* &rarr; 403; "
        "searches 3.13 &rarr; timeout (2 met)" in html
    )
    assert f"<li>web_fetch {PAGE} &rarr; 403</li>" in html


FAULTED_FETCH = """
import pytest
from agentloop.errors import ToolError
from agentloop_tools.testing import ScriptedPages
from agentloop_tools.web import web_fetch

PAGE = "https://docs.python.org/3/"


MARKER
def test_fetch():
    pages = ScriptedPages({PAGE: "<p>" + "The docs. " * 30 + "</p>"})
    tool = web_fetch(**pages.tool_options())
    with pytest.raises(ToolError, match="answered 503"):
        tool.handler(None, url=PAGE)
    assert pages.requests == []
"""


def test_the_marker_alone_puts_a_test_in_scope_and_its_faults_on(
    project: pytest.Pytester,
) -> None:
    # No fixture of ours and no configuration: the marker is the test's only use of us.
    marker = '@pytest.mark.web_faults(pages={"docs.python.org": 503})'
    project.makepyfile(test_fetch=FAULTED_FETCH.replace("MARKER", marker))
    project.runpytest().assert_outcomes(passed=1)


def test_a_closer_marker_wins_for_the_same_page(project: pytest.Pytester) -> None:
    module = 'pytestmark = pytest.mark.web_faults(pages={"docs.python.org": 404})\n\n'
    closer = '@pytest.mark.web_faults(pages={"python.org/3/*": 503})'
    project.makepyfile(test_fetch=FAULTED_FETCH.replace("MARKER", f"{module}\n{closer}"))
    project.runpytest().assert_outcomes(passed=1)


@pytest.mark.parametrize(
    ("marker", "expected"),
    [
        (
            '@pytest.mark.web_faults(pages={"docs.python.org": 200})',
            "*test_fetch.py::test_fetch pages?'docs.python.org'?: 200 is not an HTTP "
            "error status; use an HTTP error status (400-599, e.g. 403, 404, 429, 503), "
            "'timeout', 'empty', 'paywall' or, for pages only, 'redirect:<http(s) URL>'.",
        ),
        (
            '@pytest.mark.web_faults(pages={"https://docs.python.org": 403})',
            "*pages= pattern 'https://docs.python.org': *has a scheme*",
        ),
        (
            '@pytest.mark.web_faults(searches={"python": "redirect:https://x.org"})',
            "*a search has no redirect to follow*",
        ),
        (
            '@pytest.mark.web_faults({"docs.python.org": 403})',
            "*pass keyword arguments only, pages={URL_PATTERN: FAULT}*",
        ),
        (
            '@pytest.mark.web_faults(page={"docs.python.org": 403})',
            "*unknown argument(s) page; it takes pages= and searches=*",
        ),
        ("@pytest.mark.web_faults(pages={})", "*names no fault; give pages=*"),
        (
            '@pytest.mark.web_faults(pages={"a.org": 403})\n'
            '@pytest.mark.web_faults(pages={"b.org": 403})',
            "*the test carries more than one web_faults marker*",
        ),
        (
            '@pytest.mark.web_fault(pages={"docs.python.org": 403})',
            "*@pytest.mark.web_fault on test_fetch.py::test_fetch is not a registered "
            "marker, and it is one typo away from @pytest.mark.web_faults*",
        ),
    ],
)
def test_a_bad_marker_stops_the_run_before_any_test(
    project: pytest.Pytester, marker: str, expected: str
) -> None:
    # (An unknown marker is pytest's warning, not an error, as in a user's project.)
    project.makeini("[pytest]\nfilterwarnings = always::pytest.PytestUnknownMarkWarning\n")
    project.makepyfile(test_fetch=FAULTED_FETCH.replace("MARKER", marker))
    result = project.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([expected])


def test_a_web_faults_marker_the_project_registered_is_its_own(project: pytest.Pytester) -> None:
    project.makeini("[pytest]\nmarkers =\n    web_faults(level): the project's own\n")
    project.makepyfile(
        test_own="import pytest\n\n@pytest.mark.web_faults('flaky')\ndef test_own():\n    pass\n"
    )
    project.runpytest("--strict-markers").assert_outcomes(passed=1)
    project.makepyfile(test_fetch=FAULTED_FETCH.replace("MARKER", MARKER))
    clash = project.runpytest("--strict-markers", "test_fetch.py")
    assert clash.ret == pytest.ExitCode.USAGE_ERROR
    clash.stderr.fnmatch_lines(["*web_faults on test_fetch.py::test_fetch is a marker this*"])
