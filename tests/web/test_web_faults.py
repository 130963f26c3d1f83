"""Web faults at the tools' request seam: answered as the real failure, with nothing sent.

The core half of ``@pytest.mark.web_faults`` (the marker's half is in
tests/plugin/test_web_faults.py): ``ScriptedPages(faults=)``, ``ScriptedSearch(faults=)``
and the injected faults the plugin turns on while a test runs.
"""

from __future__ import annotations

import re
import time

import pytest
from agentloop.errors import ToolError

from agentloop_tools.testing import ScriptedPages, ScriptedSearch, brave_results, tavily_extract
from agentloop_tools.web import DomainPolicy, search, web_fetch
from agentloop_tools.web._faults import PAYWALL_TEXT, injected, web_faults
from agentloop_tools.web.backends import brave, tavily

pytestmark = pytest.mark.core

PAGE = "https://docs.python.org/3/whatsnew/3.13.html"
MOVED = "https://docs.python.org/3/whatsnew/index.html"
HTML = "<html><head><title>What's New</title></head><body><p>{}</p></body></html>"
POLICY = DomainPolicy.allow(["python.org"])
KEY = "brave-test-key-0123456789"


def fetched(pages: ScriptedPages, url: str = PAGE, **options: object) -> str:
    """What the model reads from one web_fetch call: the page, or the error text."""
    tool = web_fetch(**pages.tool_options(), policy=POLICY, **options)  # type: ignore[arg-type]
    try:
        result: str = tool.handler(None, url=url)
    except ToolError as error:
        return f"Error: {error}"
    return result


@pytest.mark.agentloop_06  # web_fetch needs agentloop 0.6's tool(timeout_seconds=)
@pytest.mark.parametrize(
    ("fault", "real"),
    [
        (403, (403, "", {})),
        (404, (404, "", {})),
        (429, (429, "", {})),
        (503, (503, "", {})),
        ("empty", (200, "", {"content-type": "text/plain; charset=utf-8"})),
        ("paywall", (200, PAYWALL_TEXT, {"content-type": "text/plain; charset=utf-8"})),
        (f"redirect:{MOVED}", (302, "", {"location": MOVED})),
    ],
)
def test_a_faulted_page_reads_as_the_real_answer_and_is_never_requested(
    fault: object, real: tuple[int, str, dict[str, str]]
) -> None:
    moved = {MOVED: HTML.format("The index of what changed. " * 20)}
    faulted = ScriptedPages(moved, faults={"docs.python.org/3/whatsnew/3.13.html": fault})
    served = ScriptedPages({**moved, PAGE: real})
    assert fetched(faulted) == fetched(served)
    # The faulted page reached no transport: only the redirect's target was requested.
    requested = [str(request.url) for request in faulted.requests]
    assert requested == ([MOVED] if str(fault).startswith("redirect:") else [])


@pytest.mark.agentloop_06  # web_fetch needs agentloop 0.6's tool(timeout_seconds=)
def test_a_faulted_timeout_reads_as_a_real_one_and_costs_no_wait() -> None:
    pages = ScriptedPages({}, faults={"docs.python.org": "timeout"})
    started = time.monotonic()
    text = fetched(pages, timeout=30)
    assert time.monotonic() - started < 2
    assert text == (
        f"Error: [timeout] {PAGE} did not answer within 30 s — try again later, or another source"
    )
    assert pages.requests == []


@pytest.mark.agentloop_06  # web_fetch needs agentloop 0.6's tool(timeout_seconds=)
def test_a_redirect_fault_is_a_hop_the_policy_judges() -> None:
    pages = ScriptedPages({}, faults={"docs.python.org": "redirect:https://evil.example/x"})
    text = fetched(pages)
    assert text.startswith("Error: [blocked-by-policy] the redirect to https://evil.example/x")
    assert pages.requests == []
    # A redirect that loops on itself stops at the hop limit, as a real one does.
    looping = ScriptedPages({}, faults={"docs.python.org": f"redirect:{PAGE}"})
    assert "redirected more than 5 times" in fetched(looping, cache_ttl=0)


@pytest.mark.agentloop_06  # web_fetch needs agentloop 0.6's tool(timeout_seconds=)
def test_only_matching_pages_fault_and_the_first_pattern_wins() -> None:
    pages = ScriptedPages(
        {"https://docs.python.org/3/library/re.html": HTML.format("Regular expressions. " * 20)},
        faults={"docs.python.org/3/whatsnew/*": 404, "docs.python.org/3/whatsnew/3.13.html": 503},
    )
    assert "answered 404" in fetched(pages)
    assert "Regular expressions." in fetched(pages, "https://docs.python.org/3/library/re.html")


@pytest.mark.agentloop_06  # web_fetch needs agentloop 0.6's tool(timeout_seconds=)
def test_injected_faults_reach_a_tool_built_without_them_and_end_with_the_block() -> None:
    pages = ScriptedPages({PAGE: HTML.format("The new REPL. " * 20)})
    tool = web_fetch(**pages.tool_options(), policy=POLICY)
    assert "The new REPL." in tool.handler(None, url=PAGE)  # cached from here on
    faults = web_faults({"docs.python.org": 403}, where="test")
    with injected(faults) as met, pytest.raises(ToolError, match="answered 403 Forbidden"):
        tool.handler(None, url=PAGE)  # the cache does not answer past the fault
    assert met == [{"tool": "web_fetch", "target": PAGE, "fault": "403"}]
    # Nor is the faulted answer kept: the page read before it is served again.
    assert "The new REPL." in tool.handler(None, url=PAGE)
    assert [str(request.url) for request in pages.requests] == [PAGE]


