"""Every refusal happens before any request: the transport (or a real server) sees nothing."""

from __future__ import annotations

import http.server
import time

import pytest

from agentloop_tools.web import DomainPolicy, web_fetch
from tests.fetch.helpers import Recorder, fetch_once, local_server, public_resolver


def _refused(url: str, code: str) -> str:
    recorder = Recorder()
    tool = web_fetch(http_client=recorder.client(), resolver=public_resolver)
    result = fetch_once(tool, url)
    assert result.is_error, result.content
    assert result.content.startswith(f"Error: [{code}] "), result.content
    assert " — " in result.content  # what happened — what to do
    assert recorder.requests == [], "a refused URL must not be requested"
    return result.content


@pytest.mark.parametrize(
    ("url", "code"),
    [
        ("not a url", "invalid-url"),
        ("example.com/page", "invalid-url"),
        ("http://exa mple.com/", "invalid-url"),
        ("http://[::1/", "invalid-url"),
        ("", "invalid-url"),
        ("ftp://example.com/file", "unsupported-scheme"),
        ("file:///etc/passwd", "unsupported-scheme"),
        ("javascript:alert(1)", "unsupported-scheme"),
        ("gopher://example.com:70/", "unsupported-scheme"),
        ("data:text/html,<p>hi</p>", "unsupported-scheme"),
        ("https://user:secret@example.com/", "userinfo-not-allowed"),
        ("https://example.com@evil.example/", "userinfo-not-allowed"),
        ("https://@example.com/", "userinfo-not-allowed"),
        ("https://example.com/" + "a" * 2100, "url-too-long"),
        ("http://localhost/", "hostname-too-shallow"),
        ("http://localhost.:8080/", "hostname-too-shallow"),
        ("http://intranet/wiki", "hostname-too-shallow"),
        ("http://metadata/computeMetadata/v1/", "hostname-too-shallow"),
    ],
)
def test_bad_urls_are_refused_by_code(url: str, code: str) -> None:
    _refused(url, code)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/",
        "http://0x7f.1/",
        "http://2130706433/",
        "http://0177.0.0.1/",
        "http://127.1/",
        "http://[::1]/",
        "http://[::ffff:127.0.0.1]/",
        "http://[::ffff:7f00:1]/",
        "http://[::127.0.0.1]/",
        "http://[64:ff9b::a9fe:a9fe]/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::ffff:169.254.169.254]/",
        "http://100.100.100.200/latest/meta-data/",
        "http://100.64.0.1/",
        "http://10.0.0.1/",
        "http://172.16.5.4/",
        "http://192.168.1.1/",
        "http://0.0.0.0/",
        "http://[::]/",
        "http://224.0.0.1/",
        "http://240.0.0.1/",
        "http://255.255.255.255/",
        "http://[fe80::1]/",
        "http://[fd00:ec2::254]/",
        "http://[2002:7f00:1::]/",
        "http://198.18.0.1/",
        "http://192.0.2.1/",
    ],
)
def test_ip_literals_are_judged_by_the_address_they_mean(url: str) -> None:
    message = _refused(url, "blocked-address")
    assert "do not retry" in message


@pytest.mark.parametrize(
    "answers",
    [
        ["127.0.0.1"],
        ["93.184.215.14", "10.0.0.7"],  # one public, one private: refused whole
        ["10.0.0.7", "93.184.215.14"],
        ["2606:2800:220:1::1", "::1"],
        ["169.254.169.254"],
        ["100.100.100.200"],
        ["::ffff:10.1.2.3"],
        ["64:ff9b::7f00:1"],
        ["fe80::1%eth0"],
        ["not-an-address"],
    ],
)
def test_a_name_is_refused_when_any_address_is_not_public(answers: list[str]) -> None:
    recorder = Recorder()
    tool = web_fetch(http_client=recorder.client(), resolver=lambda host: answers)
    result = fetch_once(tool, "https://rebind.example/")
    assert result.content.startswith("Error: [blocked-address] "), result.content
    assert recorder.requests == []


def test_the_policy_refuses_before_the_cache_dns_robots_or_any_request() -> None:
    recorder = Recorder()
    looked_up: list[str] = []

    def resolver(host: str) -> list[str]:
        looked_up.append(host)
        return ["93.184.215.14"]

    tool = web_fetch(
        policy=DomainPolicy.allow(["python.org"]),
        http_client=recorder.client(),
        resolver=resolver,
        respect_robots=True,
    )
    result = fetch_once(tool, "https://evil.example/")
    assert result.content.startswith("Error: [blocked-by-policy] https://evil.example/ ")
    assert "do not retry" in result.content
    assert looked_up == []
    assert recorder.requests == []
    blocked = web_fetch(
        policy=DomainPolicy.block(["evil.example"]),
        http_client=recorder.client(),
        resolver=resolver,
    )
    assert fetch_once(blocked, "https://sub.EVIL.example./x").content.startswith(
        "Error: [blocked-by-policy] "
    )
    assert looked_up == []
    assert recorder.requests == []


