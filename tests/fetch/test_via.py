"""web_fetch(via=tavily(key) | exa(key)): pages read through a search API, checked as ours."""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml

from agentloop_tools.testing import ScriptedSearch, exa_contents, tavily_extract, unauthorized
from agentloop_tools.web import DomainPolicy, sources, web_fetch
from agentloop_tools.web.backends import brave, exa, tavily
from tests.fetch.helpers import converse, results, turn

TAVILY_KEY = "tvly-test-secret-0123456789"
EXA_KEY = "exa-test-secret-0123456789"
PAGE = "https://docs.python.org/3/tutorial/controlflow.html"
TEXT = "# More Control Flow Tools\n\nThe match statement takes an expression. " * 5
POLICY = DomainPolicy.allow(["python.org"])


def via_tavily(script: ScriptedSearch, **options: Any) -> Any:
    return web_fetch(via=tavily(TAVILY_KEY), http_client=script.http_client(), **options)


def test_tavily_extract_reads_the_page_with_the_same_result_shape() -> None:
    script = ScriptedSearch("tavily", [tavily_extract([(PAGE, TEXT)])])
    transcript = converse(via_tavily(script, policy=POLICY), turn({"url": PAGE}))
    [result] = results(transcript)
    assert not result.is_error
    assert result.content.startswith(f"[web_fetch] url: {PAGE}\n")
    assert "[web_fetch] note: read through the tavily API" in result.content
    assert "The match statement" in result.content
    [sent] = script.sent()
    assert sent["path"] == "/extract"
    assert sent["urls"] == [PAGE]
    assert sent["extract_depth"] == "basic"
    assert script.requests[0].headers["authorization"] == f"Bearer {TAVILY_KEY}"
    assert [s.url for s in sources(transcript)] == [PAGE]
    assert TAVILY_KEY not in str(transcript.messages)


def test_exa_contents_reads_the_page_and_its_title() -> None:
    script = ScriptedSearch("exa", [exa_contents([(PAGE, "Control Flow", TEXT)])])
    tool = web_fetch(via=exa(EXA_KEY), http_client=script.http_client(), max_bytes=50_000)
    [result] = results(converse(tool, turn({"url": PAGE})))
    assert result.content.startswith(f"[web_fetch] url: {PAGE}\n[web_fetch] title: Control Flow\n")
    [sent] = script.sent()
    assert sent["path"] == "/contents"
    assert sent["ids"] == [PAGE]
    assert sent["text"]["maxCharacters"] == 50_000
    assert script.requests[0].headers["x-api-key"] == EXA_KEY


@pytest.mark.parametrize(
    ("url", "code"),
    [
        ("https://evil.example/x", "blocked-by-policy"),
        ("http://127.0.0.1/admin", "blocked-address"),
        ("http://169.254.169.254/latest/meta-data/", "blocked-address"),
        ("file:///etc/passwd", "unsupported-scheme"),
        ("https://user:pw@docs.python.org/", "userinfo-not-allowed"),
        ("https://intranet/", "hostname-too-shallow"),
    ],
)
def test_checks_run_before_any_request_to_the_provider(url: str, code: str) -> None:
    script = ScriptedSearch("tavily", [tavily_extract([(url, TEXT)])])
    policy = DomainPolicy.block(["evil.example"])
    [result] = results(converse(via_tavily(script, policy=policy), turn({"url": url})))
    assert result.is_error
    assert result.content.startswith(f"Error: [{code}] ")
    assert script.requests == []


def test_the_provider_final_url_is_checked_and_recorded_as_a_hop() -> None:
    moved = "https://evil.example/copy"
    script = ScriptedSearch("tavily", [tavily_extract([(moved, TEXT)])])
    transcript = converse(via_tavily(script, policy=POLICY), turn({"url": PAGE}))
    [result] = results(transcript)
    assert result.content.startswith("Error: [blocked-by-policy] the redirect to ")
    assert result.content.endswith(f"\n[web_fetch] redirect: {moved}")
    assert "The match statement" not in result.content
    assert [(v.where, v.url) for v in POLICY.audit(transcript)] == [("redirect", moved)]


def test_a_permitted_final_url_is_the_page_url() -> None:
    final = "https://docs.python.org/3.13/tutorial/controlflow.html"
    script = ScriptedSearch("tavily", [tavily_extract([(final, TEXT)])])
    [result] = results(converse(via_tavily(script, policy=POLICY), turn({"url": PAGE})))
    assert result.content.startswith(f"[web_fetch] url: {final}\n")


def test_paging_and_the_cache_serve_later_parts_without_a_request() -> None:
    script = ScriptedSearch("tavily", [tavily_extract([(PAGE, TEXT)])])
    tool = via_tavily(script, max_chars=100)
    first, second = results(converse(tool, turn({"url": PAGE}), turn({"url": PAGE, "start": 100})))
    assert "call web_fetch again with the same url and start=100" in first.content
    assert "[web_fetch] characters: 100-200 of" in second.content
    assert len(script.requests) == 1


@pytest.mark.parametrize(
    ("reply", "said"),
    [
        (tavily_extract([], failed=[(PAGE, "Failed to fetch url")]), "Failed to fetch url"),
        ((200, {"results": []}), "no result for the URL"),
        ((200, "<html>captive portal</html>"), "unparseable answer"),
        ((500, {"detail": {"error": "boom"}}), "may be temporary"),
        ((432, {"detail": {"error": "plan limit"}}), "quota is used up"),
    ],
)
def test_provider_failures_are_fetch_errors(reply: Any, said: str) -> None:
    script = ScriptedSearch("tavily", [reply])
    [result] = results(converse(via_tavily(script), turn({"url": PAGE})))
    assert result.is_error
    assert result.content.startswith("Error: [fetch-error] ")
    assert said in result.content


