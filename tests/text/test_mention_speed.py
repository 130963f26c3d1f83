"""The mention reader's speed-up (issue 30) never changes what it finds.

``_read_mentions`` once searched twice per mention, called ``link_end`` on each
mention's path and judged each host's shape anew, and ``link_end`` walked every bracket
of a path in Python; a token of many mentions ("https://a.example/b.com/b.com/...",
"b[.]com/b[.]com/...") cost microseconds each. The readings they replace are kept as
the oracles (``link_end``'s in tests/text/test_finder_speed.py), and the finder's
answers, the audit's violations (every field, in order) and the rendered search results
are compared with them: on generated tokens dense in mentions, paths, dots, brackets
and punctuation, on the hostile shapes and answer-like text, and on the real cassettes
when present.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from agentloop_tools.web import DomainPolicy
from agentloop_tools.web._text import _finder, _hostlike
from agentloop_tools.web._text._extent import link_end
from agentloop_tools.web._text._finder import read_token, tokens
from tests.text.test_finder_speed import CORPUS, REAL, audit, old_link_end, rendered

pytestmark = pytest.mark.core


def old_read_mentions(token: str, position: int, finish: int, found: list[_finder.Found]) -> None:
    """``_read_mentions`` as written before the mention path was made linear in mentions."""
    stop = -1
    while _finder._DOT_THEN_LABEL.search(token, position, finish) is not None:
        mention = _finder._MENTION.search(token, position)
        if mention is None or mention.start() >= finish:
            return
        start, host_end = mention.span()
        end = host_end
        has_path = token[host_end : host_end + 1] in ("/", "\\")
        if has_path:
            if stop <= host_end:
                token_end = _finder._TOKEN_END.search(token, host_end + 1)
                stop = token_end.start() if token_end is not None else len(token)
            end = min(stop, host_end + 1 + _finder._PATH_CAP)
        position = host_end
        if (
            end < len(token)
            and token[end] == "@"
            and token[end + 1 : end + 2].isalnum()
            and token[start - 1 : start] in _finder._LOCAL_BEFORE
            and _finder._EMAIL_NAME.fullmatch(token, start, end)
        ):
            continue
        if has_path or not token[end - 1].isalnum():
            end = old_link_end(token, start, end)
            host_end = min(host_end, end)
        host = token[start:host_end]
        if not _hostlike.is_host_like(host):
            continue
        written = token[start:end]
        readings = (written,) if host.isascii() else (written, *_hostlike.cjk_free(host))
        found.append(_finder.Found(start, end, written, "mention", readings))


# Pieces of tokens that stress a mention's start, host, path and end.
PIECES = st.sampled_from(
    [
        "b.com", "b.com/", "a", "x-y", "_", "1", "42", "0x1f", "3.14", ".", "..", "/", "\\",
        "//", "。", "．", "｡", "[.]", "(.)", "{.}", "[dot]", "(DOT)", "@", "%", "%2", "%2F",
        "%2f", "(", ")", "[", "]", "](", ",", ";", ":", "!", "?", "'", "*", "~", "-", "=",
        "#", "&", "[[", "]]", "[[x]]", "[[[a]]]", "[a[b]c]", "東京", "参见：", "（", "）", "é",
        "e\u0301", "\u200b", "\ufe0f", "ⓔⓥ", "İ",
        "xn--e-ufa", "https://", "http://", "www.", "a.example", "evil.com", " ", "\n", "<",
        '"', "`", "x" * 40, "b.com/" * 5, "." * 9, "/" * 3,
    ]
)  # fmt: skip
TOKENS = st.lists(PIECES, max_size=60).map("".join)
# A long path past the cap: mentions whose paths end inside trailing punctuation.
LONG = st.builds(
    lambda head, count, tail: head + "b.com/" * count + tail,
    st.sampled_from(["", "https://a.example/", "(", "[x](https://a.example/", "東京"]),
    st.integers(0, 120),
    TOKENS,
)


def mentions(reader: object, token: str, position: int, finish: int) -> list[_finder.Found]:
    found: list[_finder.Found] = []
    reader(token, position, finish, found)  # type: ignore[operator]
    return found


def check_stretches(token: str) -> None:
    length = len(token)
    ends = sorted({0, 1, length // 3, length // 2, length - 1, length} & {*range(length + 1)})
    for start in range(min(len(token), 300) + 1):
        for limit in (None, *ends):
            if limit is None or limit >= start:
                assert link_end(token, start, limit) == old_link_end(token, start, limit)
    for position in ends:
        for finish in ends:
            if finish - position > 2:
                fast = mentions(_finder._read_mentions, token, position, finish)
                old = mentions(old_read_mentions, token, position, finish)
                assert fast == old, (token, position, finish)
                assert all(type(found) is _finder.Found for found in fast)


def old_read_token(token: str, *, mentions: bool) -> list[_finder.Found]:
    """``read_token`` as it sorted before: by start, then links before mentions."""
    found: list[_finder.Found] = []
    _finder._read_token(token, mentions, found)
    return sorted(found, key=lambda item: (item.start, item.kind != "url"))


def check_tokens(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    read = [
        (token, mentions, read_token(token, mentions=mentions))
        for _, token in tokens(text)
        for mentions in (True, False)
    ]
    with monkeypatch.context() as patched:
        patched.setattr(_finder, "_read_mentions", old_read_mentions)
        for token, mentions, found in read:
            assert found == old_read_token(token, mentions=mentions), (token, mentions)


POLICIES = [
    DomainPolicy.block(["b.com", "evil.com", "a.example", "x-y.b.com", "1.2.3.4"]),
    DomainPolicy.block(["evil.com", "b.com/b.com"]),  # a path rule: the paths are read
    DomainPolicy.block(["b.com", "xn--1lqs71d.jp", "evil.example", "127.0.0.1"]),
    DomainPolicy.allow(["a.example"], bare_hosts=True),
]


def check_audits(texts: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    fast = [(audit(p, text), rendered(p, text)) for text in texts for p in POLICIES]
    with monkeypatch.context() as patched:
        patched.setattr(_finder, "_read_mentions", old_read_mentions)
        old = [(audit(p, text), rendered(p, text)) for text in texts for p in POLICIES]
    assert fast == old


@settings(max_examples=500, deadline=None)
@given(token=TOKENS)
@example(token="https://a.example/" + "b.com/" * 200)
@example(token="b.com/b.com\\b.com@c.com/..x.co/.,;" + "." * 600)
@example(token="%2Fb.com%b.com%2b.com(b.com/x))b.com[1]東京b.com。x")
@example(token="a.b" + "/" * 700 + "c.d/e。f")
def test_mentions_are_read_as_before(token: str) -> None:
    check_stretches(token)
    with pytest.MonkeyPatch.context() as monkeypatch:
        check_tokens(token, monkeypatch)
        check_audits([token], monkeypatch)


@settings(max_examples=60, deadline=None)
@given(token=LONG)
def test_many_mentions_in_a_long_path_are_read_as_before(token: str) -> None:
    check_stretches(token)
    with pytest.MonkeyPatch.context() as monkeypatch:
        check_tokens(token, monkeypatch)
        check_audits([token], monkeypatch)


@pytest.mark.parametrize("index", range(len(CORPUS)))
def test_on_the_corpus_mentions_and_violations_are_unchanged(
    index: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = CORPUS[index]
    check_tokens(text, monkeypatch)
    check_audits([text], monkeypatch)


# Tokens of many mentions, each shape a few thousand times.
MANY = [
    "https://a.example/" + "b.com/" * 3000,
    "b[.]com/" * 3000,
    "https://a.example/" + "b(dot)com\\" * 2000,
    "東京b.com/" * 2000,
    "https://a.example/" + "b.com/...." * 2000,
    "b.com@" * 3000,
    "https://a.example/?q=" + "%2Fb.com" * 3000,
    "[b.com](b.com/" * 1500,
    "https://a.example/" + "[[b.com]]/" * 2000 + "[" * 600,
    "https://a.example/" + "b.com/" * 200 + "x" * 600 + "b.com/" * 200,
]


@pytest.mark.parametrize("text", MANY, ids=range(len(MANY)))
def test_many_mentions_in_one_token_are_read_as_before(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    check_tokens(text, monkeypatch)
    check_audits([text], monkeypatch)


def test_the_hostile_row_keeps_every_violation(monkeypatch: pytest.MonkeyPatch) -> None:
    # The benchmark's row: 33,333 mentions, each reported as before.
    text = "https://a.example/" + "b.com/" * 33_333
    policy = DomainPolicy.block(["b.com", "evil.com"])
    fast = audit(policy, text)
    with monkeypatch.context() as patched:
        patched.setattr(_finder, "_read_mentions", old_read_mentions)
        assert fast == audit(policy, text)
    assert len(fast) == 33_333


@pytest.mark.skipif(not REAL, reason="real cassettes not found")
def test_on_the_real_cassettes_mentions_and_violations_are_unchanged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for text in REAL:
        check_tokens(text, monkeypatch)
    check_audits([text for text in REAL if len(text) < 200_000][:400], monkeypatch)
