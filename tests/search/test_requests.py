"""What the JSON-posting backends send, byte for byte: a recorded cassette matches on it.

Tavily and Exa share one request builder; these pin each one's body (fields and their
order), headers and domain-list limit, with and without a policy to push down.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentloop_tools.web import DomainPolicy
from agentloop_tools.web.backends import exa, tavily

KEY = "k-0123456789abcdef"
EXA_CONTENTS = {"highlights": {"numSentences": 3, "highlightsPerUrl": 1}}


def hosts(count: int) -> list[str]:
    return [f"site{i}.example" for i in range(count)]


@pytest.mark.parametrize(
    ("policy", "domains"),
    [
        (None, {}),
        (
            DomainPolicy.allow(["python.org", "docs.python.org/3", "python.org/dev"]),
            {"include_domains": ["python.org", "docs.python.org"]},
        ),
        (
            DomainPolicy.block(["evil.example", "x.example/p"]),
            {"exclude_domains": ["evil.example"]},
        ),
        (DomainPolicy.block(["x.example/p"]), {}),
        (DomainPolicy.allow(hosts(99)), {"include_domains": hosts(99)}),
        # An allowlist over the limit is not sent at all; a blocklist is cut to it.
        (DomainPolicy.allow(hosts(100)), {}),
        (DomainPolicy.block(hosts(120)), {"exclude_domains": hosts(99)}),
    ],
)
def test_tavily_posts_its_body_with_the_policy_pushed_down(
    policy: DomainPolicy | None, domains: dict[str, Any]
) -> None:
    request = tavily(KEY, depth="advanced").build_request("python repl", 7, policy)
    assert (request.method, str(request.url)) == ("POST", "https://api.tavily.com/search")
    expected = {"query": "python repl", "search_depth": "advanced", "max_results": 7, **domains}
    assert request.content == json.dumps(expected, separators=(",", ":")).encode()
    assert request.headers["Accept"] == "application/json"
    assert request.headers["Authorization"] == f"Bearer {KEY}"
    assert "x-api-key" not in request.headers


@pytest.mark.parametrize(
    ("policy", "domains"),
    [
        (None, {}),
        (DomainPolicy.allow(["python.org/3"]), {"includeDomains": ["python.org"]}),
        (DomainPolicy.block(["evil.example", "x.example/p"]), {"excludeDomains": ["evil.example"]}),
        (DomainPolicy.allow(hosts(100)), {"includeDomains": hosts(100)}),
        (DomainPolicy.allow(hosts(101)), {}),
        (DomainPolicy.block(hosts(120)), {"excludeDomains": hosts(100)}),
    ],
)
def test_exa_posts_its_body_with_the_policy_pushed_down(
    policy: DomainPolicy | None, domains: dict[str, Any]
) -> None:
    request = exa(KEY).build_request("python repl", 3, policy)
    assert (request.method, str(request.url)) == ("POST", "https://api.exa.ai/search")
    expected = {
        "query": "python repl",
        "type": "auto",
        "numResults": 3,
        "contents": EXA_CONTENTS,
        **domains,
    }
    assert request.content == json.dumps(expected, separators=(",", ":")).encode()
    assert request.headers["Accept"] == "application/json"
    assert request.headers["x-api-key"] == KEY
    assert "Authorization" not in request.headers
