"""web_fetch against hostile loopback servers and bytes: a coded, bounded, audited result.

Every shape runs under the watchdog (``tests/hostile.py``): a hang or a memory
blow-up fails the test instead of stalling the run. No speed is asserted here.
"""

from __future__ import annotations

import logging
import os
import socket
import textwrap
import time
from pathlib import Path

import httpx
import pytest

from agentloop_tools.web import DomainPolicy, web_fetch
from agentloop_tools.web._fetch import _extract
from agentloop_tools.web._transcript._fetch_format import reached
from tests.fetch.helpers import (
    Recorder,
    converse,
    fetch_once,
    html_page,
    public_resolver,
    turn,
)
from tests.fetch.pdfs import deep_tree_pdf, one_page_pdf, pdf_of, shared_stream_pdf, stream
from tests.hostile import bounded, head, raw_server
from tests.transcripts import results

# The client-side tools (web_fetch, web_search) are built on agentloop 0.6 tools.
pytestmark = [pytest.mark.core, pytest.mark.agentloop_06]

TEXT = b"<p>" + b"Readable words on a hostile page. " * 20 + b"</p>"


def _fetch(url: str, **options: object) -> str:
    """One web_fetch call through a real Agent, on loopback (private networks allowed)."""
    options.setdefault("allow_private_networks", True)
    tool = web_fetch(**options)  # type: ignore[arg-type]
    return fetch_once(tool, url).content


def _routes(table: dict[str, bytes | None]) -> object:
    """A raw responder by path; None closes the connection without a word."""

    def respond(connection: socket.socket, line: str) -> None:
        path = line.split(" ")[1]
        reply = table.get(path, head("404 Not Found", {"Content-Length": "0"}))
        if reply is not None:
            connection.sendall(reply)

    return respond


def _redirect(location: str) -> bytes:
    return head("302 Found", {"Location": location, "Content-Length": "0"})


def _page(body: bytes = TEXT, content_type: str = "text/html") -> bytes:
    return head(headers={"Content-Type": content_type, "Content-Length": str(len(body))}) + body


# --- every URL requested is recorded ------------------------------------------------


def test_robots_txt_and_its_redirect_hops_are_in_the_header() -> None:
    routes = {"/robots.txt": _redirect("/robots-2.txt"), "/robots-2.txt": _page(b"", "text/plain")}
    routes["/page"] = _page()
    with raw_server(_routes(routes)) as server:  # type: ignore[arg-type]
        content = bounded(lambda: _fetch(f"{server.base}/page", respect_robots=True))
    head_lines = content.split("\n\n", 1)[0].splitlines()
    assert f"[web_fetch] robots: {server.base}/robots.txt" in head_lines
    assert f"[web_fetch] robots: {server.base}/robots-2.txt" in head_lines
    assert [line.split(" ")[1] for line in server.requests] == [
        "/robots.txt",
        "/robots-2.txt",
        "/page",
    ]


def test_a_failure_after_robots_txt_redirected_records_its_hops() -> None:
    routes = {
        "/robots.txt": _redirect("/elsewhere.txt"),
        "/elsewhere.txt": _page(b"", "text/plain"),
    }
    with raw_server(_routes(routes)) as server:  # type: ignore[arg-type]
        content = bounded(lambda: _fetch(f"{server.base}/missing", respect_robots=True))
    assert content.startswith("Error: [fetch-error] ")
    assert f"\n[web_fetch] robots: {server.base}/elsewhere.txt" in content


@pytest.mark.parametrize("location", ["data:,x", "http:\\\\host\\", "http://[::1"])
def test_a_redirect_httpx_cannot_read_is_coded_and_keeps_the_hops_requested(
    location: str,
) -> None:
    routes = {"/start": _redirect("/middle"), "/middle": _redirect(location)}
    with raw_server(_routes(routes)) as server:  # type: ignore[arg-type]
        content = bounded(lambda: _fetch(f"{server.base}/start"))
    assert content.startswith("Error: [fetch-error] "), content
    assert content.endswith(f"\n[web_fetch] redirect: {server.base}/middle")


