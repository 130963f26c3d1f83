"""web_search driven by a real agentloop Agent, with the search API on an httpx.MockTransport."""

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
from agentloop.tooling import ToolSpec
from agentloop.transcript import TextPart

from agentloop_tools.web import DomainPolicy, FatalToolError, sources, web_search
from agentloop_tools.web.backends import SearchBackend, brave, exa, searxng, tavily
from tests.search.helpers import (
    BRAVE_KEY,
    EXA_KEY,
    TAVILY_KEY,
    Api,
    Clock,
    brave_body,
    call,
    response,
    results,
    run_agent,
)

PYTHON = (
    "What's New In Python 3.13",
    "https://docs.python.org/3/whatsnew/3.13.html",
    "The <strong>new</strong> REPL &quot;pyrepl&quot;",
)
EVIL = ("Evil", "https://evil.example/python", "evil <b>stuff</b>")
TOOL_USE = StopReason.TOOL_USE
REAL = ("Real Python", "https://realpython.com/python313-repl/", "A modern REPL")


def brave_tool(api: Api, **options: Any) -> ToolSpec:
    clock = Clock()
    options.setdefault("sleep", clock.sleep)
    options.setdefault("clock", clock)
    return web_search(brave(BRAVE_KEY), http_client=api.client(), **options)


# --- the tool as agentloop sees it -------------------------------------------------


def test_the_schema_is_strict_as_agentloop_sends_it() -> None:
    tool = web_search(brave(BRAVE_KEY))
    assert tool.name == "web_search"
    assert tool.parameters["additionalProperties"] is False
    assert tool.parameters["required"] == ["query", "count"]
    assert tool.parameters["properties"]["query"]["type"] == "string"
    assert tool.parameters["properties"]["count"]["type"] == ["integer", "null"]
    assert web_search(brave(BRAVE_KEY), name="research").name == "research"


def test_a_brave_search_reaches_the_model_cleaned_and_readable() -> None:
    api = Api([(200, brave_body(PYTHON, REAL))])
    transcript = run_agent(brave_tool(api), [call("python 3.13 repl", 3)])
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
    [request] = api.requests
    assert request.method == "GET"
    assert request.url.host == "api.search.brave.com"
    assert request.url.params["q"] == "python 3.13 repl"
    assert request.url.params["count"] == "3"
    assert request.headers["X-Subscription-Token"] == BRAVE_KEY
    assert [s.url for s in sources(transcript)] == [PYTHON[1], REAL[1]]


def test_the_pages_are_read_back_whatever_the_tool_is_called() -> None:
    api = Api([(200, brave_body(PYTHON))])
    transcript = run_agent(brave_tool(api, name="lookup"), [call("python", name="lookup")])
    assert [s.url for s in sources(transcript)] == [PYTHON[1]]
    saved = Transcript.model_validate_json(transcript.model_dump_json())
    assert [s.url for s in sources(saved)] == [PYTHON[1]]


@pytest.mark.parametrize(
    ("count", "sent"), [(None, "5"), (0, "1"), (-3, "1"), (7, "7"), (50, "20")]
)
def test_count_is_clamped_to_1_through_20(count: object, sent: str) -> None:
    api = Api([(200, brave_body(PYTHON))])
    run_agent(brave_tool(api), [call("python", count)])
    assert api.requests[0].url.params["count"] == sent


@pytest.mark.parametrize("query", ["", " ", "a", "  b  ", None, 42])
def test_a_missing_query_sends_no_request(query: object) -> None:
    api = Api([])
    [result] = results(run_agent(brave_tool(api), [call(query)]))
    assert result.is_error
    assert result.content.startswith("Error: [missing-query] ")
    assert " — " in result.content
    assert api.requests == []


# --- the domain policy -------------------------------------------------------------


