"""Reading the body: by type, capped, by a deadline, cached and paged."""

from __future__ import annotations

import http.server
import json
import time
import tracemalloc
from typing import Any

import httpx
import pytest
from agentloop import ToolSpec
from agentloop.transcript import ToolResultPart

from agentloop_tools.web import web_fetch
from tests.fetch.helpers import (
    Recorder,
    converse,
    fetch_once,
    html_page,
    local_server,
    public_resolver,
    results,
    turn,
)
from tests.fetch.pdfs import tiny_pdf

ARTICLE = (
    "<script>window.tracker = 'SCRIPT-MARKER';</script><style>.x{color:red}</style>"
    "<nav><a href='/'>Home</a><a href='/about'>NAV-MARKER About us</a></nav>"
    "<header>HEADER-MARKER Site name</header>"
    "<main><article><h1>Tides of the North Sea</h1>"
    + "".join(
        f"<p>Paragraph {n}: the tide rises twice a day along the coast, and the "
        f"harbour masters publish tables for every port in the region.</p>"
        for n in range(12)
    )
    + "</article></main><footer>FOOTER-MARKER Copyright</footer>"
)


def _tool(recorder: Recorder, **options: Any) -> ToolSpec:
    return web_fetch(http_client=recorder.client(), resolver=public_resolver, **options)


def test_html_gives_title_final_url_and_main_text_without_scripts_or_navigation() -> None:
    recorder = Recorder(lambda request: html_page(ARTICLE, title="Tides &amp; ports"))
    result = fetch_once(_tool(recorder), "https://tides.example/north-sea")
    assert not result.is_error, result.content
    head, text = result.content.split("\n\n", 1)
    assert head.splitlines()[:2] == [
        "[web_fetch] url: https://tides.example/north-sea",
        "[web_fetch] title: Tides & ports",
    ]
    assert "Paragraph 11: the tide rises twice a day" in text
    for marker in ("SCRIPT-MARKER", "NAV-MARKER", "color:red", "FOOTER-MARKER", "HEADER-MARKER"):
        assert marker not in result.content
    [request] = recorder.requests
    assert request.headers["user-agent"].startswith("agentloop-tools-web_fetch/")


def test_the_basic_reader_also_drops_scripts_and_navigation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agentloop_tools.web._fetch import _extract

    monkeypatch.setattr(_extract, "_has", lambda module: False)
    recorder = Recorder(lambda request: html_page(ARTICLE))
    result = fetch_once(_tool(recorder), "https://tides.example/")
    assert "Paragraph 11" in result.content
    assert "[web_fetch] note: plain HTML reading; install based-models-agentloop-tools[fetch]" in (
        result.content
    )
    for marker in ("SCRIPT-MARKER", "NAV-MARKER", "color:red", "FOOTER-MARKER"):
        assert marker not in result.content


def test_without_the_extra_a_pdf_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentloop_tools.web._fetch import _extract

    monkeypatch.setattr(_extract, "_has", lambda module: False)
    recorder = Recorder(
        lambda r: httpx.Response(
            200, headers={"content-type": "application/pdf"}, content=tiny_pdf(["x"])
        )
    )
    result = fetch_once(_tool(recorder), "https://files.example/r.pdf")
    assert result.content.startswith("Error: [unsupported-content] ")
    assert "based-models-agentloop-tools[fetch]" in result.content


def test_a_pdf_is_read_as_text_not_returned_as_binary() -> None:
    pdf = tiny_pdf(["Quarterly results", "Revenue grew 12 percent"], title="Q3 report")
    recorder = Recorder(
        lambda r: httpx.Response(200, headers={"content-type": "application/pdf"}, content=pdf)
    )
    result = fetch_once(_tool(recorder), "https://files.example/q3.pdf")
    assert not result.is_error, result.content
    assert "[web_fetch] title: Q3 report" in result.content
    assert result.content.endswith("Quarterly results\nRevenue grew 12 percent")
    assert "%PDF" not in result.content


