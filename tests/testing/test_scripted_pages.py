"""ScriptedPages: web_fetch reads pages from memory, with every check it runs live."""

from __future__ import annotations

import pytest
from agentloop.errors import ToolError

from agentloop_tools.testing import ScriptedPages
from agentloop_tools.web import DomainPolicy, Resolver, web_fetch

PAGE = "<html><head><title>Docs</title></head><body><p>The docs say it works.</p></body></html>"


def fetch(pages: ScriptedPages, url: str, **options: object) -> str:
    tool = web_fetch(**pages.tool_options(), **options)  # type: ignore[arg-type]
    result: str = tool.handler(None, url=url)
    return result


def test_pages_are_served_with_their_redirects_and_statuses() -> None:
    pages = ScriptedPages(
        {
            "https://docs.python.org/3/": PAGE,
            "https://docs.python.org/old#part": (
                301,
                "",
                {"location": "https://docs.python.org/3/"},
            ),
            "https://docs.python.org/gone": (410, "gone", {}),
        }
    )
    read = fetch(pages, "https://docs.python.org/3/")
    assert read.startswith("[web_fetch] url: https://docs.python.org/3/\n[web_fetch] title: Docs")
    assert "The docs say it works." in read
    moved = fetch(pages, "https://docs.python.org/old", cache_ttl=0)
    assert moved.startswith("[web_fetch] url: https://docs.python.org/3/\n")
    with pytest.raises(ToolError, match=r"\[fetch-error\].*410"):
        fetch(pages, "https://docs.python.org/gone")
    assert [str(request.url) for request in pages.requests] == [
        "https://docs.python.org/3/",
        "https://docs.python.org/old",
        "https://docs.python.org/3/",
        "https://docs.python.org/gone",
    ]


def test_a_missing_page_is_a_404_that_says_what_to_add() -> None:
    pages = ScriptedPages({})
    client = pages.http_client()
    response = client.get("https://docs.python.org/missing")
    assert response.status_code == 404
    assert "ScriptedPages has no page for https://docs.python.org/missing" in response.text


def test_the_policy_and_address_checks_still_run() -> None:
    pages = ScriptedPages({"https://evil.example/": PAGE, "http://127.0.0.1/": PAGE})
    policy = DomainPolicy.allow(["python.org"])
    with pytest.raises(ToolError, match=r"\[blocked-by-policy\]"):
        fetch(pages, "https://evil.example/", policy=policy)
    with pytest.raises(ToolError, match=r"loopback|private|not public|refused"):
        fetch(pages, "http://127.0.0.1/")
    assert pages.requests == [], "nothing refused was requested"


def test_bytes_get_a_content_type_from_the_url() -> None:
    pages = ScriptedPages(
        {"https://example.com/paper.pdf": b"%PDF-1.4", "https://example.com/x": b"?"}
    )
    client = pages.http_client()
    assert client.get("https://example.com/paper.pdf").headers["content-type"] == "application/pdf"
    assert client.get("https://example.com/x").headers["content-type"] == "application/octet-stream"


def test_the_resolver_is_the_exported_type() -> None:
    resolver: Resolver = ScriptedPages({}).resolver
    assert resolver("docs.python.org") == ["93.184.215.14"]


@pytest.mark.parametrize("body", [42, ("200", "x", {}), (200, "x")])
def test_a_body_of_another_shape_is_refused_naming_the_url(body: object) -> None:
    with pytest.raises(TypeError, match=r"the body for https://a\.example/ must be"):
        ScriptedPages({"https://a.example/": body})  # type: ignore[dict-item]
