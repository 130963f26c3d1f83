"""Readings that differ: URL parsers that disagree, markup that hides a link, one page many URLs.

Each test here failed before the fix it names (issue 7: A4, A5, B6, B7).
"""

from __future__ import annotations

import contextlib
from urllib.parse import urlsplit

import httpx
import pytest
from agentloop import Origin, Transcript
from agentloop.transcript import Citation, HostedToolPart, Source, TextPart
from hypothesis import HealthCheck, assume, event, example, given, settings
from hypothesis import strategies as st

from agentloop_tools.web import DomainPolicy, per_page, sources
from agentloop_tools.web._domains._url import locate
from agentloop_tools.web._text._markup import decode, layout

pytestmark = pytest.mark.core

ALLOW = DomainPolicy.allow(["good.example"])
BLOCK = DomainPolicy.block(["evil.example"])


def answer(text: str, *parts: object) -> Transcript:
    transcript = Transcript()
    transcript.add_user_message("question")
    transcript.add_assistant_message([*parts, TextPart(text=text)])  # type: ignore[list-item]
    return transcript


def flagged(policy: DomainPolicy, text: str) -> list[str]:
    return [violation.url for violation in policy.audit(answer(text))]


# A5: a browser and the HTTP clients an agent's own tools use must not be played off
# against each other.
def rfc3986_hosts(url: str) -> set[str]:
    """Hosts that urllib, httpx and the RFC 3986 grammar (userinfo has no "@") read."""
    hosts = set()
    with contextlib.suppress(ValueError):
        hosts.add(urlsplit(url).hostname or "")
    with contextlib.suppress(httpx.InvalidURL, ValueError):
        hosts.add(httpx.URL(url).host)
    authority = url.split("//", 1)[1].split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
    if "@" in authority:
        hosts.add(authority.split("@", 1)[1].split("@", 1)[0].split(":", 1)[0].lower())
    # A host with a backslash in it resolves nowhere.
    return {host.lower().rstrip(".") for host in hosts if host and "\\" not in host}


PART = st.sampled_from(["good.example", "evil.example", "@", "\\", "\\@", ":x@", "/"])


# About one drawn URL in eight says something about the policy (assume() below): the
# others are cheap to throw away, and counting them would let the test pass unchecked.
@settings(suppress_health_check=[HealthCheck.filter_too_much])
@given(parts=st.lists(PART, min_size=1, max_size=5))
@example(parts=["good.example", "\\@", "evil.example", "/"])
@example(parts=["good.example", "@", "evil.example", "@", "good.example"])
def test_when_readers_disagree_an_allowlist_refuses_and_a_blocklist_blocks_either(
    parts: list[str],
) -> None:
    url = "https://" + "".join(parts)
    location = locate(url)
    browser = location.host if location is not None else None
    others = rfc3986_hosts(url) - {browser}
    readings = others | {browser}
    disagree = browser == "good.example" and bool(others)
    evil_read = "evil.example" in readings
    # Only these URLs say anything about the policy: search among them.
    assume(disagree or evil_read)
    event(f"readers disagree: {disagree}, some reader sees evil.example: {evil_read}")
    if disagree:
        assert not ALLOW.permits(url), (
            f"allowlist admitted {url!r}: browser {browser}, other clients {others}"
        )
    if evil_read:
        assert not BLOCK.permits(url), f"blocklist passed {url!r}: readings {readings}"


@pytest.mark.parametrize(
    "url",
    [
        "https://good.example\\@evil.example/",
        "https://good.example@evil.example@good.example/",
        "https://good.example/r?to=https://evil.example/x",
        "https://good.example/r?to=https%3A%2F%2Fevil.example%2Fx",
        "https://good.example/r?to=https%253A%252F%252Fevil.example",
        "https://good.example/r?a=1&to=http:\\\\evil.example",
        "https://good.example/r#https://evil.example/",
        "https://web.good.example/web/2020/https://evil.example/",
    ],
)
def test_both_lists_refuse_what_another_reader_or_a_redirect_takes_to_evil(url: str) -> None:
    assert not ALLOW.permits(url)
    assert ALLOW.match(url) is None
    assert not BLOCK.permits(url)
    assert BLOCK.match(url) == "evil.example"