def test_a_pdf_sent_as_octet_stream_is_sniffed() -> None:
    pdf = tiny_pdf(["Sniffed by its first bytes"])
    recorder = Recorder(lambda r: httpx.Response(200, content=pdf))
    result = fetch_once(_tool(recorder), "https://files.example/download?id=3")
    assert "Sniffed by its first bytes" in result.content


def test_a_broken_pdf_is_a_clear_error() -> None:
    recorder = Recorder(
        lambda r: httpx.Response(
            200, headers={"content-type": "application/pdf"}, content=b"%PDF-1.4\ngarbage"
        )
    )
    result = fetch_once(_tool(recorder), "https://files.example/bad.pdf")
    assert result.is_error
    assert result.content.startswith(("Error: [unsupported-content] ", "Error: [no-text] "))


def test_a_pdf_over_the_byte_cap_is_too_large_without_reading_it() -> None:
    pdf = tiny_pdf(["x"])
    recorder = Recorder(
        lambda r: httpx.Response(
            200,
            headers={"content-type": "application/pdf", "content-length": str(len(pdf))},
            content=pdf,
        )
    )
    result = fetch_once(_tool(recorder, max_bytes=100), "https://files.example/big.pdf")
    assert result.content.startswith("Error: [too-large] "), result.content


def test_an_image_is_unsupported_content() -> None:
    png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64
    recorder = Recorder(
        lambda r: httpx.Response(200, headers={"content-type": "image/png"}, content=png)
    )
    result = fetch_once(_tool(recorder), "https://img.example/cat.png")
    assert result.content.startswith("Error: [unsupported-content] https://img.example/cat.png ")
    assert "image/png" in result.content


def test_binary_without_a_type_is_unsupported_content() -> None:
    recorder = Recorder(lambda r: httpx.Response(200, content=b"\x00\x01\x02binary" * 10))
    result = fetch_once(_tool(recorder), "https://img.example/blob")
    assert result.content.startswith("Error: [unsupported-content] ")


