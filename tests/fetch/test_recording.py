"""web_fetch traffic records and replays in the plugin's cassettes, with no DNS in replay."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

RECORD = """
import gzip
import httpx
import pytest
from agentloop_tools.web import web_fetch

PAGE = (
    "<html><head><title>Recorded</title></head><body><p>"
    + "A recorded page. " * 20
    + "</p></body></html>"
)


def serve(request):
    return httpx.Response(
        200,
        headers={"content-type": "text/html", "content-encoding": "gzip"},
        content=gzip.compress(PAGE.encode()),
    )


@pytest.mark.vcr
def test_fetch(agentloop_evidence):  # the fixture puts the test under the plugin's rules
    client = httpx.Client(transport=httpx.MockTransport(serve))
    tool = web_fetch(http_client=client, resolver=lambda host: ["93.184.215.14"])
    assert "A recorded page." in tool.handler(None, url="https://site.example/page", start=None)
"""

REPLAY = """
import socket
import pytest
from agentloop_tools.web import web_fetch


@pytest.mark.vcr
def test_fetch(monkeypatch, agentloop_evidence):
    def no_dns(*args, **kwargs):
        raise AssertionError("DNS asked during replay")

    monkeypatch.setattr(socket, "getaddrinfo", no_dns)
    monkeypatch.setattr(socket, "create_connection", no_dns)
    tool = web_fetch()  # the default transport and the system resolver
    text = tool.handler(None, url="https://site.example/page", start=None)
    assert text.startswith(
        "[web_fetch] url: https://site.example/page\\n[web_fetch] title: Recorded"
    )
    assert "A recorded page." in text
"""


def test_a_fetch_records_decoded_and_replays_without_dns_or_sockets(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CI", raising=False)
    pytester.makepyfile(test_fetch=RECORD)
    pytester.runpytest("--record-mode=once").assert_outcomes(passed=1)
    cassette = Path(pytester.path, "cassettes", "test_fetch", "test_fetch.yaml")
    [interaction] = yaml.safe_load(cassette.read_text())["interactions"]
    assert interaction["request"]["method"] == "GET"
    assert interaction["request"]["uri"] == "https://site.example/page"
    response = interaction["response"]
    assert "content-encoding" not in response["headers"]  # stored decoded, readable
    assert "A recorded page." in response["body"]["string"]

    pytester.makepyfile(test_fetch=REPLAY)
    pytester.runpytest().assert_outcomes(passed=1)