def test_exa_crawl_errors_are_fetch_errors() -> None:
    script = ScriptedSearch("exa", [exa_contents([], errors=[(PAGE, "CRAWL_NOT_FOUND", 404)])])
    tool = web_fetch(via=exa(EXA_KEY), http_client=script.http_client())
    [result] = results(converse(tool, turn({"url": PAGE})))
    assert result.content.startswith("Error: [fetch-error] exa could not read ")
    assert "CRAWL_NOT_FOUND (HTTP 404)" in result.content


def test_a_rejected_key_is_never_echoed() -> None:
    status, _ = unauthorized(401)
    script = ScriptedSearch("tavily", [(status, {"detail": {"error": f"bad key {TAVILY_KEY}"}})])
    [result] = results(converse(via_tavily(script), turn({"url": PAGE})))
    assert result.content.startswith("Error: [fetch-error] tavily rejected the credentials")
    assert "TAVILY_API_KEY" in result.content
    assert TAVILY_KEY not in result.content


def test_empty_text_is_no_text() -> None:
    script = ScriptedSearch("tavily", [tavily_extract([(PAGE, "  ")])])
    [result] = results(converse(via_tavily(script), turn({"url": PAGE})))
    assert result.content.startswith("Error: [no-text] ")


def test_bad_via_options_fail_when_built() -> None:
    with pytest.raises(TypeError, match="Brave and SearXNG have no page API"):
        # A type checker refuses it too (via is a PageApi, tavily or exa): this is the runtime.
        web_fetch(via=brave("BSA-test-secret-0123456789"))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="respect_robots"):
        web_fetch(via=tavily(TAVILY_KEY), respect_robots=True)
    with pytest.raises(ValueError, match="resolver"):
        web_fetch(via=tavily(TAVILY_KEY), resolver=lambda host: ["93.184.215.14"])


RECORD = """
import pytest
from agentloop_tools.testing import ScriptedSearch, tavily_extract
from agentloop_tools.web import web_fetch
from agentloop_tools.web.backends import tavily

KEY = "tvly-test-secret-0123456789"


@pytest.mark.vcr
def test_fetch(agentloop_evidence):
    page = tavily_extract([("https://docs.python.org/3/", "Docs " * 50)])
    script = ScriptedSearch("tavily", [page])
    tool = web_fetch(via=tavily(KEY), http_client=script.http_client())
    assert "Docs" in tool.handler(None, url="https://docs.python.org/3/", start=None)
"""

REPLAY = """
import pytest
from agentloop_tools.web import web_fetch
from agentloop_tools.web.backends import tavily


@pytest.mark.vcr
def test_fetch(agentloop_evidence):
    tool = web_fetch(via=tavily("tvly-another-key-9876543210"))
    text = tool.handler(None, url="https://docs.python.org/3/", start=None)
    assert text.startswith("[web_fetch] url: https://docs.python.org/3/\\n")
"""


def test_a_page_read_through_tavily_records_without_the_key_and_replays(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CI", raising=False)
    pytester.makepyfile(test_fetch=RECORD)
    pytester.runpytest("--record-mode=once").assert_outcomes(passed=1)
    cassette = Path(pytester.path, "cassettes", "test_fetch", "test_fetch.yaml")
    text = cassette.read_text()
    assert TAVILY_KEY not in text
    [interaction] = yaml.safe_load(text)["interactions"]
    assert interaction["request"]["uri"] == "https://api.tavily.com/extract"
    pytester.makepyfile(test_fetch=REPLAY)
    pytester.runpytest().assert_outcomes(passed=1)


class _Extract(http.server.BaseHTTPRequestHandler):
    delay: ClassVar[float] = 0.0
    seen: ClassVar[list[dict[str, Any]]]

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        type(self).seen.append({"path": self.path, "auth": self.headers["authorization"], **body})
        time.sleep(type(self).delay)
        answer = json.dumps({"results": [{"url": body["urls"][0], "raw_content": TEXT}]})
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer.encode())

    def log_message(self, format: str, *args: Any) -> None:
        return


@contextmanager
def extract_server(delay: float) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    seen: list[dict[str, Any]] = []
    handler = type("Extract", (_Extract,), {"delay": delay, "seen": seen})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/extract", seen
    finally:
        server.shutdown()
        server.server_close()


def test_the_default_client_reads_from_a_loopback_page_api() -> None:
    with extract_server(delay=0) as (endpoint, seen):
        backend = replace(tavily(TAVILY_KEY), extract_endpoint=endpoint)
        [result] = results(converse(web_fetch(via=backend), turn({"url": PAGE})))
    assert result.content.startswith(f"[web_fetch] url: {PAGE}\n")
    assert seen == [
        {
            "path": "/extract",
            "auth": f"Bearer {TAVILY_KEY}",
            "urls": [PAGE],
            "extract_depth": "basic",
            "format": "markdown",
        }
    ]


def test_a_page_api_slower_than_the_timeout_is_a_timeout() -> None:
    with extract_server(delay=3.0) as (endpoint, _):
        backend = replace(tavily(TAVILY_KEY), extract_endpoint=endpoint)
        started = time.monotonic()
        [result] = results(converse(web_fetch(via=backend, timeout=0.5), turn({"url": PAGE})))
        took = time.monotonic() - started
    assert result.content.startswith("Error: [timeout] the tavily page API did not answer")
    assert took < 2.5