def test_refused_hits_are_withheld_counted_and_never_shown() -> None:
    policy = DomainPolicy.allow(["python.org", "realpython.com"])
    api = Api(
        [
            (
                200,
                brave_body(EVIL, PYTHON, (*EVIL[:1], "https://sub.evil.example/", *EVIL[2:]), REAL),
            )
        ]
    )
    transcript = run_agent(brave_tool(api, policy=policy), [call("python", 10)])
    [result] = results(transcript)
    assert "evil.example" not in result.content
    assert "2 results withheld by the domain policy" in result.content
    assert [s.url for s in sources(transcript)] == [PYTHON[1], REAL[1]]
    assert policy.audit(transcript) == []


def test_links_inside_snippets_are_withheld_too() -> None:
    policy = DomainPolicy.allow(["python.org"])
    hit = (
        "Docs https://evil.example/t",
        PYTHON[1],
        "see https://evil.example/x or www.evil.example",
    )
    [result] = results(
        run_agent(brave_tool(Api([(200, brave_body(hit))]), policy=policy), [call("q1")])
    )
    assert "evil.example" not in result.content
    assert "[link withheld by the domain policy]" in result.content


def test_audit_reports_what_an_unfiltered_tool_showed_and_what_the_model_asked() -> None:
    api = Api([(200, brave_body(PYTHON, EVIL))])
    transcript = run_agent(
        brave_tool(api), [call("site:evil.example python https://bad.example/x")]
    )
    policy = DomainPolicy.allow(["python.org"])
    found = {(v.where, v.url) for v in policy.audit(transcript)}
    assert ("tool-result", EVIL[1]) in found
    assert ("tool-call", "evil.example") in found
    assert ("tool-call", "https://bad.example/x") in found
    assert not any(v.url == PYTHON[1] for v in policy.audit(transcript))


def test_an_error_result_shows_no_pages() -> None:
    api = Api([(404, {"error": "nope"})])
    transcript = run_agent(brave_tool(api), [call("python")])
    assert sources(transcript) == []


def test_tavily_gets_the_allowlist_pushed_down_and_the_filter_still_holds() -> None:
    policy = DomainPolicy.allow(["python.org", "docs.djangoproject.com/en"])
    body = {
        "query": "q",
        "results": [
            {"title": "Evil", "url": EVIL[1], "content": "ignored the filter", "score": 0.9},
            {"title": "Py", "url": PYTHON[1], "content": "ok", "score": 0.8},
        ],
        "response_time": 0.5,
    }
    api = Api([(200, body)])
    tool = web_search(tavily(TAVILY_KEY), policy=policy, http_client=api.client())
    [result] = results(run_agent(tool, [call("python", 4)]))
    sent = json.loads(api.requests[0].content)
    assert sent["include_domains"] == ["python.org", "docs.djangoproject.com"]
    assert sent["max_results"] == 4
    assert sent["query"] == "python"
    assert api.requests[0].headers["Authorization"] == f"Bearer {TAVILY_KEY}"
    assert "evil.example" not in result.content
    assert "1 result withheld" in result.content


def test_exa_gets_a_blocklist_pushed_down_without_path_rules() -> None:
    policy = DomainPolicy.block(["evil.example", "example.com/private"])
    body = {
        "requestId": "r",
        "results": [
            {
                "id": "1",
                "url": PYTHON[1],
                "title": "Py",
                "publishedDate": "2024-10-07",
                "highlights": ["New REPL."],
            },
            {"id": "2", "url": "https://example.com/private/x", "title": "Private"},
        ],
    }
    api = Api([(200, body)])
    tool = web_search(exa(EXA_KEY), policy=policy, http_client=api.client())
    [result] = results(run_agent(tool, [call("python")]))
    sent = json.loads(api.requests[0].content)
    assert sent["excludeDomains"] == ["evil.example"]
    assert sent["numResults"] == 5
    assert api.requests[0].headers["x-api-key"] == EXA_KEY
    assert "New REPL. (published 2024-10-07)" in result.content
    assert "example.com/private" not in result.content


