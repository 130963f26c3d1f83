"""``DomainPolicy.explain``: readings, hosts and rules, and a verdict that is the gate's own."""

from __future__ import annotations

import pytest
from agentloop.transcript import Message, TextPart
from hypothesis import event, given, settings
from hypothesis import strategies as st

from agentloop_tools.testing.strategies import answers, urls
from agentloop_tools.web import DomainPolicy, Explanation, Reading

pytestmark = pytest.mark.core

ALLOW = DomainPolicy.allow(["python.org", "docs.djangoproject.com"])
BLOCK = DomainPolicy.block(["wikipedia.org", "evil.example/private"])


def names(explanation: Explanation) -> list[tuple[str, str | None, str | None, bool]]:
    return [(r.name, r.host, r.rule, r.permitted) for r in explanation.readings]


def test_a_permitted_url_names_the_rule_that_admits_it() -> None:
    explanation = ALLOW.explain("https://docs.python.org/3/")
    assert isinstance(explanation, Explanation)
    assert explanation.permitted is True
    assert names(explanation) == [("WHATWG", "docs.python.org", "python.org", True)]
    assert all(isinstance(reading, Reading) for reading in explanation.readings)
    assert str(explanation) == (
        "DomainPolicy.allow(['python.org', 'docs.djangoproject.com']) permits URL "
        "'https://docs.python.org/3/'. Readings: WHATWG: docs.python.org, rule "
        "'python.org', permitted."
    )


def test_a_look_alike_host_is_its_own_reading() -> None:
    explanation = ALLOW.explain("https://xn--pythn-mua.org/")  # pythön.org
    assert explanation.permitted is False
    assert explanation.verdict == "not on the allowlist"
    assert ("look-alike", "python.org", "python.org", False) in names(explanation)
    assert "an allowlist admits only the browser's reading" in str(explanation)


def test_readers_that_disagree_show_both_hosts() -> None:
    explanation = ALLOW.explain("https://evil.example\\@python.org/")
    assert explanation.permitted is False
    hosts = {reading.host for reading in explanation.readings}
    assert {"evil.example", "python.org"} <= hosts
    assert "other clients read another host: an allowlist admits neither" in str(explanation)


def test_a_nested_url_is_read_and_can_decide() -> None:
    explanation = BLOCK.explain("https://ok.example/?to=https%3A%2F%2Fen.wikipedia.org%2F")
    assert explanation.permitted is False
    assert explanation.verdict == "blocked by 'wikipedia.org'"
    assert names(explanation) == [
        ("WHATWG", "ok.example", None, True),
        ("nested", "en.wikipedia.org", "wikipedia.org", False),
    ]


def test_a_decoded_path_is_shown_when_path_rules_exist() -> None:
    explanation = BLOCK.explain("https://evil.example/%2e%2e/private/x")
    assert explanation.permitted is BLOCK.permits("https://evil.example/%2e%2e/private/x")
    assert any(reading.name in ("WHATWG", "decoded path") for reading in explanation.readings)


def test_no_host_is_said() -> None:
    explanation = ALLOW.explain("mailto:someone@python.org")
    # Not one token naming a host: explained as a text with nothing in it to judge.
    assert explanation.kind == "text"
    assert explanation.permitted is True


def test_a_text_explains_every_link_and_mention() -> None:
    text = (
        "See [docs](https://docs.python.org/3/), https://en.wikipedia.org/wiki/X and evil.example."
    )
    explanation = ALLOW.explain(text)
    assert explanation.kind == "text"
    assert explanation.permitted is False
    subjects = [(item.subject, item.kind, item.permitted) for item in explanation.items]
    assert subjects == [
        ("https://docs.python.org/3/", "url", True),
        ("https://en.wikipedia.org/wiki/X", "url", False),
        ("evil.example", "mention", True),  # a bare host an allowlist does not judge
    ]
    assert explanation.items[1].span == (40, 71)
    assert text[40:71] == "https://en.wikipedia.org/wiki/X"
    assert "2 refused" not in str(explanation)
    assert "3 link(s) and mention(s) found, 1 refused." in str(explanation)
    assert "bare_hosts=True judges every one" in str(explanation)
    # A blocklist judges bare mentions.
    blocked = BLOCK.explain("ask wikipedia.org")
    assert [(i.subject, i.permitted, i.verdict) for i in blocked.items] == [
        ("wikipedia.org", False, "blocked by 'wikipedia.org'")
    ]


def test_an_escaped_link_only_the_decoded_text_shows_is_explained() -> None:
    text = '<a href="&#104;ttps://en.wikipedia.org/">x</a>'
    explanation = BLOCK.explain(text)
    audited = BLOCK.audit([Message(role="assistant", content=(TextPart(text=text),))])
    assert explanation.permitted is (not audited) is False
    assert any("wikipedia.org" in (item.subject) for item in explanation.items)


def test_hostile_input_is_bounded_and_never_raw() -> None:
    explanation = BLOCK.explain("https://x.example/\x1b]0;pwned\x07 " + "evil.example " * 5000)
    assert "\x1b" not in str(explanation)
    assert len(explanation.items) <= 200
    assert "Only the first 200" in explanation.truncated


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_the_verdict_of_a_url_is_permits(data: st.DataObject) -> None:
    policy = data.draw(st.sampled_from([ALLOW, BLOCK]))
    permitted = data.draw(st.booleans())
    url = data.draw(urls(policy, permitted=permitted))
    explanation = policy.explain(url)
    event(f"explained as a {explanation.kind}")
    if explanation.kind == "url":
        assert explanation.permitted is policy.permits(url) is permitted
    else:
        assert explanation.permitted is permitted


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_the_verdict_of_a_text_is_the_audit(data: st.DataObject) -> None:
    policy = data.draw(st.sampled_from([ALLOW, BLOCK]))
    violating = data.draw(st.booleans())
    text = data.draw(answers(policy, violating=violating))
    explanation = policy.explain(text)
    assert explanation.permitted is (not violating)
    if violating and explanation.kind == "text":  # one bare URL is explained as a URL
        assert any(not item.permitted for item in explanation.items)