def test_a_redirect_to_an_allowed_page_is_allowed() -> None:
    url = "https://good.example/r?to=https%3A%2F%2Fdocs.good.example%2F"
    assert ALLOW.permits(url)
    assert BLOCK.permits(url)


def test_citations_and_sources_that_redirect_are_violations() -> None:
    redirect = "https://good.example/r?to=https://evil.example/"
    transcript = answer(
        "see the page",
        HostedToolPart(kind="web_search", sources=(Source(url=redirect),)),
    )
    assert [(v.where, v.rule) for v in ALLOW.audit(transcript)] == [("source", None)]
    assert [(v.where, v.rule) for v in BLOCK.audit(transcript)] == [("source", "evil.example")]


# A4: text is read as renderers and browsers read it.
@pytest.mark.parametrize(
    ("text", "written"),
    [
        ('<a href="https://evil&#46;example/">x</a>', "https://evil&#46;example/"),
        ('<a href="https://evil&period;example/">x</a>', "https://evil&period;example/"),
        ('<a href="https://evil&#46example/">x</a>', "https://evil&#46example/"),
        ('<a href="https://evil&#x2E;example/">x</a>', "https://evil&#x2E;example/"),
        ('<a href="https://ev&#x0A;il.example/">x</a>', "https://ev&#x0A;il.example/"),
        ('<a href="https://ev&#9;il.example/">x</a>', "https://ev&#9;il.example/"),
        ('<a href="&#104;ttps&#58;//evil.example/">x</a>', "&#104;ttps&#58;//evil.example/"),
        (
            '<a href="&#x68;&#x74;&#x74;&#x70;&#x73;&#x3a;&#x2f;&#x2f;&#x65;&#x76;&#x69;&#x6c;'
            '&#x2e;&#x65;&#x78;&#x61;&#x6d;&#x70;&#x6c;&#x65;">x</a>',
            "&#x68;&#x74;&#x74;&#x70;&#x73;&#x3a;&#x2f;&#x2f;&#x65;&#x76;&#x69;&#x6c;"
            "&#x2e;&#x65;&#x78;&#x61;&#x6d;&#x70;&#x6c;&#x65;",
        ),
        ("[x](https://evil&#46;example/)", "https://evil&#46;example/"),
        ("[x](https://evil&period;example/ 'title')", "https://evil&period;example/"),
        ("<https://evil&#46;example/>", "https://evil&#46;example/"),
        ('<a href="\\\\evil.example/x">x</a>', "\\\\evil.example/x"),
        ('<a href="/\\evil.example/y">x</a>', "/\\evil.example/y"),
        ('<a href="\\/evil.example/y">x</a>', "\\/evil.example/y"),
        ("see evil\\.example for more", "evil\\.example"),
        ("see evil.example\ufe0f now", "evil.example\ufe0f"),
        ("see ev\ufe0fil.example now", "ev\ufe0fil.example"),
        ("see ev\U000e0100il.example now", "ev\U000e0100il.example"),
        ("see ev\u2064il.example now", "ev\u2064il.example"),
        ("Www.Evil.example/x", "Www.Evil.example/x"),
    ],
)
def test_markup_hides_no_link(text: str, written: str) -> None:
    assert written in flagged(BLOCK, text)
    if not text.startswith("see "):  # a bare evil.example is no link (.example is no TLD)
        assert written in flagged(ALLOW, text)


METADATA = DomainPolicy.block(["169.254.169.254"])