def test_searxng_results_are_cut_to_the_count() -> None:
    body = {
        "query": "q",
        "results": [
            {"url": f"https://site{i}.example/", "title": f"T{i}", "content": "c", "engine": "ddg"}
            for i in range(10)
        ],
    }
    api = Api([(200, body)])
    tool = web_search(searxng("http://localhost:8080/"), http_client=api.client())
    [result] = results(run_agent(tool, [call("python", 3)]))
    assert str(api.requests[0].url) == "http://localhost:8080/search?q=python&format=json&pageno=1"
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
    [result] = results(run_agent(brave_tool(Api([(200, body)])), [call("python")]))
    assert not result.is_error
    assert "1. [https://ok.example/](https://ok.example/)" in result.content
    assert "2 results without a usable http(s) URL skipped" in result.content
    odds: list[object] = [[], {"web": None}, {"web": {"results": "x"}}, "text"]
    for odd in odds:
        [result] = results(run_agent(brave_tool(Api([(200, odd)])), [call("python")]))
        assert result.content.startswith(("Web search results", "Error: [search-failed]"))


# --- failures the model can act on -------------------------------------------------


@pytest.mark.parametrize("status", [400, 422])
def test_a_rejected_query_tells_the_model_to_shorten_it(status: int) -> None:
    api = Api([(status, {"error": {"detail": "Unable to validate request parameter(s)."}})])
    [result] = results(run_agent(brave_tool(api), [call("python")]))
    assert result.content.startswith("Error: [query-rejected] brave rejected the query")
    assert "Unable to validate" in result.content
    assert "shorten" in result.content
    assert len(api.requests) == 1


def test_a_too_long_query_is_refused_before_sending() -> None:
    api = Api([])
    [result] = results(run_agent(brave_tool(api), [call("x" * 401)]))
    assert result.content.startswith("Error: [query-rejected]")
    assert api.requests == []


def test_a_non_json_200_is_an_unparseable_response() -> None:
    api = Api([(200, "<html>captcha</html>")])
    [result] = results(run_agent(brave_tool(api), [call("python")]))
    assert result.content.startswith("Error: [search-failed]")
    assert "unparseable response (HTTP 200)" in result.content


def test_other_4xx_is_search_failed_without_retry() -> None:
    api = Api([(404, "not found")])
    [result] = results(run_agent(brave_tool(api), [call("python")]))
    assert result.content.startswith("Error: [search-failed] brave failed (HTTP 404)")
    assert "stop calling this tool" in result.content
    assert len(api.requests) == 1


def test_retries_end_with_the_last_failure_named() -> None:
    clock = Clock()
    api = Api([(503, "down")] * 3)
    tool = web_search(
        brave(BRAVE_KEY), attempts=3, http_client=api.client(), sleep=clock.sleep, clock=clock
    )
    [result] = results(run_agent(tool, [call("python")]))
    assert result.content.startswith(
        "Error: [search-failed] brave failed (HTTP 503, after 3 attempt(s))"
    )
    assert "stop calling this tool for the rest of this turn" in result.content
    assert len(api.requests) == 3


def test_transport_errors_are_retried_then_reported() -> None:
    timeout = httpx.ReadTimeout("slow")
    api = Api([timeout, httpx.ConnectError("refused"), timeout])
    clock = Clock()
    tool = web_search(
        brave(BRAVE_KEY), attempts=3, http_client=api.client(), sleep=clock.sleep, clock=clock
    )
    [result] = results(run_agent(tool, [call("python")]))
    assert result.content.startswith("Error: [search-failed] brave could not be reached after 3")
    assert "a timeout (ReadTimeout)" in result.content


def test_a_429_with_retry_after_then_200_waits_as_asked() -> None:
    api = Api(
        [
            (429, {"error": {"code": "RATE_LIMITED"}}, {"Retry-After": "2"}),
            (200, brave_body(PYTHON)),
        ]
    )
    clock = Clock()
    tool = web_search(
        brave(BRAVE_KEY, requests_per_second=None),
        http_client=api.client(),
        sleep=clock.sleep,
        clock=clock,
    )
    [result] = results(run_agent(tool, [call("python")]))
    assert not result.is_error
    assert clock.waits == [2.0]


