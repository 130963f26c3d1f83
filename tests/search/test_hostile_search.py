"""web_search against hostile loopback servers: every answer is a coded, bounded result.

Each shape runs under the watchdog (``tests/hostile.py``): a hang or a memory
blow-up fails the test instead of stalling the run. Nothing here asserts speed
(benchmarks/ does); the bounds asserted are the documented ones, with slack.
"""

from __future__ import annotations

import dataclasses
import json
import zlib

import pytest

from agentloop_tools.web import web_search
from agentloop_tools.web._search._responses import retry_after
from agentloop_tools.web.backends import brave, searxng
from tests.hostile import answer, bounded, raw_server
from tests.search.helpers import BRAVE_KEY, call, results, run_agent

# The client-side tools (web_fetch, web_search) are built on agentloop 0.6 tools.
pytestmark = [pytest.mark.core, pytest.mark.agentloop_06]


def _search(base: str, **options: object) -> str:
    """One call of web_search on a Brave backend at ``base``, through a real Agent."""
    backend = dataclasses.replace(
        brave(BRAVE_KEY), endpoint=f"{base}/res", requests_per_second=None
    )
    tool = web_search(backend, sleep=lambda seconds: None, **options)  # type: ignore[arg-type]
    [result] = results(run_agent(tool, [call("python news")]))
    return result.content


def _coded(content: str, code: str) -> None:
    assert content.startswith(f"Error: [{code}] "), content


@pytest.mark.parametrize("value", ["²", "9" * 400, "9" * 5000, "١٢", "1e9", "-5", "Tue, 99 Foo"])
def test_an_unusable_retry_after_is_treated_as_absent(value: str) -> None:
    assert retry_after(value) is None


@pytest.mark.parametrize("value", ["²", "9" * 400, "9" * 5000])
def test_a_429_with_an_unusable_retry_after_ends_rate_limited_not_crashed(value: str) -> None:
    body = b'{"error": {"code": "RATE_LIMITED"}}'
    with raw_server(answer(body, "429 Too Many Requests", Retry_After=value)) as server:
        content = bounded(lambda: _search(server.base, attempts=2))
    _coded(content, "rate-limited")
    assert len(server.requests) == 2


@pytest.mark.parametrize("status", ["200 OK", "500 Internal Server Error", "400 Bad Request"])
def test_json_nested_deeper_than_the_parser_goes_is_a_coded_error(status: str) -> None:
    with raw_server(answer(b"[" * 100_000, status, Content_Type="application/json")) as server:
        content = bounded(lambda: _search(server.base, attempts=1))
    _coded(content, "query-rejected" if status.startswith("400") else "search-failed")


def test_a_body_over_max_bytes_is_refused_and_not_retried() -> None:
    body = json.dumps({"web": {"results": [{"title": "x" * 5000}] * 100}}).encode()
    with raw_server(answer(body, Content_Type="application/json")) as server:
        content = bounded(lambda: _search(server.base, attempts=3, max_bytes=100_000))
    _coded(content, "search-failed")
    assert "over 100,000 bytes" in content
    assert len(server.requests) == 1


def test_a_small_gzip_answer_is_read() -> None:
    payload = {
        "web": {"results": [{"title": "Hit", "url": "https://a.example/x", "description": "d"}]}
    }
    body = zlib.compress(json.dumps(payload).encode(), 9, wbits=16 + zlib.MAX_WBITS)
    respond = answer(body, Content_Type="application/json", Content_Encoding="gzip")
    with raw_server(respond) as server:
        content = bounded(lambda: _search(server.base))
    assert "1. [Hit](https://a.example/x)" in content


@pytest.mark.parametrize(
    "payload",
    [
        {"error": {"detail": "a" * 190 + " " + BRAVE_KEY}},
        {"message": "b" * 195 + BRAVE_KEY},
    ],
    ids=["error-detail", "message"],
)
def test_a_key_echoed_in_an_error_is_masked_before_the_message_is_cut(payload: object) -> None:
    respond = answer(json.dumps(payload).encode(), "400 Bad Request")
    with raw_server(respond) as server:
        content = bounded(lambda: _search(server.base))
    _coded(content, "query-rejected")
    assert BRAVE_KEY[:6] not in content
    assert "***" in content


def test_a_key_echoed_in_a_title_or_snippet_is_masked_before_it_is_cut() -> None:
    hit = {
        "title": "t" * 190 + BRAVE_KEY,
        "url": "https://a.example/",
        "description": "s" * 480 + BRAVE_KEY,
    }
    body = json.dumps({"web": {"results": [hit]}}).encode()
    with raw_server(answer(body, Content_Type="application/json")) as server:
        content = bounded(lambda: _search(server.base))
    assert "1. [" in content
    assert BRAVE_KEY[:6] not in content
    assert content.count("***") == 2


def test_searxng_on_loopback_reads_through_the_default_client() -> None:
    payload = {"results": [{"title": "S", "url": "https://s.example/", "content": "c"}]}
    with raw_server(
        answer(json.dumps(payload).encode(), Content_Type="application/json")
    ) as server:
        tool = web_search(searxng(server.base), sleep=lambda seconds: None)
        [result] = bounded(lambda: results(run_agent(tool, [call("python news")])))
    assert "1. [S](https://s.example/)" in result.content


@pytest.mark.parametrize(
    ("option", "value"),
    [("deadline", 0), ("deadline", 601), ("deadline", True), ("max_bytes", 10), ("max_bytes", 1.5)],
)
def test_the_bounds_are_validated(option: str, value: object) -> None:
    with pytest.raises(ValueError, match=f"web_search\\({option}="):
        web_search(brave(BRAVE_KEY), **{option: value})  # type: ignore[arg-type]


@pytest.mark.parametrize("location", ["data:,x", "http:\\\\host\\", "https://ok.example/next"])
def test_a_redirect_is_a_coded_error_whatever_its_location(location: str) -> None:
    respond = answer(b"", "302 Found", Location=location)
    with raw_server(respond) as server:
        content = bounded(lambda: _search(server.base, attempts=2))
    _coded(content, "search-failed")
