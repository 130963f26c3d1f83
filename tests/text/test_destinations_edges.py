"""Link destinations at their edges: hit URLs the search cannot show, links read as CommonMark.

The oracle for reading a destination is cmark-gfm (through ``cmarkgfm``): where our
reading says a text links somewhere, GFM links there too, and where GFM makes no link,
we read none.
"""

from __future__ import annotations

import re
from html import unescape
from urllib.parse import unquote

import cmarkgfm
import pytest

from agentloop_tools.testing import ScriptedSearch, brave_results
from agentloop_tools.web import DomainPolicy, SearchResult, search
from agentloop_tools.web._text._destinations import link_destinations, shown_link
from agentloop_tools.web.backends import brave
from tests.search.helpers import BRAVE_KEY

pytestmark = pytest.mark.core

ALLOW = DomainPolicy.allow(["python.org"])
SKIPPED = "1 result without a usable http(s) URL skipped"
WITHHELD = "[link withheld by the domain policy]"
_HREF = re.compile(r'<a href="([^"]*)"')


def search_for(url: str, snippet: str = "A page.", policy: DomainPolicy = ALLOW) -> SearchResult:
    script = ScriptedSearch("brave", [brave_results([(url, "Title", snippet)])])
    return search(brave(BRAVE_KEY), "python docs", policy=policy, http_client=script.http_client())


def gfm_links(markdown: str) -> list[str]:
    """The absolute http(s) hrefs GFM renders, decoded, a scheme-relative one read as https."""
    hrefs = [unquote(unescape(h)) for h in _HREF.findall(cmarkgfm.markdown_to_html(markdown))]
    absolute = ["https:" + h if h.startswith("//") else h for h in hrefs]
    return [h for h in absolute if h.startswith(("http://", "https://"))]


def test_a_url_its_escapes_push_past_the_length_limit_is_not_shown() -> None:
    # 719 characters as sent; each "<" becomes "%3C", so 2,119 as it would be shown.
    result = search_for("https://python.org/" + "<" * 700)
    assert result.ok
    assert result.hits == ()
    assert SKIPPED in result.output


@pytest.mark.parametrize("url", ["https://[python.org]/", "https://./"])
def test_a_host_no_parser_or_resolver_accepts_is_not_shown(url: str) -> None:
    result = search_for(url)
    assert result.hits == ()
    assert SKIPPED in result.output


def test_a_host_longer_than_dns_allows_is_not_shown() -> None:
    host = "a." * 126 + "python.org"  # 262 characters; DNS holds 253
    result = search_for(f"https://{host}/")
    assert result.hits == ()
    assert SKIPPED in result.output


def test_parentheses_nested_deeper_than_cmark_reads_are_escaped_to_one_link() -> None:
    shallow = "https://python.org/" + "(" * 32 + ")" * 32
    deep = "https://python.org/" + "(" * 33 + ")" * 33
    [kept] = search_for(shallow).hits
    assert kept.url == shallow
    [escaped] = search_for(deep).hits
    assert "(" not in escaped.url
    assert ")" not in escaped.url
    assert unquote(escaped.url) == deep
    # Either way GFM renders one link, to exactly the URL shown.
    assert gfm_links(f"[Title]({kept.url})") == [shallow]
    assert gfm_links(f"[Title]({escaped.url})") == [deep]


def test_a_url_of_another_scheme_is_no_link_to_show() -> None:
    assert shown_link("ftp://python.org/pub/") is None
    assert shown_link("https://python.org/pub/") == "https://python.org/pub/"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # A title after the destination is not part of it.
        ('[a](https://evil.com/x "title")', [(4, 22, "https://evil.com/x")]),
        # Balanced parentheses stay in the destination.
        ("[a](https://evil.com/a_(b)) more", [(4, 26, "https://evil.com/a_(b)")]),
        # A backslash-escaped ")" does not end it.
        ("[a](https://evil.com/a\\)b)", [(4, 25, "https://evil.com/a)b")]),
        # Inside <...> a space is part of it; the brackets are not.
        ("[a](<//evil.com/x y>)", [(4, 20, "https://evil.com/x y")]),
        # A relative destination links to no host of its own.
        ("[a](docs/setup.md)", [(4, 17, None)]),
    ],
)
def test_a_destination_is_read_as_gfm_reads_it(
    text: str, expected: list[tuple[int, int, str | None]]
) -> None:
    assert list(link_destinations(text)) == expected
    assert gfm_links(text) == [url for _, _, url in expected if url is not None]


@pytest.mark.parametrize(
    "text",
    [
        "see ]( here",  # nothing where the destination would be
        "[a](<https://evil.com/\n>)",  # a <...> destination cannot cross a line
        "[a](<https://evil.com/",  # nor lack its ">"
    ],
)
def test_where_gfm_makes_no_link_no_destination_is_read(text: str) -> None:
    assert list(link_destinations(text)) == []
    assert gfm_links(text) == []


def test_a_destination_that_runs_to_the_end_of_the_text_is_read() -> None:
    assert list(link_destinations("[a](https://evil.com/x")) == [(4, 22, "https://evil.com/x")]


@pytest.mark.parametrize(
    ("snippet", "shown"),
    [
        ("[a](<//evil.com/x>)", f"[a]({WITHHELD})"),
        ('[a](https://evil.com/x "t")', f'[a]({WITHHELD} "t")'),
        ("[a](https://evil.com/a_(b))", f"[a]({WITHHELD})"),
    ],
)
def test_a_refused_link_in_a_snippet_is_withheld_however_its_destination_is_written(
    snippet: str, shown: str
) -> None:
    for policy in (ALLOW, DomainPolicy.block(["evil.com"])):
        result = search_for("https://docs.python.org/3/", snippet, policy)
        assert "evil.com" not in result.output
        assert shown in result.output