@pytest.mark.parametrize(
    "text",
    [
        "```sh\ncurl http://169.254.169.254/latest/meta-data/\n```",
        "```sh\ncurl http://0251.0376.0251.0376/latest/meta-data/\n```",
        "```sh\ncurl http://0xa9.0xfe.0xa9.0xfe/latest/\n```",
        "```sh\ncurl http://0xa9fea9fe/latest/\n```",
        "```sh\ncurl http://2852039166/latest/\n```",
        "```sh\ncurl 0251.0376.0251.0376/latest/meta-data/\n```",
        "run `curl 0xa9.0xfe.0xa9.0xfe`",
        "run curl 169.254.43518 to see it",
        "run curl 0251.0xfe.43518",
    ],
)
def test_the_metadata_address_in_any_ipv4_form_is_caught(text: str) -> None:
    assert flagged(METADATA, text) != []


def test_version_numbers_are_not_addresses() -> None:
    policy = DomainPolicy.block(["3.0.0.14", "1.2.0.3", "10.0.0.1"])
    assert flagged(policy, "Python 3.14 and v1.2.3 and 10.0.1 are out") == []


# B6: ordinary answers raise no alarm.
def test_a_compact_gfm_table_splits_cells_before_reading_links() -> None:
    table = (
        "|Tutorial|https://docs.good.example|\n"
        "|:--|--:|\n"
        "|Guide|https://good.example/guide|\n"
        "|Pipe \\| in text|https://good.example/a|\n"
    )
    assert flagged(ALLOW, table) == []
    assert flagged(ALLOW, table.replace("docs.good.example", "docs.evil.example")) == [
        "https://docs.evil.example"
    ]


def test_pipes_outside_a_table_are_text() -> None:
    text = "a|https://evil.example|b but no delimiter row"
    assert layout(text)[0] == text
    assert flagged(BLOCK, text) == ["https://evil.example|b"]


def test_comments_in_fenced_code_are_not_links_but_blocked_hosts_are_seen() -> None:
    text = "```js\n// settings\nload('//config.json') // and //evil.example/x.js\n```"
    assert flagged(ALLOW, text) == []
    assert flagged(BLOCK, text) == ["evil.example/x.js"]
    assert flagged(DomainPolicy.block(["config.json"]), text) == ["config.json"]


def test_tilde_fences_unclosed_fences_and_code_spans_are_code() -> None:
    for text in [
        "~~~\n//a.example/x\n~~~",
        "```\n//a.example/x",
        "use `//a.example/x` there",
        "use ``a `//a.example/x` b`` there",
    ]:
        assert flagged(ALLOW, text) == [], text
    # A fence that closes the paragraph is not the end of a code span begun inside it.
    assert flagged(ALLOW, "see ```x //a.example/y\n```\n") == ["//a.example/y"]


def test_a_full_url_in_code_is_still_read() -> None:
    assert flagged(ALLOW, "```\ncurl https://evil.example/x\n```") == ["https://evil.example/x"]


def test_decoding_maps_back_to_the_text_as_written() -> None:
    text = "a&#46;b \\. c&period;"
    decoded = decode(text, commonmark=False)
    assert decoded is not None
    assert decoded.text == "a.b \\. c."
    assert decoded.span(0, 3) == (0, 7)
    assert decoded.span(4, 6) == (8, 10)
    commonmark = decode(text, commonmark=True)
    assert commonmark is not None
    assert commonmark.text == "a.b . c."
    assert decode("plain text", commonmark=True) is None
    assert decode("&notaref and &#46", commonmark=True) is None


# B7: one page, one line.
def openai_answer() -> Transcript:
    page = "https://medium.com/@someone/a-post-1234"
    raw = (
        {"type": "web_search_call", "action": {"type": "search", "sources": [{"url": page}]}},
        {
            "type": "message",
            "content": [
                {
                    "type": "output_text",
                    "annotations": [
                        {"type": "url_citation", "url": page + "?utm_source=openai", "title": "A"}
                    ],
                }
            ],
        },
    )
    transcript = Transcript()
    transcript.add_user_message("question")
    transcript.add_assistant_message(
        [
            HostedToolPart(kind="web_search", sources=(Source(url=page),)),
            TextPart(
                text=f"As reported ([medium.com]({page}?utm_source=openai)).",
                citations=(Citation(url=page + "?utm_source=openai", title="A"),),
            ),
        ],
        origin=Origin(provider="openai", api="responses", model="m", raw=raw),
    )
    return transcript


