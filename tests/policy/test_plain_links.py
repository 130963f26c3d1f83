"""The plain-link shortcut (issue 30) judges exactly as the full reading does.

``plain_url`` reads the common shapes of a link token with one regex and tells where the
link's host ends; the finder then skips ``_add_link``, and an audit that judges links
only, on a list of host rules, skips the token reading and ``_refused`` too
(``TextAudit._plain_refused``: the host decides). The oracle is the reading without the
shortcuts: ``plain_url`` switched off (the general search for link starts and
``_add_link``), every finding through ``_refused`` and ``_ruling``. Tokens and texts:
generated ones, the hostile shapes, answer-like and benchmark-like text (link-dense and
prose), and the real cassettes when present. Violations (every field, in order) and the
rendered ``web_search`` results are compared.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from agentloop_tools.web import DomainPolicy
from agentloop_tools.web._domains._index import RuleIndex
from agentloop_tools.web._domains._rules import parse_rule
from agentloop_tools.web._domains._url import AUTHORITY_END
from agentloop_tools.web._policy import _text_audit
from agentloop_tools.web._policy._memo import AuditMemo
from agentloop_tools.web._policy._text_audit import TextAudit
from agentloop_tools.web._search._render import SearchHit, render_results
from agentloop_tools.web._text import _finder
from agentloop_tools.web._text._extent import plain_url
from agentloop_tools.web._text._finder import Found, read_token, tokens
from tests.policy.test_hot_path import URLS, transcript_of
from tests.real_cassettes import body_strings
from tests.text.test_finder_speed import TEXTS, answer_like
from tests.text.test_hostile_text import HOSTILE

pytestmark = pytest.mark.core


@contextlib.contextmanager
def without_shortcut() -> Iterator[None]:
    """The reading before the shortcut: no plain shapes in the finder or the audit."""
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(_finder, "plain_url", lambda token: None)
        patched.setattr(_text_audit, "plain_host_link", lambda token: None)
        yield


def full_reading(token: str, *, mentions: bool) -> list[Found]:
    with without_shortcut():
        return read_token(token, mentions=mentions)


AUDITS = [
    TextAudit("allow", RuleIndex(map(parse_rule, ["abc.com", "python.org", "a.example", "x1.io"]))),
    TextAudit("allow", RuleIndex(map(parse_rule, ["abc.com", "www.a.example"]))),
    TextAudit("block", RuleIndex(map(parse_rule, ["evil.example", "abc.com", "b.com", "x1.io"]))),
]


def check_token(token: str) -> None:
    """plain_url's answer is the full reading's, and the audit's shortcut its verdict."""
    plain = plain_url(token)
    for mentions in (False, True):
        assert read_token(token, mentions=mentions) == full_reading(token, mentions=mentions)
    if plain is not None:
        start, end, host_start, host_end = plain
        written = token[start:end]
        assert full_reading(token, mentions=False) == [
            Found(start, end, written, "url", (written,))
        ]
        authority = AUTHORITY_END.search(token, host_start, end)
        assert host_end == (authority.start() if authority else end)
    for audit in AUDITS:
        shortcut = audit._plain_refused(token, AuditMemo())
        if shortcut is not None:
            # A blocklist reads the hosts named around the link too.
            mentions = audit._mode == "block"
            with without_shortcut():
                assert shortcut == audit._refused(
                    token, read_token(token, mentions=mentions), AuditMemo()
                )


POLICIES = [
    DomainPolicy.allow(["abc.com", "python.org", "a.example", "x1.io"]),
    DomainPolicy.allow(["abc.com", "www.a.example", "xn--mnchen-3ya.de"]),
    DomainPolicy.allow(["abc.com", "a.example"], bare_hosts=True),
    DomainPolicy.allow(["abc.com/articles", "a.example"]),  # a path rule: no shortcut
    DomainPolicy.block(["evil.example", "evil.com", "b.com", "x1.io", "munchen.de"]),
    DomainPolicy.block(["evil.example", "127.0.0.1"]),
]


def outcome(policy: DomainPolicy, text: str) -> tuple[list[tuple[Any, ...]], str]:
    violations = policy.audit(transcript_of(text))
    half = len(text) // 2
    hits = [SearchHit(text[:half][:300], "https://a.example/", text[half:][:600])]
    return [dataclasses.astuple(v) for v in violations], render_results(hits, policy=policy)


def check_audits(texts: list[str]) -> None:
    fast = [outcome(policy, text) for text in texts for policy in POLICIES]
    with without_shortcut():
        slow = [outcome(policy, text) for text in texts for policy in POLICIES]
    assert fast == slow


TOKEN_PIECES = st.sampled_from(
    [
        "https://", "http://", "HTTPS://", "www.", "WwW.", "(", ")", "[a.b](", "](", "[", "]",
        "abc", ".com", ".", "..", "-", "1", "9x", "_", "xn--", "XN--", "/", "?", "#", "%2F",
        "=", "=/", "=//", "&", "@", ":", ":80", "'", "!", ",", "~", "*", ";", "。", "｡", "東京",
        "参见：", "é", "\\", "?to=https://evil.com/", "a.example", "x1.io", "[b.com](", "b.com",
        "evil.example", "東京。", "(.)", "[dot]",
    ]
)  # fmt: skip
TOKENS = st.lists(TOKEN_PIECES, max_size=14).map("".join)


