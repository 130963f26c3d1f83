"""What our search shows the model is what was checked (issue 16, section 3).

The oracle is GFM itself (cmark-gfm through ``cmarkgfm``): every link a renderer
makes of our result text goes to exactly a URL the policy checked, and to nothing else.
"""

from __future__ import annotations

import re
from html import unescape
from urllib.parse import unquote

import cmarkgfm
import pytest
from ada_url import URL
from hypothesis import given
from hypothesis import strategies as st

from agentloop_tools.testing import ScriptedSearch, brave_results
from agentloop_tools.web import DomainPolicy, sources
from tests.search.helpers import call, results, run_agent, scripted_tool

_HREF = re.compile(r'<a href="([^"]*)"')


def rendered_links(markdown: str) -> list[str]:
    """Every link destination cmark-gfm renders (autolinks included), as :func:`same` reads it."""
    html = cmarkgfm.github_flavored_markdown_to_html(markdown)
    return [same(unescape(href)) for href in _HREF.findall(html)]


def same(url: str) -> str:
    """A URL WHATWG-normalised, then percent-decoded: cmark escapes ``[``, ``]``, ``|``."""
    return unquote(URL(url).href)


def search_once(policy: DomainPolicy, hits: list[tuple[str, str, str]]) -> tuple[str, list[str]]:
    script = ScriptedSearch("brave", [brave_results(hits)])
    transcript = run_agent(scripted_tool(script, policy=policy), [call("python")])
    [result] = results(transcript)
    return result.content, [s.url for s in sources(transcript)]


HOSTILE = [
    "https://evil.com)",
    "https://evil.com)/x",
    "https://python.org/search?q=x)[docs](//evil.com/)",
    "https://python.org/a(b",
    "https://python.org/a)b(c",
    "https://python.org/<x>",
    "https://python.org\\@evil.com/",
    "https://python.org/&#x29;[x](//evil.com)",
    "https://python.org/?q=&lpar;",
    "https://en.wikipedia.org/wiki/Python_(programming_language)",
]


@pytest.mark.parametrize("url", HOSTILE)
@pytest.mark.parametrize(
    "policy",
    [DomainPolicy.allow(["python.org", "wikipedia.org"]), DomainPolicy.block(["evil.com"])],
)
def test_every_rendered_link_is_a_checked_url(url: str, policy: DomainPolicy) -> None:
    content, shown = search_once(policy, [(url, "Title", "snippet")])
    links = rendered_links(content)
    assert sorted(links) == sorted(same(u) for u in shown)
    for link in links:
        assert policy.permits(link)
        assert "evil.com" not in URL(link).hostname
        assert "evil.com" not in URL(link).host


def test_a_host_no_dns_name_can_have_is_withheld() -> None:
    content, shown = search_once(
        DomainPolicy.block(["evil.com"]),
        [
            ("https://evil.com)", "A", ""),
            ("https://a..b.example/", "B", ""),
            ("https://" + "a" * 64 + ".example/", "C", ""),
            ("https://ok.example/", "D", ""),
        ],
    )
    assert shown == ["https://ok.example/"]
    assert "3 results without a usable http(s) URL skipped" in content


def test_a_balanced_parenthesis_stays_as_the_backend_wrote_it() -> None:
    wiki = "https://en.wikipedia.org/wiki/Python_(programming_language)"
    _, shown = search_once(DomainPolicy.allow(["wikipedia.org"]), [(wiki, "Python", "")])
    assert shown == [wiki]


def test_a_glued_link_in_a_snippet_is_judged_as_its_own_link() -> None:
    snippet = "[docs](https://python.org/3/)[mirror](//evil.com/setup.exe) ![i](https:evil.com/a)"
    for policy in (DomainPolicy.allow(["python.org"]), DomainPolicy.block(["evil.com"])):
        content, _ = search_once(policy, [("https://docs.python.org/3/", "Docs", snippet)])
        assert "evil.com" not in content
        assert "[docs](https://python.org/3/)" in content
        assert content.count("[link withheld by the domain policy]") == 2
        assert all(policy.permits(link) for link in rendered_links(content))


def test_permitted_glued_links_are_left_alone() -> None:
    snippet = "[a](https://python.org/3/)[b](//docs.python.org/3/) [c](CONTRIBUTING.md)"
    content, _ = search_once(
        DomainPolicy.allow(["python.org"]), [("https://docs.python.org/3/", "Docs", snippet)]
    )
    assert snippet in content


_URL_CHARS = st.lists(
    st.sampled_from([*"abc/.?=&#;()[]<>\\%x2-_", "evil.com", "python.org", "//", "]("]),
    max_size=20,
).map("".join)


@given(tail=_URL_CHARS)
def test_no_spelling_of_a_hit_url_renders_a_link_the_policy_refuses(tail: str) -> None:
    for policy in (DomainPolicy.allow(["python.org"]), DomainPolicy.block(["evil.com"])):
        content, shown = search_once(policy, [("https://python.org/" + tail, "T", "")])
        links = rendered_links(content)
        assert sorted(links) == sorted(same(u) for u in shown)
        assert all(policy.permits(link) for link in links)
