"""Redirects are followed by hand, each hop through every check; robots.txt passes them too."""

from __future__ import annotations

import httpx
import pytest

from agentloop_tools.web import DomainPolicy, web_fetch
from tests.fetch.helpers import Recorder, fetch_once, html_page, public_resolver


def _redirects(table: dict[str, str]) -> Recorder:
    def respond(request: httpx.Request) -> httpx.Response:
        target = table.get(str(request.url))
        if target is not None:
            return httpx.Response(302, headers={"location": target})
        return html_page("<p>" + "Arrived at the final page. " * 10 + "</p>", title="Final")

    return Recorder(respond)


def test_a_redirect_chain_is_followed_and_every_hop_is_in_the_header() -> None:
    recorder = _redirects(
        {"https://a.example/start": "/middle", "https://a.example/middle": "https://b.example/end"}
    )
    tool = web_fetch(http_client=recorder.client(), resolver=public_resolver)
    result = fetch_once(tool, "https://a.example/start")
    assert result.content.splitlines()[:3] == [
        "[web_fetch] url: https://b.example/end",
        "[web_fetch] redirect: https://a.example/middle",
        "[web_fetch] title: Final",
    ]
    assert recorder.urls == [
        "https://a.example/start",
        "https://a.example/middle",
        "https://b.example/end",
    ]


def test_a_redirect_into_cloud_metadata_is_refused_before_it_is_requested() -> None:
    recorder = _redirects(
        {
            "https://a.example/start": "https://b.example/hop",
            "https://b.example/hop": "http://169.254.169.254/latest/meta-data/iam/",
        }
    )
    tool = web_fetch(http_client=recorder.client(), resolver=public_resolver)
    result = fetch_once(tool, "https://a.example/start")
    first_line, *rest = result.content.splitlines()
    assert first_line.startswith(
        "Error: [blocked-address] http://169.254.169.254/latest/meta-data/iam/ is "
        "169.254.169.254, a cloud metadata address"
    )
    assert rest == ["[web_fetch] redirect: https://b.example/hop"]  # the hop that was reached
    assert "169.254.169.254" not in " ".join(recorder.urls)


def test_a_redirect_to_a_name_resolving_privately_is_refused() -> None:
    recorder = _redirects({"https://a.example/": "https://internal.example/admin"})
    answers = {"a.example": ["93.184.215.14"], "internal.example": ["10.1.2.3"]}
    tool = web_fetch(http_client=recorder.client(), resolver=lambda host: answers[host])
    result = fetch_once(tool, "https://a.example/")
    assert result.content.startswith("Error: [blocked-address] https://internal.example/admin ")
    assert recorder.urls == ["https://a.example/"]


@pytest.mark.parametrize(
    "policy", [DomainPolicy.allow(["a.example"]), DomainPolicy.block(["evil.example"])]
)
def test_a_redirect_into_a_blocked_domain_ends_the_fetch_naming_the_hop(
    policy: DomainPolicy,
) -> None:
    recorder = _redirects({"https://a.example/": "https://www.evil.example/landing"})
    tool = web_fetch(policy=policy, http_client=recorder.client(), resolver=public_resolver)
    result = fetch_once(tool, "https://a.example/")
    assert result.content.startswith(
        "Error: [blocked-by-policy] the redirect to https://www.evil.example/landing is not "
        "permitted by the domain policy"
    )
    assert recorder.urls == ["https://a.example/"]


@pytest.mark.parametrize(
    ("location", "code"),
    [
        ("ftp://a.example/file", "unsupported-scheme"),
        ("https://user:pw@a.example/", "userinfo-not-allowed"),
        ("http://localhost/", "hostname-too-shallow"),
        ("http://[::1]:8080/", "blocked-address"),
        ("http://0x7f000001/", "blocked-address"),
    ],
)
def test_a_redirect_hop_goes_through_the_url_checks(location: str, code: str) -> None:
    recorder = _redirects({"https://a.example/": location})
    tool = web_fetch(http_client=recorder.client(), resolver=public_resolver)
    assert fetch_once(tool, "https://a.example/").content.startswith(f"Error: [{code}] ")
    assert recorder.urls == ["https://a.example/"]