def test_a_crash_under_a_custom_name_still_carries_the_urls_requested() -> None:
    def respond(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/start":
            return httpx.Response(302, headers={"location": "https://b.example/next"})
        raise RuntimeError("a library failed on hostile bytes")

    client = httpx.Client(transport=httpx.MockTransport(respond))
    tool = web_fetch(name="reader", http_client=client, resolver=public_resolver)
    transcript = bounded(
        lambda: converse(tool, turn({"url": "https://a.example/start", "tool": "reader"}))
    )
    [result] = results(transcript)
    assert result.content.startswith("Error: [fetch-error] ")
    assert "RuntimeError" in result.content
    found = [entry for entries in reached(transcript.messages).values() for entry in entries]
    # (A crash is no refusal: both were requested.)
    assert ("tool-call", "https://a.example/start", False) in found
    assert ("redirect", "https://b.example/next", False) in found
    audit = DomainPolicy.allow(["c.example"]).audit(transcript)
    assert {(v.where, v.url) for v in audit} >= {
        ("tool-call", "https://a.example/start"),
        ("redirect", "https://b.example/next"),
    }


# --- robots.txt ----------------------------------------------------------------------


@pytest.mark.parametrize("shape", ["closed", "reset-after-headers"])
def test_an_unreachable_robots_txt_is_disallowed_by_robots(shape: str) -> None:
    robots = None if shape == "closed" else head(headers={"Content-Length": "100"}) + b"User"
    with raw_server(_routes({"/robots.txt": robots, "/page": _page()})) as server:  # type: ignore[arg-type]
        content = bounded(lambda: _fetch(f"{server.base}/page", respect_robots=True))
    assert content.startswith("Error: [disallowed-by-robots] "), content
    assert "could not be read" in content


def test_a_path_allowlist_with_robots_reads_robots_txt_at_the_host() -> None:
    def respond(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/robots.txt":
            return httpx.Response(200, text="User-agent: *\nDisallow: /docs/private\n")
        return html_page("<p>" + "Guide text. " * 40 + "</p>", title="Guide")

    recorder = Recorder(respond)
    policy = DomainPolicy.allow(["docs.example/guide"])
    tool = web_fetch(
        policy=policy, respect_robots=True, http_client=recorder.client(), resolver=public_resolver
    )
    transcript = converse(tool, turn({"url": "https://docs.example/guide/start"}))
    [result] = results(transcript)
    assert result.content.startswith("[web_fetch] url: https://docs.example/guide/start")
    assert "[web_fetch] robots: https://docs.example/robots.txt" in result.content
    assert recorder.urls == ["https://docs.example/robots.txt", "https://docs.example/guide/start"]
    # The audit judges a robots.txt by its host, as the tool does: no violation.
    assert policy.audit(transcript) == []
    # A robots.txt at a host the allowlist does not name is still a violation.
    assert [v.where for v in DomainPolicy.allow(["other.example"]).audit(transcript)].count(
        "robots"
    ) == 1


# --- replay applies the live checks ----------------------------------------------------

_CASSETTE = """\
interactions:
- request:
    body: null
    headers: {{}}
    method: GET
    uri: {uri}
  response:
    body:
      string: '<html><head><title>secret</title></head><body><p>{text}</p></body></html>'
    headers:
      content-type:
      - text/html
    status:
      code: 200
      message: OK
version: 1
"""


@pytest.mark.parametrize(
    "uri",
    [
        "http://169.254.169.254/latest/meta-data/iam/",
        "http://127.0.0.1:2375/containers/json",
        "http://[::ffff:127.0.0.1]/",
        "http://0x7f.1/admin",
    ],
)
def test_replay_refuses_the_address_literals_the_live_tool_refuses(
    pytester: pytest.Pytester, uri: str
) -> None:
    cassette = Path(pytester.path, "cassettes", "test_replay", "test_fetch.yaml")
    cassette.parent.mkdir(parents=True)
    normalised = {"http://0x7f.1/admin": "http://127.0.0.1/admin"}.get(uri, uri)
    cassette.write_text(_CASSETTE.format(uri=normalised, text="Recorded words. " * 20))
    pytester.makepyfile(
        test_replay=textwrap.dedent(
            f"""
            import pytest
            from agentloop import ToolError
            from agentloop_tools.web import web_fetch

            @pytest.mark.vcr
            def test_fetch(agentloop_evidence):
                tool = web_fetch()
                with pytest.raises(ToolError) as refused:
                    tool.handler(None, url={uri!r}, start=None)
                assert str(refused.value).startswith("[blocked-address] "), str(refused.value)
            """
        )
    )
    result = pytester.runpytest()
    # The test's own assertions pass (the refusal); the plugin then fails it for the
    # interaction left unused, which is what a refused replay leaves.
    result.stdout.fnmatch_lines(
        ["*the test passed but left 1 of 1 recorded interaction(s) unused*"]
    )
    result.assert_outcomes(failed=1)


# --- bytes that used to raise ------------------------------------------------------------


@pytest.mark.parametrize("charset", ["undefined", "idna", "punycode", "utf-7", "rot13", "x\x00y"])
@pytest.mark.parametrize("where", ["header", "meta"])
def test_a_charset_python_cannot_decode_with_falls_back_to_utf8(charset: str, where: str) -> None:
    body = TEXT + "<p>caf\u00e9</p>".encode()
    content_type = "text/html"
    if where == "header":
        content_type += f"; charset={charset}"
    else:
        body = f'<meta charset="{charset}">'.encode("latin-1", "replace") + body
    reply = head(
        headers={"Content-Type": content_type.replace("\x00", ""), "Content-Length": str(len(body))}
    )
    with raw_server(_routes({"/page": reply + body})) as server:  # type: ignore[arg-type]
        content = bounded(lambda: _fetch(f"{server.base}/page"))
    assert content.startswith("[web_fetch] url: "), content
    assert "Readable words on a hostile page." in content


def test_repeated_unclosed_title_tags_are_read_in_one_pass() -> None:
    body = b"<html><head>" + b"<title>" * 30_000 + b"</head><body>" + TEXT + b"</body></html>"
    with raw_server(_routes({"/page": _page(body)})) as server:  # type: ignore[arg-type]
        # The old regex held the GIL for 15-26 s here; one pass is milliseconds.
        content = bounded(lambda: _fetch(f"{server.base}/page"), seconds=10)
    # An unclosed <title> swallows the rest of the page (it is raw text to a parser).
    assert content.startswith("Error: [no-text] "), content


def test_the_title_reader_keeps_its_reading() -> None:
    assert _extract._title("<html><TITLE lang=en>A <b>bold</b> &amp; title</Title ></html>") == (
        "A bold & title"
    )
    assert _extract._title("<titles>no</titles><title>yes</title>") == "yes"
    assert _extract._title("<title>never closed") is None


# --- PDFs: bounded in work and time -------------------------------------------------------


def _pdf_fetch(body: bytes, **options: object) -> str:
    with raw_server(_routes({"/doc.pdf": _page(body, "application/pdf")})) as server:  # type: ignore[arg-type]
        return bounded(lambda: _fetch(f"{server.base}/doc.pdf", **options))


@pytest.mark.parametrize(
    "body",
    [
        deep_tree_pdf(150),
        one_page_pdf(b"BT /F1 12 Tf " + b"[" * 5_000 + b"]" * 5_000 + b" TJ ET"),
        shared_stream_pdf(40, b"BT /F1 12 Tf " + b"() Tj " * 170_000 + b" ET"),
    ],
    ids=["page-tree-150-deep", "nested-arrays", "shared-1MB-stream-x40"],
)
def test_a_hostile_pdf_ends_in_a_coded_result(body: bytes, request: pytest.FixtureRequest) -> None:
    content = _pdf_fetch(body)
    if request.node.callspec.id == "page-tree-150-deep" and not content.startswith("Error"):
        # pypdf before 5.1 walks a deep page tree instead of refusing it (the floor, 5.0,
        # does): reading its one page is a bounded answer too.
        assert content.endswith("\n\nDeep text"), content
        return
    assert content.startswith("Error: [unsupported-content] "), content


def test_pages_sharing_one_stream_are_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[int] = []
    real = _extract._read_pages

    def counting(reader, budget, pages, skipped):  # type: ignore[no-untyped-def]
        for page in reader.pages:
            original = page.extract_text

            def extract_text(*args, _original=original, **kwargs):  # type: ignore[no-untyped-def]
                parsed.append(1)
                return _original(*args, **kwargs)

            page.extract_text = extract_text
        return real(reader, budget, pages, skipped)

    monkeypatch.setattr(_extract, "_read_pages", counting)
    body = shared_stream_pdf(40, b"BT /F1 12 Tf 72 720 Td (Shared words here) Tj ET")
    content = _pdf_fetch(body)
    assert content.count("Shared words here") == 40
    assert len(parsed) == 1


def test_the_operation_budget_stops_the_work_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_extract, "MAX_PDF_OPERATIONS", 2_000)
    # Ten distinct pages of 600 operations each: the budget ends inside page 4.
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    kids = []
    for number in range(10):
        content = b"BT /F1 12 Tf 72 720 Td " + b"(Page %d words) Tj " % number * 600 + b"ET"
        objects.append(stream(content, compress=True))
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 3 0 R >> >> "
            b"/Contents %d 0 R >>" % len(objects)
        )
        kids.append(b"%d 0 R" % len(objects))
    objects[1] = b"<< /Type /Pages /Kids [" + b" ".join(kids) + b"] /Count 10 >>"
    text = _pdf_fetch(pdf_of(objects))
    assert text.startswith("[web_fetch] url: "), text[:300]
    assert "note: PDF pages 1-3 were read; the budget of 2,000 operations was spent" in text
    assert "Page 2 words" in text
    assert "Page 5 words" not in text