def test_retry_after_is_capped_and_an_http_date_is_honoured() -> None:
    later = format_datetime(datetime.now(UTC) + timedelta(hours=1), usegmt=True)
    past = format_datetime(datetime.now(UTC) - timedelta(hours=1), usegmt=True)
    api = Api(
        [
            (503, "", {"Retry-After": "3600"}),
            (503, "", {"Retry-After": later}),
            (503, "", {"Retry-After": past}),
            (200, brave_body(PYTHON)),
        ]
    )
    clock = Clock()
    tool = web_search(
        brave(BRAVE_KEY, requests_per_second=None),
        backoff_cap=7.5,
        http_client=api.client(),
        sleep=clock.sleep,
        clock=clock,
    )
    [result] = results(run_agent(tool, [call("python")]))
    assert not result.is_error
    assert clock.waits == [7.5, 7.5, 0.0]


def test_backoff_is_full_jitter_under_the_cap() -> None:
    api = Api([(500, "")] * 6)
    clock = Clock()
    tool = web_search(
        brave(BRAVE_KEY, requests_per_second=None),
        backoff_cap=3.0,
        http_client=api.client(),
        sleep=clock.sleep,
        clock=clock,
    )
    [result] = results(run_agent(tool, [call("python")]))
    assert len(api.requests) == 6
    assert len(clock.waits) == 5
    assert all(0 <= wait <= 3.0 for wait in clock.waits)
    assert result.content.startswith("Error: [search-failed]")


def test_a_429_that_persists_is_rate_limited() -> None:
    api = Api([(429, {"error": {"code": "RATE_LIMITED"}})] * 2)
    clock = Clock()
    tool = web_search(
        brave(BRAVE_KEY), attempts=2, http_client=api.client(), sleep=clock.sleep, clock=clock
    )
    [result] = results(run_agent(tool, [call("python")]))
    assert result.content.startswith("Error: [rate-limited] brave is still rate limiting after 2")


# --- fatal failures ----------------------------------------------------------------

BRAVE_QUOTA = {
    "type": "ErrorResponse",
    "error": {
        "id": "x",
        "status": 429,
        "code": "RATE_LIMITED",
        "detail": "Request rate limit exceeded for plan.",
        "meta": {
            "plan": "Free",
            "rate_limit": 1,
            "rate_current": 1,
            "quota_limit": 2000,
            "quota_current": 2000,
        },
    },
}


@pytest.mark.parametrize(
    ("backend", "reply", "code"),
    [
        ("brave", (429, BRAVE_QUOTA), "quota-exceeded"),
        ("brave", (401, {"error": {"code": "SUBSCRIPTION_TOKEN_INVALID"}}), "not-configured"),
        ("brave", (422, {"error": {"code": "SUBSCRIPTION_TOKEN_INVALID"}}), "not-configured"),
        ("tavily", (432, {"detail": {"error": "plan limit"}}), "quota-exceeded"),
        ("tavily", (433, {"detail": {"error": "pay-as-you-go limit"}}), "quota-exceeded"),
        ("tavily", (401, {"detail": {"error": "Unauthorized"}}), "not-configured"),
        ("exa", (403, {"error": "bad key"}), "not-configured"),
    ],
)
def test_a_fatal_failure_is_told_once_and_repeated_without_a_request(
    backend: str, reply: tuple[int, object], code: str
) -> None:
    made: dict[str, Callable[[], SearchBackend]] = {
        "brave": lambda: brave(BRAVE_KEY),
        "tavily": lambda: tavily(TAVILY_KEY),
        "exa": lambda: exa(EXA_KEY),
    }
    api = Api([reply])
    clock = Clock()
    tool = web_search(made[backend](), http_client=api.client(), sleep=clock.sleep, clock=clock)
    first, second, third = results(
        run_agent(tool, [call("python", n=1)], [call("again", n=2), call("more", n=3)])
    )
    assert first.content.startswith(f"Error: [{code}] ")
    assert "do not call this tool again" in first.content
    assert second.content == first.content == third.content
    assert len(api.requests) == 1
    assert clock.waits == []  # a quota is not retried