def test_a_local_server_receives_nothing_for_any_form_of_its_address() -> None:
    def serve(handler: http.server.BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.end_headers()
        handler.wfile.write(b"secret")

    with local_server(serve) as (base, hits):
        port = base.rsplit(":", 1)[1]
        tool = web_fetch()  # the real transport and the real resolver
        for url in (
            f"{base}/",
            f"http://0x7f.0.0.1:{port}/",
            f"http://2130706433:{port}/",
            f"http://[::ffff:127.0.0.1]:{port}/",
            f"http://localhost:{port}/",
            f"http://localhost.localdomain:{port}/",
        ):
            result = fetch_once(tool, url)
            assert result.is_error, url
            assert result.content.startswith(
                (
                    "Error: [blocked-address] ",
                    "Error: [hostname-too-shallow] ",
                    "Error: [fetch-error] ",
                )
            ), result.content
        assert hits == []


def test_allow_private_networks_reaches_a_local_server() -> None:
    def serve(handler: http.server.BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("content-type", "text/plain")
        handler.end_headers()
        handler.wfile.write(b"intranet page")

    with local_server(serve) as (base, hits):
        result = fetch_once(web_fetch(allow_private_networks=True), f"{base}/doc")
        assert not result.is_error, result.content
        assert result.content.endswith("\n\nintranet page")
        assert hits == ["/doc"]


@pytest.mark.parametrize("start", [-1, "10", 1.5, True])
def test_a_bad_start_is_refused_before_any_request(start: object) -> None:
    recorder = Recorder()
    tool = web_fetch(http_client=recorder.client(), resolver=public_resolver)
    assert tool.handler is not None
    result = fetch_once(tool, "https://example.com/", start)  # type: ignore[arg-type]
    assert result.content.startswith("Error: [invalid-start] "), result.content
    assert recorder.requests == []


@pytest.mark.parametrize(
    ("option", "value"),
    [("max_chars", 0), ("max_bytes", -1), ("timeout", 0), ("cache_ttl", -5), ("max_chars", True)],
)
def test_bad_options_fail_at_construction(option: str, value: object) -> None:
    with pytest.raises(ValueError, match=option):
        web_fetch(**{option: value})  # type: ignore[arg-type]


def test_the_connection_goes_to_the_checked_address_with_the_original_host() -> None:
    seen: list[str] = []

    def serve(handler: http.server.BaseHTTPRequestHandler) -> None:
        seen.append(handler.headers["Host"])
        handler.send_response(200)
        handler.send_header("content-type", "text/plain")
        handler.end_headers()
        handler.wfile.write(b"pinned")

    with local_server(serve) as (base, _hits):
        port = base.rsplit(":", 1)[1]
        lookups: list[str] = []

        def resolver(host: str) -> list[str]:
            lookups.append(host)
            # A rebinding resolver: the second answer would be elsewhere.
            return ["127.0.0.1"] if len(lookups) == 1 else ["10.9.9.9"]

        tool = web_fetch(allow_private_networks=True, resolver=resolver)
        result = fetch_once(tool, f"http://site.example:{port}/")
    assert result.content.endswith("\n\npinned")
    assert seen == [f"site.example:{port}"]
    assert lookups == ["site.example"]


@pytest.mark.parametrize(
    ("options", "error", "match"),
    [
        ({"policy": ["python.org"]}, TypeError, "policy must be a DomainPolicy"),
        ({"name": " "}, ValueError, "name must be"),
        ({"user_agent": "Bot\r\nX-Evil: 1"}, ValueError, "user_agent"),
        ({"http_client": object()}, TypeError, "http_client must be an httpx.Client"),
        ({"resolver": "8.8.8.8"}, TypeError, "resolver must be a callable"),
    ],
)
def test_bad_option_types_name_the_option(
    options: dict[str, object], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        web_fetch(**options)  # type: ignore[arg-type]


def _slow(host: str) -> list[str]:
    time.sleep(3)
    return ["93.184.215.14"]


def _failing(host: str) -> list[str]:
    raise OSError("no such host")


@pytest.mark.parametrize(
    ("resolver", "start"),
    [
        (_slow, "Error: [timeout] looking up site.example took too long"),
        (_failing, "Error: [fetch-error] site.example could not be resolved (OSError"),
        (lambda host: [], "Error: [fetch-error] site.example has no address"),
        (lambda host: None, "Error: [blocked-address] the resolver answered None"),
    ],
)
def test_a_resolver_that_hangs_fails_or_answers_nothing_is_a_clear_error(
    resolver: object, start: str
) -> None:
    # Only the hanging resolver is meant to meet the deadline: the others get a long one,
    # so a loaded machine cannot spend it before they are asked (a flaky timeout).
    timeout = 0.5 if resolver is _slow else 10.0
    for client in (None, Recorder().client()):
        tool = web_fetch(resolver=resolver, http_client=client, timeout=timeout)  # type: ignore[arg-type]
        began = time.monotonic()
        result = fetch_once(tool, "https://site.example/")
        assert result.content.startswith(start), result.content
        assert time.monotonic() - began < 2