def test_the_time_budget_stops_the_work_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_extract, "MAX_PDF_SECONDS", 0.0)
    body = shared_stream_pdf(3, b"BT /F1 12 Tf 72 720 Td (Any words) Tj ET")
    content = _pdf_fetch(body)
    assert content.startswith("Error: [unsupported-content] "), content
    assert "the time for reading it ran out" in content


# --- an extractor that fails to import ------------------------------------------------------


def test_an_extractor_that_fails_to_import_falls_back_and_says_so_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    broken = tmp_path / "trafilatura"
    broken.mkdir()
    (broken / "__init__.py").write_text(
        "raise ImportError('lxml.html.clean module is now a separate project lxml_html_clean')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(__import__("sys").modules, "trafilatura", raising=False)
    monkeypatch.setattr(_extract, "_unusable", {})
    caplog.set_level(logging.WARNING, logger="agentloop_tools.web.fetch")
    with raw_server(_routes({"/a": _page(), "/b": _page()})) as server:  # type: ignore[arg-type]
        first = bounded(lambda: _fetch(f"{server.base}/a"))
        second = bounded(lambda: _fetch(f"{server.base}/b"))
    for content in (first, second):
        assert content.startswith("[web_fetch] url: "), content
        assert "Readable words on a hostile page." in content
    warned = [
        record.getMessage() for record in caplog.records if "trafilatura" in record.getMessage()
    ]
    assert len(warned) == 1
    assert "fails to import" in warned[0]
    assert "lxml_html_clean" in warned[0]


# --- addresses ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("2002:808:808::1", "a 6to4 tunnel address"),
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "inside"),
        ("::8.8.8.8", "a deprecated IPv4-compatible address"),
    ],
)
def test_tunnel_forms_are_refused_whatever_they_carry_on_every_python(
    address: str, reason: str
) -> None:
    recorder = Recorder()
    tool = web_fetch(http_client=recorder.client(), resolver=lambda host: [address])
    content = fetch_once(tool, "https://tunnel.example/").content
    assert content.startswith("Error: [blocked-address] "), content
    assert reason in content
    assert recorder.requests == []