@pytest.mark.agentloop_06  # web_fetch needs agentloop 0.6's tool(timeout_seconds=)
def test_a_page_api_read_is_faulted_before_its_request_leaves() -> None:
    # via=: the page's URL travels inside the JSON body sent to the provider; the fault
    # is answered before that request is built, so the provider is never asked.
    api = ScriptedSearch("tavily", [tavily_extract([(MOVED, "The index. " * 20)])])
    tool = web_fetch(via=tavily("tvly-test-key-0123456789"), http_client=api.http_client())
    with injected(web_faults({"docs.python.org/3/whatsnew/3.13.html": 403}, where="t")):
        with pytest.raises(ToolError) as refused:
            tool.handler(None, url=PAGE)
        assert str(refused.value) == (
            f"[fetch-error] tavily could not read {PAGE}: the page answered HTTP 403 — "
            "do not retry this URL; use another source"
        )
        assert api.requests == []
    moved = web_faults({"docs.python.org/3/whatsnew/3.13.html": f"redirect:{MOVED}"}, where="t")
    with injected(moved):
        text = tool.handler(None, url=PAGE)
    assert text.startswith(f"[web_fetch] url: {MOVED}\n")
    assert [entry["urls"] for entry in api.sent()] == [[MOVED]]


@pytest.mark.parametrize(
    ("fault", "real"),
    [(403, (403, {})), (404, (404, {})), (429, (429, {})), (503, (503, {}))],
)
def test_a_faulted_search_reads_as_the_backend_failing_once(
    fault: int, real: tuple[int, dict[str, object]]
) -> None:
    hits = brave_results([(PAGE, "What's New In Python 3.13")])
    faulted = ScriptedSearch("brave", [hits], faults={"python": fault})
    served = ScriptedSearch("brave", [real])
    waits: list[float] = []
    got = search(
        brave(KEY), "Python 3.13 REPL", http_client=faulted.http_client(), sleep=waits.append
    )
    once = search(brave(KEY), "Python 3.13 REPL", http_client=served.http_client(), attempts=1)
    assert got.output == once.output
    assert faulted.requests == []  # no request,
    assert waits == []  # no retry, no backoff


def test_a_faulted_search_timeout_empty_and_paywall() -> None:
    waits: list[float] = []
    timeout = ScriptedSearch("brave", [], faults={re.compile(r"\bREPL\b"): "timeout"})
    started = time.monotonic()
    text = search(
        brave(KEY), "Python 3.13 REPL", http_client=timeout.http_client(), sleep=waits.append
    )
    assert time.monotonic() - started < 2
    assert waits == []
    assert timeout.requests == []
    assert text.output == (
        "Error: [search-failed] brave could not be reached after 1 attempt(s); the last "
        "failure was a timeout (ReadTimeout) — stop calling this tool for the rest of this "
        "turn and answer without it"
    )
    empty = ScriptedSearch("brave", [], faults={"python": "empty"})
    result = search(brave(KEY), "Python 3.13", http_client=empty.http_client())
    assert result.ok
    assert result.hits == ()
    assert result.output.splitlines()[1:] == ["0 results.", "Try a different query."]
    paywall = ScriptedSearch("brave", [], faults={"PYTHON": "paywall"})  # any case
    result = search(brave(KEY), "python 3.13", http_client=paywall.http_client())
    assert result.hits == ()
    assert "Subscribe to read" in result.output


def test_a_query_that_matches_no_pattern_is_sent() -> None:
    hits = brave_results([(PAGE, "What's New In Python 3.13")])
    scripted = ScriptedSearch("brave", [hits], faults={"rust": 503})
    result = search(brave(KEY), "Python 3.13", http_client=scripted.http_client())
    assert result.ok
    assert [hit.url for hit in result.hits] == [PAGE]


@pytest.mark.parametrize(
    ("pages", "searches", "message"),
    [
        ({"docs.python.org": 200}, None, r"200 is not an HTTP error status; use .*'paywall'"),
        ({"docs.python.org": "slow"}, None, r"'slow' is not a fault; use an HTTP error status"),
        ({"https://docs.python.org/": 403}, None, r"has a scheme"),
        ({"docs.python.org": "redirect:ftp://x.org/"}, None, r"needs an absolute http\(s\) URL"),
        ({"docs.python.org": "redirect:https://x.org/\nX: y"}, None, r"one absolute http\(s\) URL"),
        ({"a.org": "redirect:https://" + "a" * 3000 + ".org"}, None, r"at most 2048 characters"),
        (None, {"python": "redirect:https://x.org/"}, r"for pages only.*'empty' or 'paywall'"),
        (None, {"": 403}, r"1-500 printable characters"),
        (None, {"a\x1b[2J": 403}, r"printable characters"),
        (None, {"x" * 501: 403}, r"1-500 printable"),
        ({str(n) + ".org": 403 for n in range(101)}, None, r"at most 100 are read"),
    ],
)
def test_bad_faults_are_refused_naming_what_is_accepted(
    pages: object, searches: object, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        web_faults(pages, searches, where="@pytest.mark.web_faults on t")


def test_scripted_clients_refuse_bad_faults_at_once() -> None:
    with pytest.raises(ValueError, match=r"ScriptedPages\(faults=...\) pages\['python.org'\]"):
        ScriptedPages({}, faults={"python.org": True})
    with pytest.raises(TypeError, match=r"takes a mapping of pattern to FAULT"):
        ScriptedSearch("brave", [], faults=[("python", 403)])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"compiled pattern must be of str"):
        ScriptedSearch("brave", [], faults={re.compile(b"x"): 403})
