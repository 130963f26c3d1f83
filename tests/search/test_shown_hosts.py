"""A hit is judged as the backend gave it, and shown only on the host it names (issue 26, item 5).

Encoding a URL so it is one markdown link (``\\`` as ``%5C``) can move its host:
``https://evil-example.net\\@python.org/`` is evil-example.net to a browser, but
``https://evil-example.net%5C@python.org/`` is python.org. The policy judges the URL
the backend gave; a URL whose shown form reaches another host is not shown.
"""

from __future__ import annotations

import pytest
from ada_url import URL
from hypothesis import given
from hypothesis import strategies as st

from agentloop_tools.testing import ScriptedSearch, brave_results
from agentloop_tools.testing.strategies import urls
from agentloop_tools.web import DomainPolicy, sources
from agentloop_tools.web._search._engine import filter_and_render
from agentloop_tools.web._search._filter import filter_hits
from agentloop_tools.web._search._render import SearchHit
from tests.search.helpers import call, results, run_agent, scripted_tool

TITLE = "Refused-page title"
SNIPPET = "refused-page snippet text"
ALLOW = DomainPolicy.allow(["python.org"])
BLOCK = DomainPolicy.block(["evil-example.net"])


def search_once(policy: DomainPolicy | None, url: str) -> tuple[str, list[str]]:
    script = ScriptedSearch("brave", [brave_results([(url, TITLE, SNIPPET)])])
    transcript = run_agent(scripted_tool(script, policy=policy), [call("python")])
    [result] = results(transcript)
    return result.content, [s.url for s in sources(transcript)]


@pytest.mark.parametrize(
    "url",
    [
        "https://evil-example.net\\@python.org/",
        "https://evil-example.net\\@docs.python.org/3/",
        "HTTPS://EVIL-EXAMPLE.NET\\@python.org/",
        "https://evil-example.net:443\\@python.org/",
        "https://evil-example.net\\\\@python.org/",
    ],
)
def test_a_hit_the_policy_refuses_as_given_is_withheld(url: str) -> None:
    assert not ALLOW.permits(url)
    content, shown = search_once(ALLOW, url)
    assert shown == []
    assert TITLE not in content
    assert SNIPPET not in content
    assert "python.org" not in content
    assert "1 result withheld by the domain policy" in content


@pytest.mark.parametrize("policy", [None, BLOCK, ALLOW])
def test_an_encoding_that_would_move_the_host_is_no_link(policy: DomainPolicy | None) -> None:
    # python.org to a browser; encoded, it would open evil-example.net.
    url = "https://python.org\\@evil-example.net/"
    content, shown = search_once(policy, url)
    assert shown == []
    assert TITLE not in content
    assert "evil-example.net" not in content


def test_unicode_space_around_a_url_is_not_trimmed_into_another_url() -> None:
    # A browser strips only C0 controls and space; "\u00a0https://..." is no URL to it.
    content, shown = search_once(None, "\u00a0https://python.org/")
    assert shown == []
    assert "without a usable http(s) URL skipped" in content


_SPECIAL = st.sampled_from(["\\", "(", ")", "<", ">", "&#x29;", "&lpar;", "@", ":443", "%5C", ""])
_HOSTS = st.sampled_from(["python.org", "docs.python.org", "evil-example.net", "127.0.0.1"])
_HANDMADE = st.tuples(
    st.sampled_from(["https://", "http://", "HTTPS://", " https://", "https:\\\\"]),
    _HOSTS,
    _SPECIAL,
    _SPECIAL,
    _HOSTS,
    st.sampled_from(["/", "/a(b", "/x)", "", "?q=1)", "#f"]),
).map("".join)


def _hostile(policy: DomainPolicy) -> st.SearchStrategy[str]:
    return st.one_of(urls(policy, permitted=False), urls(policy, permitted=True), _HANDMADE)


def _host(url: str) -> str | None:
    try:
        return URL(url).host
    except ValueError:
        return None


def _check(policy: DomainPolicy | None, url: str) -> None:
    hit = SearchHit(TITLE, url, SNIPPET)
    [*shown] = filter_hits([hit], 5, policy).shown
    for each in shown:
        # The oracle is ada read directly: the host the given URL names.
        assert _host(each.url) == _host(url) is not None
    text = filter_and_render([hit], 5, policy)
    if policy is not None and not policy.permits(url):
        assert not shown
        assert TITLE not in text
        assert SNIPPET not in text
    if not shown:
        assert TITLE not in text


@given(url=_hostile(ALLOW))
def test_shown_hosts_are_given_hosts_and_refused_text_never_shows_allow(url: str) -> None:
    _check(ALLOW, url)
    _check(None, url)


@given(url=_hostile(BLOCK))
def test_shown_hosts_are_given_hosts_and_refused_text_never_shows_block(url: str) -> None:
    _check(BLOCK, url)
