"""web_search driven by a real agentloop Agent; the public ScriptedSearch answers for the API."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import httpx
import pytest
from agentloop import Agent, Transcript
from agentloop.provider import StopReason
from agentloop.providers.fake import FakeClient
from agentloop.transcript import TextPart

from agentloop_tools.testing import (
    ScriptedSearch,
    brave_invalid_key,
    brave_quota_exhausted,
    brave_rate_limited,
    brave_results,
    exa_results,
    not_json,
    searxng_results,
    tavily_quota_exhausted,
    tavily_results,
    unauthorized,
)
from agentloop_tools.web import DomainPolicy, FatalToolError, sources, web_search
from agentloop_tools.web.backends import SearchBackend, brave, exa, searxng, tavily
from tests.search.helpers import (
    BRAVE_KEY,
    EXA_KEY,
    TAVILY_KEY,
    Clock,
    call,
    response,
    results,
    run_agent,
    scripted_tool,
)

# Hits as the public builders take them: (url, title, description).
PYTHON = (
    "https://docs.python.org/3/whatsnew/3.13.html",
    "What's New In Python 3.13",
    "The <strong>new</strong> REPL &quot;pyrepl&quot;",
)
EVIL = ("https://evil.example/python", "Evil", "evil <b>stuff</b>")
TOOL_USE = StopReason.TOOL_USE
REAL = ("https://realpython.com/python313-repl/", "Real Python", "A modern REPL")


# --- the tool as agentloop sees it -------------------------------------------------


def test_the_schema_is_strict_as_agentloop_sends_it() -> None:
    tool = web_search(brave(BRAVE_KEY))
    assert tool.name == "web_search"
    assert tool.parameters["additionalProperties"] is False
    assert tool.parameters["required"] == ["query", "count", "allowed_domains", "blocked_domains"]
    assert tool.parameters["properties"]["query"]["type"] == "string"
    assert tool.parameters["properties"]["count"]["type"] == ["integer", "null"]
    assert web_search(brave(BRAVE_KEY), name="research").name == "research"


def test_a_brave_search_reaches_the_model_cleaned_and_readable() -> None:
    script = ScriptedSearch("brave", [brave_results([PYTHON, REAL])])
    transcript = run_agent(scripted_tool(script), [call("python 3.13 repl", 3)])
    [result] = results(transcript)
    assert not result.is_error
    assert result.content.splitlines()[0] == "Web search results (agentloop-tools)"
    assert "Links:" in result.content
    assert "1. [What's New In Python 3.13](https://docs.python.org/3/whatsnew/3.13.html)" in (
        result.content
    )
    assert 'The new REPL "pyrepl"' in result.content
    assert "<strong>" not in result.content
    assert "&quot;" not in result.content
    assert "Cite the URLs" in result.content
    [request] = script.requests
    assert request.method == "GET"
    assert request.url.host == "api.search.brave.com"
    assert request.url.params["q"] == "python 3.13 repl"
    assert request.url.params["count"] == "3"
    assert request.headers["X-Subscription-Token"] == BRAVE_KEY
    assert [s.url for s in sources(transcript)] == [PYTHON[0], REAL[0]]


def test_the_pages_are_read_back_whatever_the_tool_is_called() -> None:
    script = ScriptedSearch("brave", [brave_results([PYTHON])])
    transcript = run_agent(scripted_tool(script, name="lookup"), [call("python", name="lookup")])
    assert [s.url for s in sources(transcript)] == [PYTHON[0]]
    saved = Transcript.model_validate_json(transcript.model_dump_json())
    assert [s.url for s in sources(saved)] == [PYTHON[0]]
    assert len(script.requests) == 1


@pytest.mark.parametrize(
    ("count", "sent"), [(None, "5"), (0, "1"), (-3, "1"), (7, "7"), (50, "20")]
)
def test_count_is_clamped_to_1_through_20(count: object, sent: str) -> None:
    script = ScriptedSearch("brave", [brave_results([PYTHON])])
    run_agent(scripted_tool(script), [call("python", count)])
    [request] = script.requests
    assert request.url.params["count"] == sent


@pytest.mark.parametrize("query", ["", " ", "a", "  b  ", None, 42])
def test_a_missing_query_sends_no_request(query: object) -> None:
    script = ScriptedSearch("brave", [])
    [result] = results(run_agent(scripted_tool(script), [call(query)]))
    assert result.is_error
    assert result.content.startswith("Error: [missing-query] ")
    assert " — " in result.content
    assert script.requests == []


# --- the domain policy -------------------------------------------------------------


def test_refused_hits_are_withheld_counted_and_never_shown() -> None:
    policy = DomainPolicy.allow(["python.org", "realpython.com"])
    sub_evil = ("https://sub.evil.example/", *EVIL[1:])
    script = ScriptedSearch("brave", [brave_results([EVIL, PYTHON, sub_evil, REAL])])
    transcript = run_agent(scripted_tool(script, policy=policy), [call("python", 10)])
    [result] = results(transcript)
    assert "evil.example" not in result.content
    assert "2 results withheld by the domain policy" in result.content
    assert [s.url for s in sources(transcript)] == [PYTHON[0], REAL[0]]
    assert policy.audit(transcript) == []
    assert len(script.requests) == 1


def test_links_inside_snippets_are_withheld_too() -> None:
    policy = DomainPolicy.allow(["python.org"])
    hit = (
        PYTHON[0],
        "Docs https://evil.example/t",
        "see https://evil.example/x or www.evil.example",
    )
    [result] = results(
        run_agent(
            scripted_tool(ScriptedSearch("brave", [brave_results([hit])]), policy=policy),
            [call("q1")],
        )
    )
    assert "evil.example" not in result.content
    assert "[link withheld by the domain policy]" in result.content


def test_audit_reports_what_an_unfiltered_tool_showed_and_what_the_model_asked() -> None:
    script = ScriptedSearch("brave", [brave_results([PYTHON, EVIL])])
    transcript = run_agent(
        scripted_tool(script), [call("site:evil.example python https://bad.example/x")]
    )
    policy = DomainPolicy.allow(["python.org"])
    found = {(v.where, v.url) for v in policy.audit(transcript)}
    assert ("tool-result", EVIL[0]) in found
    assert ("tool-call", "evil.example") in found
    assert ("tool-call", "https://bad.example/x") in found
    assert not any(v.url == PYTHON[0] for v in policy.audit(transcript))


def test_an_error_result_shows_no_pages() -> None:
    script = ScriptedSearch("brave", [(404, {"error": "nope"})])
    transcript = run_agent(scripted_tool(script), [call("python")])
    [result] = results(transcript)
    assert result.content.startswith("Error: [search-failed] brave failed (HTTP 404)")
    assert sources(transcript) == []
    assert len(script.requests) == 1


def test_tavily_gets_the_allowlist_pushed_down_and_the_filter_still_holds() -> None:
    policy = DomainPolicy.allow(["python.org", "docs.djangoproject.com/en"])
    body = tavily_results(
        [(EVIL[0], "Evil", "ignored the filter"), (PYTHON[0], "Py", "ok")], query="python"
    )
    script = ScriptedSearch("tavily", [body])
    tool = web_search(tavily(TAVILY_KEY), policy=policy, http_client=script.http_client())
    [result] = results(run_agent(tool, [call("python", 4)]))
    [request] = script.requests
    sent = json.loads(request.content)
    assert sent["include_domains"] == ["python.org", "docs.djangoproject.com"]
    assert sent["max_results"] == 4
    assert sent["query"] == "python"
    assert request.headers["Authorization"] == f"Bearer {TAVILY_KEY}"
    assert "evil.example" not in result.content
    assert "1 result withheld" in result.content


def test_exa_gets_a_blocklist_pushed_down_without_path_rules() -> None:
    policy = DomainPolicy.block(["evil.example", "example.com/private"])
    body = exa_results(
        [(PYTHON[0], "Py", "New REPL."), ("https://example.com/private/x", "Private")]
    )
    script = ScriptedSearch("exa", [body])
    tool = web_search(exa(EXA_KEY), policy=policy, http_client=script.http_client())
    [result] = results(run_agent(tool, [call("python")]))
    [request] = script.requests
    sent = json.loads(request.content)
    assert sent["excludeDomains"] == ["evil.example"]
    assert sent["numResults"] == 5
    assert request.headers["x-api-key"] == EXA_KEY
    # the date as Exa writes it, the public builder's 2024-10-07T00:00:00.000Z
    assert "New REPL. (published 2024-10-07T00:00:00.000Z)" in result.content
    assert "example.com/private" not in result.content


def test_searxng_results_are_cut_to_the_count() -> None:
    body = searxng_results([(f"https://site{i}.example/", f"T{i}", "c") for i in range(10)])
    script = ScriptedSearch("searxng", [body])
    tool = web_search(searxng("http://localhost:8080/"), http_client=script.http_client())
    [result] = results(run_agent(tool, [call("python", 3)]))
    [request] = script.requests
    assert str(request.url) == "http://localhost:8080/search?q=python&format=json&pageno=1"
    assert "3. [T2]" in result.content
    assert "T3" not in result.content


def test_odd_payloads_never_reach_the_model_as_a_traceback() -> None:
    body = {
        "web": {
            "results": [
                "a string",
                42,
                None,
                {"title": 5, "url": None},
                {"url": "javascript:alert(1)"},
                {"title": ["x"], "url": "https://ok.example/", "description": {"nested": True}},
            ]
        }
    }
    [result] = results(
        run_agent(scripted_tool(ScriptedSearch("brave", [(200, body)])), [call("python")])
    )
    assert not result.is_error
    assert "1. [https://ok.example/](https://ok.example/)" in result.content
    assert "2 results without a usable http(s) URL skipped" in result.content
    # Bodies as written on the wire: JSON that is not an object, or not Brave's shape, or no
    # JSON at all (a str body is sent as it is).
    odds = ["[]", '{"web": null}', '{"web": {"results": "x"}}', '"text"', "text"]
    for odd in odds:
        [result] = results(
            run_agent(scripted_tool(ScriptedSearch("brave", [(200, odd)])), [call("python")])
        )
        assert result.content.startswith(("Web search results", "Error: [search-failed]"))


# --- failures the model can act on -------------------------------------------------


@pytest.mark.parametrize("status", [400, 422])
def test_a_rejected_query_tells_the_model_to_shorten_it(status: int) -> None:
    script = ScriptedSearch(
        "brave", [(status, {"error": {"detail": "Unable to validate request parameter(s)."}})]
    )
    [result] = results(run_agent(scripted_tool(script), [call("python")]))
    assert result.content.startswith("Error: [query-rejected] brave rejected the query")
    assert "Unable to validate" in result.content
    assert "shorten" in result.content
    assert len(script.requests) == 1


def test_a_too_long_query_is_refused_before_sending() -> None:
    script = ScriptedSearch("brave", [])
    [result] = results(run_agent(scripted_tool(script), [call("x" * 401)]))
    assert result.content.startswith("Error: [query-rejected]")
    assert script.requests == []


# ScriptedSearch labels every body application/json unless told otherwise; a captive
# portal labels its page text/html. Neither label changes how the body is read.
@pytest.mark.parametrize("headers", [{}, {"content-type": "text/html; charset=utf-8"}])
def test_a_non_json_200_is_an_unparseable_response(headers: dict[str, str]) -> None:
    script = ScriptedSearch("brave", [(*not_json(), headers)])
    [result] = results(run_agent(scripted_tool(script), [call("python")]))
    assert result.content.startswith("Error: [search-failed]")
    assert "unparseable response (HTTP 200)" in result.content
    assert len(script.requests) == 1  # a 200 that is not JSON is not retried


def test_other_4xx_is_search_failed_without_retry() -> None:
    script = ScriptedSearch("brave", [(404, "not found")])
    [result] = results(run_agent(scripted_tool(script), [call("python")]))
    assert result.content.startswith("Error: [search-failed] brave failed (HTTP 404)")
    assert "stop calling this tool" in result.content
    assert len(script.requests) == 1


def test_retries_end_with_the_last_failure_named() -> None:
    clock = Clock()
    script = ScriptedSearch("brave", [(503, "down")] * 3)
    tool = scripted_tool(script, clock=clock, attempts=3)
    [result] = results(run_agent(tool, [call("python")]))
    assert result.content.startswith(
        "Error: [search-failed] brave failed (HTTP 503, after 3 attempt(s))"
    )
    assert "stop calling this tool for the rest of this turn" in result.content
    assert len(script.requests) == 3


def test_transport_errors_are_retried_then_reported() -> None:
    timeout = httpx.ReadTimeout("slow")
    script = ScriptedSearch("brave", [timeout, httpx.ConnectError("refused"), timeout])
    clock = Clock()
    tool = scripted_tool(script, clock=clock, attempts=3)
    [result] = results(run_agent(tool, [call("python")]))
    assert result.content.startswith("Error: [search-failed] brave could not be reached after 3")
    assert "a timeout (ReadTimeout)" in result.content
    assert len(script.requests) == 3


def test_a_429_with_retry_after_then_200_waits_as_asked() -> None:
    script = ScriptedSearch("brave", [brave_rate_limited(retry_after=2), brave_results([PYTHON])])
    clock = Clock()
    tool = scripted_tool(script, brave(BRAVE_KEY, requests_per_second=None), clock=clock)
    [result] = results(run_agent(tool, [call("python")]))
    assert not result.is_error
    assert clock.waits == [2.0]
    assert len(script.requests) == 2


def test_retry_after_is_capped_and_an_http_date_is_honoured() -> None:
    later = format_datetime(datetime.now(UTC) + timedelta(hours=1), usegmt=True)
    past = format_datetime(datetime.now(UTC) - timedelta(hours=1), usegmt=True)
    script = ScriptedSearch(
        "brave",
        [
            (503, "", {"Retry-After": "3600"}),
            (503, "", {"Retry-After": later}),
            (503, "", {"Retry-After": past}),
            brave_results([PYTHON]),
        ],
    )
    clock = Clock()
    tool = scripted_tool(
        script, brave(BRAVE_KEY, requests_per_second=None), clock=clock, backoff_cap=7.5
    )
    [result] = results(run_agent(tool, [call("python")]))
    assert not result.is_error
    assert clock.waits == [7.5, 7.5, 0.0]
    assert len(script.requests) == 4


def test_backoff_is_full_jitter_under_the_cap() -> None:
    script = ScriptedSearch("brave", [(500, "")] * 6)
    clock = Clock()
    tool = scripted_tool(
        script, brave(BRAVE_KEY, requests_per_second=None), clock=clock, backoff_cap=3.0
    )
    [result] = results(run_agent(tool, [call("python")]))
    assert len(script.requests) == 6
    assert len(clock.waits) == 5
    assert all(0 <= wait <= 3.0 for wait in clock.waits)
    assert result.content.startswith("Error: [search-failed]")


def test_a_429_that_persists_is_rate_limited() -> None:
    script = ScriptedSearch("brave", [brave_rate_limited()] * 2)
    clock = Clock()
    tool = scripted_tool(script, clock=clock, attempts=2)
    [result] = results(run_agent(tool, [call("python")]))
    assert result.content.startswith("Error: [rate-limited] brave is still rate limiting after 2")
    assert clock.waits == [1.0]  # the Retry-After of brave_rate_limited(), between the two
    assert len(script.requests) == 2


# --- fatal failures ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("backend", "reply", "code"),
    [
        ("brave", brave_quota_exhausted(), "quota-exceeded"),
        ("brave", (401, brave_invalid_key()[1]), "not-configured"),
        ("brave", brave_invalid_key(), "not-configured"),
        ("tavily", tavily_quota_exhausted(432), "quota-exceeded"),
        ("tavily", tavily_quota_exhausted(433), "quota-exceeded"),
        ("tavily", unauthorized(401), "not-configured"),
        ("exa", unauthorized(403), "not-configured"),
    ],
)
def test_a_fatal_failure_is_told_once_and_repeated_without_a_request(
    backend: str, reply: tuple[int, Any], code: str
) -> None:
    made: dict[str, Callable[[], SearchBackend]] = {
        "brave": lambda: brave(BRAVE_KEY),
        "tavily": lambda: tavily(TAVILY_KEY),
        "exa": lambda: exa(EXA_KEY),
    }
    script = ScriptedSearch(backend, [reply])
    clock = Clock()
    tool = scripted_tool(script, made[backend](), clock=clock)
    first, second, third = results(
        run_agent(tool, [call("python", n=1)], [call("again", n=2), call("more", n=3)])
    )
    assert first.content.startswith(f"Error: [{code}] ")
    assert "do not call this tool again" in first.content
    assert second.content == first.content == third.content
    assert len(script.requests) == 1
    assert clock.waits == []  # a quota is not retried


def test_on_fatal_raise_ends_the_conversation_with_an_exception_the_application_catches() -> None:
    script = ScriptedSearch("brave", [(401, brave_invalid_key()[1])])
    tool = web_search(brave(BRAVE_KEY), http_client=script.http_client(), on_fatal="raise")
    agent = Agent(
        [tool],
        client=FakeClient(
            response(call("python"), stop=TOOL_USE), response(TextPart(text="never"))
        ),
    )
    caught: list[BaseException] = []

    def application() -> None:
        try:
            agent.run("Research this.")
        except Exception as exc:  # what a handler written for ordinary errors catches
            caught.append(exc)

    with pytest.raises(FatalToolError) as raised:
        application()
    assert caught == []
    assert raised.value.code == "not-configured"
    assert raised.value.tool == "web_search"
    assert BRAVE_KEY not in str(raised.value)
    assert len(script.requests) == 1


def test_on_fatal_raise_also_stops_parallel_calls() -> None:
    script = ScriptedSearch("brave", [(402, {"error": "payment required"})] * 3)
    tool = web_search(
        brave(BRAVE_KEY, requests_per_second=None),
        http_client=script.http_client(),
        on_fatal="raise",
    )
    agent = Agent(
        [tool],
        client=FakeClient(
            response(call("a1", n=1), call("b2", n=2), call("c3", n=3), stop=TOOL_USE)
        ),
    )
    with pytest.raises(FatalToolError, match=r"\[quota-exceeded\]"):
        agent.run("Research this.")


# --- rate, keys, construction ------------------------------------------------------


def test_parallel_calls_are_spaced_to_the_backend_rate() -> None:
    class Frozen:  # time stands still: only the reservations space the calls
        def __init__(self) -> None:
            self.waits: list[float] = []
            self.lock = threading.Lock()

        def __call__(self) -> float:
            return 50.0

        def sleep(self, seconds: float) -> None:
            with self.lock:
                self.waits.append(seconds)

    frozen = Frozen()
    script = ScriptedSearch("brave", [brave_results([PYTHON])] * 4)
    tool = web_search(
        brave(BRAVE_KEY, requests_per_second=2),
        http_client=script.http_client(),
        sleep=frozen.sleep,
        clock=frozen,
    )
    transcript = run_agent(tool, [call(f"q{n}", n=n) for n in range(4)])
    assert not any(r.is_error for r in results(transcript))
    assert sorted(frozen.waits) == [0.5, 1.0, 1.5]
    assert len(script.requests) == 4


def test_keys_never_reach_output_errors_logs_or_transcripts(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    echo = {"error": {"detail": f"bad token {BRAVE_KEY} for you"}}
    leaky = (PYTHON[0], "t " + BRAVE_KEY, BRAVE_KEY)
    script = ScriptedSearch("brave", [(400, echo), brave_results([leaky]), (503, "")])
    tool = scripted_tool(script, attempts=1)
    transcript = run_agent(tool, [call("one1", n=1)], [call("two2", n=2)], [call("three", n=3)])
    assert BRAVE_KEY not in transcript.model_dump_json()
    assert "***" in transcript.model_dump_json()
    assert len(script.requests) == 3
    ours = [r for r in caplog.records if r.name.startswith("agentloop_tools")]
    assert ours  # the 503 was logged
    assert not any(BRAVE_KEY in record.getMessage() for record in ours)
    for backend in (brave(BRAVE_KEY), tavily(TAVILY_KEY), exa(EXA_KEY)):
        assert "secret" not in repr(backend)


@pytest.mark.parametrize(
    ("build", "variable"),
    [
        (lambda: brave(""), "BRAVE_API_KEY"),
        (lambda: brave("   "), "BRAVE_API_KEY"),
        (lambda: brave(None), "BRAVE_API_KEY"),  # type: ignore[arg-type]
        (lambda: tavily(None), "TAVILY_API_KEY"),  # type: ignore[arg-type]
        (lambda: tavily(""), "TAVILY_API_KEY"),
        (lambda: exa(""), "EXA_API_KEY"),
        (lambda: searxng(""), "SEARXNG_URL"),
    ],
)
def test_an_empty_key_fails_at_construction_naming_the_variable(
    build: object, variable: str
) -> None:
    with pytest.raises(ValueError, match=variable):
        build()  # type: ignore[operator]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_results": 0}, "max_results=0"),
        ({"max_results": 21}, "max_results=21"),
        ({"attempts": 0}, "attempts=0"),
        ({"backoff_cap": -1}, "backoff_cap=-1"),
        ({"on_fatal": "ignore"}, "on_fatal='ignore'"),
        ({"name": "web search"}, "name='web search'"),
    ],
)
def test_bad_options_are_refused_by_name(options: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        web_search(brave(BRAVE_KEY), **options)  # type: ignore[arg-type]


def test_a_backend_that_is_not_one_is_refused() -> None:
    with pytest.raises(TypeError, match="search backend"):
        web_search("brave")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="country"):
        brave(BRAVE_KEY, country="USA")
    with pytest.raises(ValueError, match="depth"):
        tavily(TAVILY_KEY, depth="deep")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="query or fragment"):
        searxng("http://localhost:8080/?x=1")
    with pytest.raises(ValueError, match="credentials") as raised:
        searxng("http://admin:hunter22@localhost:8080/")
    assert "hunter22" not in str(raised.value)


def test_redirects_are_not_followed_with_the_key() -> None:
    script = ScriptedSearch("brave", [(302, "", {"Location": "https://elsewhere.example/"})])
    [result] = results(run_agent(scripted_tool(script), [call("python")]))
    assert result.content.startswith("Error: [search-failed] brave failed (HTTP 302)")
    assert len(script.requests) == 1


def test_a_replay_harness_can_skip_the_waits_by_replacing_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The hook the pytest plugin uses in replay, as it does for agentloop.retry."""
    from agentloop_tools.web._search import _tool as _client_search

    waits: list[float] = []

    class NoSleep:
        @staticmethod
        def sleep(seconds: float) -> None:
            waits.append(seconds)

    monkeypatch.setattr(_client_search, "time", NoSleep)
    script = ScriptedSearch(
        "brave", [brave_rate_limited(retry_after=30), brave_results([PYTHON])] * 2
    )
    tool = web_search(brave(BRAVE_KEY), http_client=script.http_client())  # default sleep and clock
    transcript = run_agent(tool, [call("one1", n=1), call("two2", n=2)])
    assert not any(result.is_error for result in results(transcript))
    assert 30.0 in waits
    assert len(script.requests) == 4


def test_a_body_that_cannot_be_decoded_is_not_retried() -> None:
    script = ScriptedSearch("brave", [(200, "not gzip at all", {"Content-Encoding": "gzip"})])
    [result] = results(run_agent(scripted_tool(script), [call("python")]))
    assert result.content.startswith("Error: [search-failed] brave could not be reached after 1")
    assert "could not be decoded (DecodingError)" in result.content
    assert len(script.requests) == 1


def test_urls_and_titles_read_back_exactly_as_the_backend_gave_them() -> None:
    wiki = "https://en.wikipedia.org/wiki/Python_(programming_language)"
    odd_title = "Python [language] \\ (the one](https://evil.example/) you know)"
    script = ScriptedSearch(
        "brave", [brave_results([(wiki, odd_title, "s"), ("https://a.example/x?y=1&z=(2", "T")])]
    )
    transcript = run_agent(scripted_tool(script), [call("python")])
    found = sources(transcript)
    # An unbalanced "(" would end the markdown link elsewhere: it is percent-encoded.
    assert [s.url for s in found] == [wiki, "https://a.example/x?y=1&z=%282"]
    assert found[0].title == odd_title
    assert len(script.requests) == 1
