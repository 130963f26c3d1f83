"""A blocklist rules tokens out before reading them: it must never rule out a finding.

The rule-out (``RuleFinder.tokens_to_read``) is a speed-up only: every audit must
equal the audit that reads every token closely. Hypothesis builds texts from pieces
that stress where hosts start and end (underscores, dots of every width, escapes,
defanged dots, punycode, CJK, characters IDNA deletes or maps) and rule lists drawn
from the same pieces.
"""

from __future__ import annotations

import re

import pytest
from agentloop import Transcript
from agentloop.transcript import TextPart
from hypothesis import example, given, settings
from hypothesis import strategies as st

from agentloop_tools.web import DomainPolicy
from agentloop_tools.web._text._finder import tokens
from agentloop_tools.web._text._prefilter import RuleFinder

pytestmark = pytest.mark.core

FRAGMENTS = st.sampled_from(
    [
        "evil", "EVIL", "com", "e", "x", "b", "a_b", "_", "-", ".", "..", "。", "．", "｡",
        "www.", "WWW.", "xn--", "XN--", "xn--e-ufa", "http://", "https:", "//", "@", ":",
        "/", "?u=", "%2e", "%2F", "\\", "[.]", "(dot)", "[DOT]", "{.}", "(", ")", "[",
        "]", "](", " ", "\n", "\t", "東京", "を", "ｅ", "ｃｏｍ", "\u00ad", "\u3164",
        "\u115f", "\u200b", "İ", "K", "\u212a", "1", "127", "0x7f", "&#46;", "`", "<",
        '"', "e.com", "evil.com", "a_b.evil.com", "com.", "evil-com", "3com",
        "xn--exmple-cua", "%2ecom", "ev%69l", "ⓔⓥⓘⓛ", "ⓒⓞⓜ", "\u0301", "\uff0d", "\ufe63",
        "'s", "[1]", "&", ",", "!", "%", "?to=https%253A%252F%252F",
    ]
)  # fmt: skip
TEXTS = st.lists(FRAGMENTS, max_size=30).map("".join)
RULES = st.lists(
    st.sampled_from(
        [
            "evil.com",
            "e.com",
            "com",
            "evil",
            "b.x",
            "a_b.evil.com",
            "www.evil.com",
            "evil.com/x",
            "x.evil.com",
            "xn--e-ufa.com",
            "3com.com",
            "e",
            "127.0.0.1",
            "www.evil",
            "example.com",
        ]
    ),
    min_size=1,
    max_size=4,
    unique=True,
)


def audit(policy: DomainPolicy, text: str) -> list[object]:
    transcript = Transcript()
    transcript.add_user_message("question")
    transcript.add_assistant_message([TextPart(text=text)])
    return list(policy.audit(transcript))


def read_every_token(finder: RuleFinder, text: str) -> list[tuple[int, str]]:
    return list(tokens(text))


@settings(max_examples=600)
@given(rules=RULES, text=TEXTS)
@example(rules=["evil.com"], text="https://evil.com_x/")
@example(rules=["www.evil"], text="x_www.evil/")
@example(rules=["evil.com"], text="https://evil%2ecom/ https://good.com\\@evil.com/")
@example(rules=["example.com"], text="see xn--exmple-cua.com")
@example(rules=["evil.com"], text="see evil。com and ｅvil.com")
@example(rules=["xn--e-ufa.com"], text="é.com 東京.com")
@example(rules=["evil.com"], text="evil[.]com evil(dot)com")
@example(rules=["evil.com"], text="ev\u3164il.com ev\u00adil.com ev\u115fil.com")
@example(rules=["evil.com"], text="İİİİİİİİ see evil.com")
@example(rules=["evil.com"], text="\ud800 see evil.com")
@example(rules=["evil"], text="http://evil/ and evil")
@example(rules=["com"], text="http://com。evil")
@example(rules=["evil.com"], text="evil.com_ evil.com._ evil.com..evil")
@example(rules=["evil.com"], text="https://a_b.evil.com_x/" + "_a" * 40 + ".evil.com")
def test_ruling_tokens_out_never_hides_a_finding(rules: list[str], text: str) -> None:
    policy = DomainPolicy.block(rules)
    fast = audit(policy, text)
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(RuleFinder, "tokens_to_read", read_every_token)
        assert audit(policy, text) == fast