def test_more_than_five_redirects_is_an_error() -> None:
    table = {f"https://loop.example/{n}": f"/{n + 1}" for n in range(10)}
    recorder = _redirects(table)
    tool = web_fetch(http_client=recorder.client(), resolver=public_resolver)
    result = fetch_once(tool, "https://loop.example/0")
    assert result.content.startswith(
        "Error: [fetch-error] https://loop.example/0 redirected more than 5 times"
    )
    assert len(recorder.requests) == 6


def test_each_host_is_resolved_once_per_fetch() -> None:
    looked_up: list[str] = []

    def resolver(host: str) -> list[str]:
        looked_up.append(host)
        return ["93.184.215.14"]

    recorder = _redirects({"https://a.example/1": "/2", "https://a.example/2": "/3"})
    tool = web_fetch(http_client=recorder.client(), resolver=resolver, respect_robots=True)
    fetch_once(tool, "https://a.example/1")
    assert looked_up == ["a.example"]


def _robots(text: str | None, status: int = 200) -> Recorder:
    def respond(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/robots.txt":
            if text is None:
                return httpx.Response(status)
            return httpx.Response(status, text=text, headers={"content-type": "text/plain"})
        return html_page("<p>" + "Allowed page text. " * 10 + "</p>")

    return Recorder(respond)


def test_robots_txt_is_obeyed_for_the_honest_user_agent_and_cached() -> None:
    recorder = _robots("User-agent: *\nDisallow: /private\n")
    tool = web_fetch(http_client=recorder.client(), resolver=public_resolver, respect_robots=True)
    refused = fetch_once(tool, "https://site.example/private/page")
    assert refused.content.startswith(
        "Error: [disallowed-by-robots] https://site.example/robots.txt "
    )
    allowed = fetch_once(tool, "https://site.example/public")
    assert not allowed.is_error
    assert recorder.urls == ["https://site.example/robots.txt", "https://site.example/public"]
    ignoring = web_fetch(http_client=recorder.client(), resolver=public_resolver)
    assert not fetch_once(ignoring, "https://site.example/private/page").is_error


def test_robots_txt_names_our_product_token() -> None:
    recorder = _robots("User-agent: PoliteBot\nDisallow: /\n\nUser-agent: *\nAllow: /\n")
    tool = web_fetch(
        http_client=recorder.client(),
        resolver=public_resolver,
        respect_robots=True,
        user_agent="PoliteBot/2.0 (+https://example.com/bot)",
    )
    assert fetch_once(tool, "https://site.example/a").content.startswith(
        "Error: [disallowed-by-robots] "
    )


def test_a_missing_robots_txt_permits_and_an_erroring_one_refuses() -> None:
    missing = _robots(None, status=404)
    tool = web_fetch(http_client=missing.client(), resolver=public_resolver, respect_robots=True)
    assert not fetch_once(tool, "https://site.example/a").is_error
    failing = _robots(None, status=503)
    tool = web_fetch(http_client=failing.client(), resolver=public_resolver, respect_robots=True)
    assert fetch_once(tool, "https://site.example/a").content.startswith(
        "Error: [disallowed-by-robots] https://site.example/robots.txt could not be read"
    )


def test_robots_txt_itself_passes_the_address_checks() -> None:
    recorder = _robots("User-agent: *\nAllow: /\n")

    def respond(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/robots.txt":
            return httpx.Response(301, headers={"location": "http://169.254.169.254/robots.txt"})
        return html_page("<p>page</p>")

    recorder = Recorder(respond)
    tool = web_fetch(http_client=recorder.client(), resolver=public_resolver, respect_robots=True)
    result = fetch_once(tool, "https://site.example/a")
    assert result.content.startswith("Error: [blocked-address] ")
    assert recorder.urls == ["https://site.example/robots.txt"]
