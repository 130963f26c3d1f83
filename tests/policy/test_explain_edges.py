"""``DomainPolicy.explain`` at its edges: odd hosts, other readers, deep nesting, long texts."""

from __future__ import annotations

from typing import Any

import pytest
from agentloop.transcript import Message, TextPart

from agentloop_tools.web import DomainPolicy, Explanation
from agentloop_tools.web._policy._explain import MAX_ITEMS, MAX_TEXT

pytestmark = pytest.mark.core

ALLOW = DomainPolicy.allow(["python.org"])
BLOCK = DomainPolicy.block(["evil.com"])


def readings(explanation: Explanation) -> list[tuple[str, str | None, str | None, bool]]:
    return [(r.name, r.host, r.rule, r.permitted) for r in explanation.readings]


def audited(policy: DomainPolicy, text: str) -> bool:
    """Whether the audit finds anything in ``text`` as an answer."""
    return bool(policy.audit([Message(role="assistant", content=(TextPart(text=text),))]))


def test_explain_takes_only_a_string() -> None:
    value: Any = b"https://python.org/"
    with pytest.raises(TypeError, match=r"explain\(\) takes a URL or a text \(str\), not bytes"):
        ALLOW.explain(value)


def test_a_url_a_browser_refuses_is_judged_on_its_best_effort_host() -> None:
    explanation = BLOCK.explain("https://evil.com:99999/")
    assert explanation.permitted is BLOCK.permits("https://evil.com:99999/") is False
    assert explanation.verdict == "blocked by 'evil.com'"
    [reading] = explanation.readings
    assert (reading.host, reading.rule) == ("evil.com", "evil.com")
    assert reading.note == "a browser refuses this URL; the host is a best-effort reading"


def test_a_blocklist_names_the_other_reader_whose_host_it_blocks() -> None:
    # A browser reads good.com; urllib, httpx and requests read evil.com.
    explanation = BLOCK.explain("https://good.com\\@evil.com/")
    assert explanation.permitted is False
    assert explanation.verdict == "blocked by 'evil.com'"
    assert readings(explanation) == [
        ("WHATWG", "good.com", "evil.com", False),
        ("RFC 3986", "evil.com", "evil.com", False),
    ]
    browser, other = explanation.readings
    assert "another reading of the same request is blocked" in browser.note
    # Only an allowlist limits itself to the browser's reading.
    assert other.note == "the host urllib, httpx and requests read"


@pytest.mark.parametrize("url", ["http://[::ffff:127.0.0.1]/", "http://[::ffff:7f00:1]/"])
def test_an_ipv4_mapped_ipv6_address_is_read_as_the_ipv4_it_reaches(url: str) -> None:
    blocked = DomainPolicy.block(["127.0.0.1"]).explain(url)
    assert blocked.permitted is False
    assert blocked.verdict == "blocked by '127.0.0.1'"
    assert readings(blocked) == [
        ("WHATWG", "[::ffff:7f00:1]", "127.0.0.1", False),
        ("IPv4 in IPv6", "127.0.0.1", "127.0.0.1", False),
    ]
    # An allowlist naming the IPv4 address still admits only the browser's host.
    allowed = DomainPolicy.allow(["127.0.0.1"]).explain(url)
    assert allowed.permitted is False
    assert ("IPv4 in IPv6", "127.0.0.1", "127.0.0.1", False) in readings(allowed)
    assert "an allowlist admits only the browser's reading" in str(allowed)


def test_a_host_behind_a_second_userinfo_is_a_reading_of_its_own() -> None:
    # A browser splits at the last "@" (python.org), httpx at the first (evil.com).
    url = "//a@evil.com@python.org/"
    explanation = BLOCK.explain(url)
    assert explanation.permitted is BLOCK.permits(url) is False
    assert explanation.verdict == "blocked by 'evil.com'"
    browser, other = explanation.readings
    assert (browser.host, browser.permitted) == ("python.org", False)
    assert (other.host, other.rule, other.permitted) == ("evil.com", "evil.com", False)
    # httpx's reading, named as such (it was "other reading" for a scheme-relative URL).
    assert (other.name, other.note) == ("RFC 3986", "the host urllib, httpx and requests read")


def test_a_path_that_decodes_past_an_allowed_path_rule_is_shown_decoded() -> None:
    policy = DomainPolicy.allow(["python.org/docs"])
    url = "https://python.org/docs%2F..%2Fadmin"
    explanation = policy.explain(url)
    assert explanation.permitted is policy.permits(url) is False
    decoded = explanation.readings[-1]
    assert (decoded.name, decoded.text, decoded.rule, decoded.permitted) == (
        "decoded path",
        "/admin",
        None,
        False,
    )
    assert decoded.note == "the path as servers that decode every escape read it"


def test_urls_nested_deeper_than_the_gate_follows_are_not_read() -> None:
    def carrying(depth: int) -> str:
        url = "https://evil.com/"
        for hop in range(depth, 0, -1):
            url = f"https://r{hop}.example/?u={url}"
        return url

    # Three redirectors deep the gate still reads the target; a fourth hides it from
    # both the gate and the explanation alike.
    caught, hidden = carrying(3), carrying(4)
    assert BLOCK.explain(caught).permitted is BLOCK.permits(caught) is False
    assert [r.host for r in BLOCK.explain(caught).readings][-1] == "evil.com"
    explanation = BLOCK.explain(hidden)
    assert explanation.permitted is BLOCK.permits(hidden) is True
    assert [r.host for r in explanation.readings] == [
        "r1.example",
        "r2.example",
        "r3.example",
        "r4.example",
    ]