ALPHABET = st.sampled_from(
    list("abcE.-_:/@%\\[](){}?#=&;,!*~'`<> \n") + list("。．｡東をｅ\u00ad\u3164İ")
)


@st.composite
def texts_and_rules(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A text, and rules made of host-like stretches of it (whichever are valid rules)."""
    text = draw(st.text(ALPHABET, max_size=60))
    stretches = re.findall(r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*", text.lower()) or ["a.b"]
    chosen = draw(st.lists(st.sampled_from(stretches), min_size=1, max_size=3, unique=True))
    rules = []
    for candidate in chosen:
        for rule in (candidate, candidate.split(".", 1)[-1]):
            try:
                DomainPolicy.block([rule])
            except ValueError:
                continue
            rules.append(rule)
    return text, rules or ["a.b"]


@settings(max_examples=600)
@given(case=texts_and_rules())
def test_ruling_out_never_hides_a_finding_of_rules_taken_from_the_text(
    case: tuple[str, list[str]],
) -> None:
    text, rules = case
    policy = DomainPolicy.block(rules)
    fast = audit(policy, text)
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(RuleFinder, "tokens_to_read", read_every_token)
        assert audit(policy, text) == fast


def test_a_run_of_many_labels_without_a_rule_is_ruled_out_in_linear_time() -> None:
    # A dotless run must not be re-scanned from each of its characters.
    policy = DomainPolicy.block(["evil.com"])
    text = "x" * 200_000 + ".y " + "a_" * 50_000 + ".com"
    assert audit(policy, text) == []


def test_only_tokens_that_may_name_a_rule_are_read() -> None:
    finder = RuleFinder(["evil.com"], cjk=True)
    text = "see docs.python.org, version 3.12.1, EVIL。com and [x](https://evil.com/a). évil.org"
    read = finder.tokens_to_read(text)
    assert [token for _, token in read] == ["EVIL。com", "[x](https://evil.com/a).", "évil.org"]
    assert all(text[start:].startswith(token) for start, token in read)


def test_a_policy_with_its_finder_built_still_pickles() -> None:
    import pickle

    policy = DomainPolicy.block(["evil.com"])
    assert audit(policy, "see evil.com") != []
    copied = pickle.loads(pickle.dumps(policy))
    assert copied == policy
    assert audit(copied, "see evil.com") == audit(policy, "see evil.com")


def test_no_character_substrings_speak_for_becomes_part_of_an_ascii_host() -> None:
    """The CJK characters ruled on never turn into ASCII host characters nor vanish."""
    import unicodedata

    from agentloop_tools.web._text._linkable import has_deleted
    from agentloop_tools.web._text._prefilter import _CJK_RULED, _DOTS

    ruled = re.compile(f"[{_CJK_RULED}]")
    host_char = re.compile(r"[A-Za-z0-9_.\-]")
    offenders = []
    for code in range(0x80, 0x110000):
        char = chr(code)
        if char in _DOTS or not ruled.match(char):
            continue
        folded = unicodedata.normalize("NFKC", char)
        forms = (char.lower(), char.upper(), char.casefold(), folded, folded.casefold())
        if any(host_char.search(form) for form in forms) or has_deleted(char):
            offenders.append(f"U+{code:04X}")
    assert offenders == []


def every_token(text: str) -> list[tuple[int, str]]:
    return list(tokens(text))


ALLOW_RULES = st.lists(
    st.sampled_from(["good.com", "e.com", "evil.com/x", "xn--e-ufa.com", "127.0.0.1", "com"]),
    min_size=1,
    max_size=3,
    unique=True,
)


@settings(max_examples=600)
@given(rules=ALLOW_RULES, text=TEXTS)
@example(rules=["good.com"], text="see Www.evil.com and https:evil.com and \\\\evil.com/x")
@example(rules=["good.com"], text="curl evil.com/x and config.py and [a](//evil.com/)")
@example(rules=["good.com"], text="https:)[.]")  # no host: neither reading flags it
def test_an_allowlist_reading_only_link_tokens_finds_what_reading_every_token_finds(
    rules: list[str], text: str
) -> None:
    # Issue 16: an allowlist without bare_hosts reads only tokens that can hold a link.
    policy = DomainPolicy.allow(rules)
    fast = audit(policy, text)
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr("agentloop_tools.web._policy._text_audit.link_tokens", every_token)
        assert audit(policy, text) == fast