def test_text_and_json_come_back_as_they_are() -> None:
    document = {"name": "tides", "ports": ["Hull", "Bergen"]}

    def respond(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith(".json"):
            return httpx.Response(200, json=document)
        return httpx.Response(
            200,
            headers={"content-type": "text/plain; charset=latin-1"},
            content="Côte".encode("latin-1"),
        )

    recorder = Recorder(respond)
    tool = _tool(recorder)
    json_result = fetch_once(tool, "https://api.example/data.json")
    assert json.loads(json_result.content.split("\n\n", 1)[1]) == document
    text_result = fetch_once(tool, "https://api.example/notes.txt")
    assert text_result.content.endswith("\n\nCôte")


def test_a_javascript_only_page_is_no_text_not_success() -> None:
    shell = (
        "<div id='root'></div><noscript>You need to enable JavaScript to run this app."
        "</noscript><script src='/app.js'></script>"
    )
    recorder = Recorder(lambda r: html_page(shell, title="App"))
    result = fetch_once(_tool(recorder), "https://spa.example/")
    assert result.content.startswith("Error: [no-text] https://spa.example/ ")
    assert "JavaScript" in result.content


@pytest.mark.parametrize(
    ("status", "hint"),
    [(404, "do not retry"), (410, "do not retry"), (403, "not public"), (503, "retry later")],
)
def test_an_http_error_names_the_status(status: int, hint: str) -> None:
    recorder = Recorder(lambda r: html_page("<p>nope</p>", status=status))
    result = fetch_once(_tool(recorder), "https://gone.example/page")
    assert result.content.startswith(
        f"Error: [fetch-error] https://gone.example/page answered {status}"
    )
    assert hint in result.content


def test_paging_with_start_reads_the_cached_document_without_a_new_request() -> None:
    words = " ".join(f"w{n:04d}" for n in range(2000))  # 11,999 characters
    recorder = Recorder(
        lambda r: httpx.Response(200, headers={"content-type": "text/plain"}, text=words)
    )
    tool = _tool(recorder, max_chars=4000)
    url = "https://long.example/doc"
    transcript = converse(
        tool,
        turn({"url": url}),
        turn({"url": url, "start": 4000}),
        turn({"url": url, "start": 8000}),
        turn({"url": url, "start": 20000}),
    )
    first, second, third, past = results(transcript)
    assert first.content.endswith(
        "[truncated: 7,999 more characters; call web_fetch again with the same url "
        "and start=4000 to continue]"
    )
    assert "[web_fetch] characters: 4000-8000 of 11999" in second.content
    assert "start=8000" in second.content
    assert "[web_fetch] characters: 8000-11999 of 11999" in third.content
    assert "[truncated" not in third.content

    def body(part: ToolResultPart) -> str:
        return part.content.split("\n\n", 1)[1].split("\n\n[truncated")[0]

    assert body(first) + body(second) + body(third) == words
    assert past.content.startswith("Error: [invalid-start] start=20000 is past the end")
    assert len(recorder.requests) == 1


def test_a_cache_hit_sends_no_request_and_expires() -> None:
    recorder = Recorder()
    tool = _tool(recorder, cache_ttl=0.3)
    first = fetch_once(tool, "https://cache.example/a")
    again = fetch_once(tool, "https://CACHE.example:443/a#section")
    assert again.content == first.content
    assert len(recorder.requests) == 1
    time.sleep(0.35)
    fetch_once(tool, "https://cache.example/a")
    assert len(recorder.requests) == 2
    no_cache = _tool(recorder, cache_ttl=0)
    fetch_once(no_cache, "https://cache.example/a")
    fetch_once(no_cache, "https://cache.example/a")
    assert len(recorder.requests) == 4


def test_a_50_mb_streamed_body_is_cut_at_max_bytes_in_bounded_memory_and_time() -> None:
    chunk = b"x" * 65_536
    sent = []

    def serve(handler: http.server.BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("content-type", "text/plain")  # no Content-Length
        handler.end_headers()
        try:
            for _ in range(50_000_000 // len(chunk)):
                handler.wfile.write(chunk)
                sent.append(len(chunk))
        except OSError:
            return  # the tool hung up: that is the point

    with local_server(serve) as (base, _hits):
        tool = web_fetch(allow_private_networks=True, max_bytes=1_000_000, max_chars=100)
        tracemalloc.start()
        began = time.monotonic()
        result = fetch_once(tool, f"{base}/huge")
        elapsed = time.monotonic() - began
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert not result.is_error, result.content
    assert "characters: 0-100 of 1000000" in result.content
    assert "larger than 1,000,000 bytes" in result.content
    assert elapsed < 5
    assert peak < 20_000_000
    assert sum(sent) < 50_000_000


SMALL = (
    "<header>HEADER-MARKER</header><nav><a href='/'>NAV-MARKER</a></nav>"
    "<div role='navigation'>ROLE-MARKER</div><script>SCRIPT-MARKER()</script>"
    "<style>p{STYLE-MARKER:1}</style><p>Hello from a short page.</p><footer>FOOTER-MARKER</footer>"
)


@pytest.mark.parametrize("installed", [{"trafilatura", "selectolax"}, {"selectolax"}, set()])
def test_a_short_page_loses_its_chrome_with_every_reader(
    installed: set[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentloop_tools.web._fetch import _extract

    monkeypatch.setattr(_extract, "_has", lambda module: module in installed)
    recorder = Recorder(lambda request: html_page(SMALL, title="Short"))
    result = fetch_once(_tool(recorder), "https://short.example/")
    assert result.content.endswith("\n\nHello from a short page."), result.content
    assert "-MARKER" not in result.content