def test_sources_are_one_per_url_and_one_per_page_on_request() -> None:
    transcript = openai_answer()
    assert [s.url for s in sources(transcript)] == [
        "https://medium.com/@someone/a-post-1234",
        "https://medium.com/@someone/a-post-1234?utm_source=openai",
    ]
    assert sources(transcript, per_page=True) == [
        Source(url="https://medium.com/@someone/a-post-1234", title="A")
    ]


def test_raw_is_still_accepted_for_one_release_with_a_deprecation_warning() -> None:
    transcript = openai_answer()
    with pytest.warns(DeprecationWarning, match="per_page=True"):
        assert sources(transcript, raw=True) == sources(transcript)
    with pytest.warns(DeprecationWarning, match="per_page=True"):
        assert sources(transcript, raw=False) == sources(transcript, per_page=True)
    with pytest.raises(TypeError, match="not both"):
        sources(transcript, raw=False, per_page=True)


def test_one_medium_link_is_one_page_violation_with_every_occurrence() -> None:
    violations = DomainPolicy.block(["medium.com"]).audit(openai_answer())
    assert len(violations) == 4  # a source, a citation, a mention and a link
    pages = per_page(violations)
    assert len(pages) == 1
    (page,) = pages
    assert page.url == "https://medium.com/@someone/a-post-1234"
    assert page.where == ("source", "citation", "text")
    assert page.rule == "medium.com"
    assert page.occurrences == tuple(violations)
    assert "medium.com" in page.urls
    assert "https://medium.com/@someone/a-post-1234?utm_source=openai" in page.urls
    assert str(page) == (
        "message 1 source/citation/text: https://medium.com/@someone/a-post-1234 "
        "(blocked by 'medium.com', 4 occurrences)"
    )


def test_different_pages_stay_apart() -> None:
    text = "see https://medium.com/a and https://medium.com/b?x=1 and https://medium.com/b?x=2"
    pages = per_page(DomainPolicy.block(["medium.com"]).audit(answer(text)))
    assert [page.url for page in pages] == [
        "https://medium.com/a",
        "https://medium.com/b?x=1",
        "https://medium.com/b?x=2",
    ]


def test_a_mention_with_no_page_on_its_host_is_its_own_line() -> None:
    pages = per_page(DomainPolicy.block(["medium.com"]).audit(answer("ask medium.com")))
    assert [(page.url, page.where) for page in pages] == [("medium.com", ("text",))]


@pytest.mark.parametrize(
    "url",
    [
        "a.com/r?to=https://evil.com/",
        "a.com/r?to=https%3A%2F%2Fevil.com%2F",
        "www.a.com/go?url=http://evil.com",
        "a.com/r?next=//evil.com/",
    ],
)
def test_a_url_written_without_a_scheme_is_judged_by_what_it_carries_too(url: str) -> None:
    # A redirector's target counts with or without the outer scheme; only the shortcut
    # that skips the search for a carried URL looked for a second ':' after a scheme.
    assert not DomainPolicy.block(["evil.com"]).permits(url)
    assert DomainPolicy.block(["evil.com"]).match(url) == "evil.com"


@pytest.mark.parametrize("label", ["XN--mnchen-3ya", "Xn--mnchen-3ya", "xN--mnchen-3ya"])
def test_a_punycode_label_in_capitals_is_read_for_its_look_alike_as_in_lower_case(
    label: str,
) -> None:
    # Hosts are case-insensitive: a browser reads XN--mnchen-3ya.de as münchen.de.
    policy = DomainPolicy.block(["munchen.de"])
    lower = f"https://{label.lower()}.de/"
    written = f"https://{label}.de/rathaus"
    assert not policy.permits(lower)
    assert not policy.permits(written)
    assert flagged(policy, f"See {written} for the hours.") == [written]