def test_a_slow_pdf_does_not_outlive_the_fetch(monkeypatch: pytest.MonkeyPatch) -> None:
    """The PDF budget ends by the fetch's own deadline (its ``timeout``), not later."""
    calls: list[float] = []
    real = _extract._PdfBudget.over

    def over(self: _extract._PdfBudget) -> str | None:
        calls.append(self.deadline - time.monotonic())
        return real(self)

    monkeypatch.setattr(_extract._PdfBudget, "over", over)
    _pdf_fetch(shared_stream_pdf(2, b"BT /F1 12 Tf 72 720 Td (Words) Tj ET"), timeout=3)
    assert calls
    assert max(calls) <= 3


def _other_pythons() -> list[str]:
    """Every other Python 3.12+ found (PATH, pyenv): the address table must not depend on
    the version's ``ipaddress`` (3.12.1 and 3.13 disagree on 2002::/16)."""
    import glob
    import shutil
    import subprocess
    import sys

    found = {shutil.which(f"python3.{minor}") for minor in range(12, 20)}
    found |= set(glob.glob(os.path.expanduser("~/.pyenv/versions/3.1[2-9]*/bin/python")))
    usable = []
    for path in sorted(p for p in found if p):
        if os.path.realpath(path) == os.path.realpath(sys.executable):
            continue
        check = subprocess.run(
            [path, "-c", "import sys; print(sys.version_info >= (3, 12))"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        if check.stdout.strip() == "True":  # a pyenv shim without a version answers 127
            usable.append(path)
    return usable


def test_the_address_table_agrees_on_every_installed_python() -> None:
    import subprocess
    from ipaddress import ip_address

    from agentloop_tools.web._domains import _address

    pythons = _other_pythons()
    if not pythons:
        pytest.skip("no other Python 3.12+ installed to compare with")
    samples = ["2002:808:808::1", "2002:7f00:1::", "2001:0:4136:e378:8000:63bf:3fff:fdd2"]
    samples += ["::8.8.8.8", "64:ff9b::808:808", "8.8.8.8", "2606:4700::1111", "100.64.0.1"]
    here = [str(_address.refusal(ip_address(sample))) for sample in samples]
    # _address.py imports only ipaddress: loaded by path, it runs on a bare interpreter.
    script = (
        "import importlib.util, ipaddress, sys\n"
        f"spec = importlib.util.spec_from_file_location('a', {_address.__file__!r})\n"
        "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
        "for s in sys.argv[1:]: print(m.refusal(ipaddress.ip_address(s)))\n"
    )
    for python in pythons:
        run = subprocess.run(
            [python, "-c", script, *samples], capture_output=True, text=True, timeout=60
        )
        assert run.returncode == 0, run.stderr
        assert run.stdout.splitlines() == here, python