@settings(max_examples=1500, deadline=None)
@given(token=TOKENS)
@example(token="[abc.com](https://abc.com/x?utm_source=openai).")
@example(token="www.abc.com/news.")
@example(token="东京的人口。https://abc.com/ja/3。.")
@example(token="https://www.abc.com/wiki/Page_(x)).")
@example(token="https://abc.com.")
@example(token="https://abc.com./x")
@example(token="https://abc.com!?")
@example(token="(https://abc.com?)")
@example(token="https://a.9x/")
@example(token="https://abc.com/r?to=%68ttps%3A%2F%2Fevil.com%2F")
@example(token="https://abc.com/a=//evil.example/")
@example(token="https://XN--mnchen-3ya.de/")
@example(token="www.x")
@example(token="[b.com](https://evil.example/b.com/x)")
@example(token="[b.com](https://abc.com/b.com/x).")
@example(token="[abc.b.com](https://abc.com/x)")
@example(token="https://evil.example/x_")
@example(token="https://evil.example/x.b.com")
@example(token="https://evil.example/x).b.com")
@example(token="https://abc.com/x.b.com")
@example(token="https://abc.com/x[.]b.com")
@example(token="東京。b.com https://evil.example/")
@example(token="東京。b.comhttps://evil.example/x")
@example(token="b.com東京https://evil.example/x")
def test_plain_links_are_read_and_judged_as_the_full_reading(token: str) -> None:
    check_token(token)


@settings(max_examples=200, deadline=None)
@given(text=st.lists(st.one_of(TEXTS, URLS, TOKENS), max_size=6).map(" ".join))
@example(text="see [abc.com](https://abc.com/a) www.evil.com/x https://abc.com./y `https://b.com/`")
@example(
    text="[b.com](https://evil.example/1) [b.com](https://abc.com/2) [b.com](HTTP://x1.io/) "
    "東京。b.comhttps://evil.example/ 東京。b.comhttps://abc.com/x 東京。b.comhttp://abc.com/"
)
def test_generated_texts_are_audited_as_without_the_shortcut(text: str) -> None:
    check_audits([text])


def _bench_like(seed: int) -> list[str]:
    """The benchmark's texts (link-dense and prose), small."""
    import random

    rng = random.Random(seed)
    hosts = ["abc.com", "www.python.org", "evil.example", "a-b.co.uk", "x1.io", "b.com"]
    dense = [
        f"[{h}](https://{h}/articles/{rng.randint(1, 999)}?utm_source=openai). "
        f"www.{h}/news. according to {h}, 東京的人口。https://{h}/ja/{rng.randint(1, 99)}。. "
        f"(see https://www.{h}/wiki/Page_(x)). write to press@{h}. "
        for h in rng.sample(hosts, len(hosts))
    ]
    return ["".join(dense), "The data (see https://www.abc.com/wiki/Page_(x)?utm_source=openai). "]


CORPUS = [
    *(shape[0][:12_000] for shape in HOSTILE.values()),
    *(answer_like(seed, 4000) for seed in range(8)),
    *(text for seed in range(4) for text in _bench_like(seed)),
]


@pytest.mark.parametrize("index", range(len(CORPUS)))
def test_the_corpus_is_audited_as_without_the_shortcut(index: int) -> None:
    text = CORPUS[index]
    for _, token in list(tokens(text))[:400]:
        check_token(token[:300])
    check_audits([text])


REAL = sorted(set(body_strings()), key=len)


@pytest.mark.skipif(not REAL, reason="real cassettes not found (tests/real_cassettes.py)")
def test_the_real_cassettes_are_audited_as_without_the_shortcut() -> None:
    seen = {token for text in REAL for _, token in tokens(text) if len(token) < 400}
    for token in sorted(seen)[:4000]:
        check_token(token)
    check_audits([text for text in REAL if len(text) < 100_000][:300])
    check_audits(["\n".join(REAL)[:400_000]])


def test_the_common_shapes_take_the_shortcut() -> None:
    allow = AUDITS[0]
    for token, flagged in [
        ("[abc.com](https://abc.com/x?utm_source=openai).", []),
        ("www.evil.com/news.", [(0, 17, "www.evil.com/news", None, False)]),
        ("东京的人口。https://abc.com/ja/3。.", []),
        ("https://www.abc.com/wiki/Page_(x)).", []),
    ]:
        assert allow._plain_refused(token, AuditMemo()) == flagged, token
    # Not plain: the full reading decides.
    for token in ["https://abc.com./x", "https://abc.com/r?to=https%3A%2F%2Fevil.com", "x:y"]:
        assert allow._plain_refused(token, AuditMemo()) is None, token


def test_the_hosts_named_before_a_link_are_judged_once_per_head() -> None:
    """A blocklist's mentions before a plain link read up to its scheme ("東京https"), so
    they are remembered by the token up to the link's host, not by the text before it."""
    policy = DomainPolicy.block(["xn--https-w91hq39l", "b.com"])  # 東京https
    text = (
        "例子。東京https://a.example/x 例子。東京http://a.example/x 例子。東京https://b.com/y "
        "[b.com](https://a.example/1) [b.com](https://b.com/2) [b.com](https://a.example/3)"
    )
    fast = outcome(policy, text)
    with without_shortcut():
        assert fast == outcome(policy, text)
    starts = {violation[4][0] for violation in fast[0]}
    assert 0 in starts
    assert text.index("例子。東京http:") not in starts  # "東京http" is not the rule's host