def test_a_link_that_names_no_host_says_so() -> None:
    explanation = ALLOW.explain("see [a](https://:80/) there")
    assert explanation.kind == "text"
    assert explanation.permitted is not audited(ALLOW, "see [a](https://:80/) there")
    [item] = explanation.items
    [reading] = item.readings
    assert (reading.host, reading.rule, reading.note) == (None, None, "names no host")
    assert "WHATWG: no host, no rule, refused (names no host)" in str(explanation)


def test_an_href_split_over_lines_is_explained_as_the_browser_joins_it() -> None:
    text = '<a href="https://evil.\ncom/setup">setup</a>'
    explanation = BLOCK.explain(text)
    assert explanation.permitted is not audited(BLOCK, text)
    assert explanation.permitted is False
    # One finding for the whole attribute value, not the pieces either side of the newline.
    [item] = explanation.items
    assert (item.subject, item.span, item.verdict) == (
        "https://evil.\ncom/setup",
        (9, 32),
        "blocked by 'evil.com'",
    )
    assert [(r.host, r.rule) for r in item.readings] == [("evil.com", "evil.com")]


def test_a_text_over_the_limit_says_what_was_left_unexplained() -> None:
    text = "x" * MAX_TEXT + " https://evil.com/after"
    explanation = BLOCK.explain(text)
    assert explanation.truncated == (
        "Only the first 1,000,000 characters were explained; the verdict is the whole text's."
    )
    assert explanation.subject == "x" * MAX_TEXT
    assert explanation.items == ()
    assert str(explanation).endswith(explanation.truncated)
    # The verdict is still the gate's: the audit of the whole text finds the link.
    assert explanation.permitted is False
    assert explanation.verdict == "blocked by 'evil.com'"


@pytest.mark.parametrize(
    "word",
    [
        "[a](https://evil.com/)",
        "<https://evil.com/>",
        "(https://evil.com/)",
        "[a](//evil.com/)",
        "[x](https&#58;//evil.com/)",
        "**https://evil.com/**",
    ],
)
def test_one_word_holding_a_link_is_explained_as_the_text_the_audit_reads(word: str) -> None:
    # Read as one URL, these named a host "[a]" or "<https" and were permitted.
    explanation = BLOCK.explain(word)
    assert explanation.kind == "text"
    assert explanation.permitted is False
    assert explanation.verdict == "blocked by 'evil.com'"
    allowed = DomainPolicy.allow(["python.org"]).explain(word.replace("evil.com", "python.org"))
    assert allowed.permitted is True, allowed


def test_a_link_only_the_decoded_text_shows_past_the_item_limit_is_not_listed() -> None:
    mentions = " ".join(f"h{number}.example" for number in range(MAX_ITEMS + 50))
    text = mentions + ' <a href="&#104;ttps://evil.com/">x</a>'
    explanation = BLOCK.explain(text)
    # The verdict is the audit's; the list stops at the bound, and says so.
    assert explanation.permitted is not audited(BLOCK, text)
    assert explanation.permitted is False
    assert len(explanation.items) == MAX_ITEMS
    assert all(item.permitted for item in explanation.items)
    # Found: the mentions and the escaped link (the scanner reads it, undecoded, as a link).
    assert explanation.truncated == (
        f"Only the first {MAX_ITEMS} of {MAX_ITEMS + 51} links and mentions were explained."
    )


def test_a_link_only_the_decoded_text_shows_is_an_item_of_its_own() -> None:
    # The scanner reads no host in the escaped link; the audit decodes it to evil.com.
    text = "see [a](https&#58;&#47;&#47;evil&#46;com/) ok"
    explanation = BLOCK.explain(text)
    assert explanation.permitted is not audited(BLOCK, text)
    [item] = explanation.items
    assert (item.kind, item.permitted, item.span, item.rule, item.verdict) == (
        "url",
        False,
        (8, 41),
        "evil.com",
        "blocked by 'evil.com'",
    )
    assert text[8:41] == item.subject
    assert "1 link(s) and mention(s) found, 1 refused." in str(explanation)
    # Its reading is of the link a reader follows, not of the references as written.
    assert [(r.name, r.text, r.host, r.rule, r.permitted) for r in item.readings] == [
        ("decoded", "https://evil.com/", "evil.com", "evil.com", False)
    ]


def test_the_notes_say_what_decided_under_each_mode() -> None:
    docs = DomainPolicy.allow(["python.org/docs"])
    [reading] = docs.explain("https://python.org/x").readings
    assert reading.note == "an allow rule names this host, but not this path"
    [reading] = docs.explain("https://evil.com/").readings
    assert reading.note == "no allow rule names this host"
    # A blocklist judges every host a client reads; no allowlist is in play.
    browser, rfc = BLOCK.explain("//a@evil.com@python.org/").readings
    assert browser.note.startswith("other clients read another host: each is judged")
    assert (rfc.name, rfc.host, rfc.permitted) == ("RFC 3986", "evil.com", False)