def test_on_fatal_raise_ends_the_conversation_with_an_exception_the_application_catches() -> None:
    api = Api([(401, {"error": {"code": "SUBSCRIPTION_TOKEN_INVALID"}})])
    tool = web_search(brave(BRAVE_KEY), http_client=api.client(), on_fatal="raise")
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


def test_on_fatal_raise_also_stops_parallel_calls() -> None:
    api = Api([(402, {"error": "payment required"})] * 3)
    tool = web_search(
        brave(BRAVE_KEY, requests_per_second=None), http_client=api.client(), on_fatal="raise"
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
    api = Api([(200, brave_body(PYTHON))] * 4)
    tool = web_search(
        brave(BRAVE_KEY, requests_per_second=2),
        http_client=api.client(),
        sleep=frozen.sleep,
        clock=frozen,
    )
    transcript = run_agent(tool, [call(f"q{n}", n=n) for n in range(4)])
    assert not any(r.is_error for r in results(transcript))
    assert sorted(frozen.waits) == [0.5, 1.0, 1.5]


def test_keys_never_reach_output_errors_logs_or_transcripts(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    echo = {"error": {"detail": f"bad token {BRAVE_KEY} for you"}}
    api = Api([(400, echo), (200, brave_body(("t " + BRAVE_KEY, PYTHON[1], BRAVE_KEY))), (503, "")])
    tool = brave_tool(api, attempts=1)
    transcript = run_agent(tool, [call("one1", n=1)], [call("two2", n=2)], [call("three", n=3)])
    assert BRAVE_KEY not in transcript.model_dump_json()
    assert "***" in transcript.model_dump_json()
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
    api = Api([(302, "", {"Location": "https://elsewhere.example/"})])
    [result] = results(run_agent(brave_tool(api), [call("python")]))
    assert result.content.startswith("Error: [search-failed] brave failed (HTTP 302)")
    assert len(api.requests) == 1


def test_a_replay_harness_can_skip_the_waits_by_replacing_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The hook the pytest plugin uses in replay, as it does for agentloop.retry."""
    from agentloop_tools.web import _client_search

    waits: list[float] = []

    class NoSleep:
        @staticmethod
        def sleep(seconds: float) -> None:
            waits.append(seconds)

    monkeypatch.setattr(_client_search, "time", NoSleep)
    api = Api([(429, {}, {"Retry-After": "30"}), (200, brave_body(PYTHON))] * 2)
    tool = web_search(brave(BRAVE_KEY), http_client=api.client())  # default sleep and clock
    transcript = run_agent(tool, [call("one1", n=1), call("two2", n=2)])
    assert not any(result.is_error for result in results(transcript))
    assert 30.0 in waits


def test_a_body_that_cannot_be_decoded_is_not_retried() -> None:
    api = Api([(200, "not gzip at all", {"Content-Encoding": "gzip"})])
    [result] = results(run_agent(brave_tool(api), [call("python")]))
    assert result.content.startswith("Error: [search-failed] brave could not be reached after 1")
    assert "could not be decoded (DecodingError)" in result.content
    assert len(api.requests) == 1


def test_urls_and_titles_read_back_exactly_as_the_backend_gave_them() -> None:
    wiki = "https://en.wikipedia.org/wiki/Python_(programming_language)"
    odd_title = "Python [language] \\ (the one](https://evil.example/) you know)"
    api = Api(
        [(200, brave_body((odd_title, wiki, "s"), ("T", "https://a.example/x?y=1&z=(2", "")))]
    )
    transcript = run_agent(brave_tool(api), [call("python")])
    found = sources(transcript)
    assert [s.url for s in found] == [wiki, "https://a.example/x?y=1&z=(2"]
    assert found[0].title == odd_title
