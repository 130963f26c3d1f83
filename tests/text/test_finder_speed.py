"""The link finder's speed-ups (issue 30) never change what it finds.

Each speed-up is held to the reading it replaces: the anchor patterns that open with
one character class to the alternations they replaced (kept here as the oracles),
``plain_link`` to the general reading of the token, ``link_end`` to its reading
before the cheap guards, a mention's path to the regex repeat that read it. Texts:
generated pieces that stress where links start and end, the hostile shapes,
answer-like text, and the real cassettes when present. The
audit's violations and the search results' rendered text (it sits in cassettes) are
compared with the speed-ups switched off.
"""

from __future__ import annotations

import random
import re

import pytest
from agentloop import Transcript
from agentloop.transcript import TextPart
from hypothesis import example, given, settings
from hypothesis import strategies as st

from agentloop_tools.web import DomainPolicy, Violation
from agentloop_tools.web._search._render import SearchHit, render_results
from agentloop_tools.web._text import _extent, _finder, _hostlike, _prefilter
from agentloop_tools.web._text._extent import link_end, plain_link
from agentloop_tools.web._text._finder import link_tokens, read_token, tokens
from tests.real_cassettes import FILES, REAL_CASSETTES, body_strings
from tests.text.test_hostile_text import HOSTILE

pytestmark = pytest.mark.core

# The anchors as they were written before issue 30: an opening alternation.
_CONTINUES = r"(?=[^\s" + re.escape("<>\"`.,;:!?'*_~)]") + "])"
_TAIL = r"[^\s<>\"`]*"
OLD_ANCHOR_ANY = re.compile(
    r"(?:[.\uff0e\u3002\uff61:/\\]"
    + _CONTINUES
    + r"|\[(?:\.|dot)\]|\((?:\.|dot)\)|\{\.\})"
    + _TAIL,
    re.IGNORECASE,
)
OLD_LINK_ANCHOR = re.compile(r"(?:[:/\\]|(?i:www)\.)" + _CONTINUES + _TAIL)

_OLD_CJK_STOP = re.compile(
    r"[\u3001\u3003-\u3011\u3014-\u301f\uff01-\uff0d\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff60\uff62-\uff65]"
)
_OLD_PATH_START = re.compile(r"(?:^|[^/\\:])[/\\](?=[^/\\]|$)")
_OLD_TRAILING = frozenset(".,:;!?'*_~\u3002\uff0e\uff61")


def old_link_end(token: str, start: int, limit: int | None = None) -> int:
    """``link_end`` as written before issue 30, step by step."""
    end = len(token) if limit is None else limit
    if limit is None and start and token[start - 1] == "(":
        depth = 0
        for paren in re.finditer(r"[()]", token[:end]):
            if paren.start() < start:
                continue
            if paren.group() == "(":
                depth += 1
            elif depth == 0:
                end = paren.start()
                break
            else:
                depth -= 1
    depth = 0
    for bracket in re.compile(r"[\[\]]").finditer(token, start, end):
        if bracket.group() == "[":
            depth += 1
        elif depth == 0:
            end = bracket.start()
            break
        else:
            depth -= 1
    if not token[start:end].isascii():
        stop = _OLD_CJK_STOP.search(token, start, end)
        if stop is not None:
            end = stop.start()
        path_start = _OLD_PATH_START.search(token, start, end)
        if path_start is not None:
            path = path_start.end()
            if token[path - 1] == "\\":
                authority_end = re.compile(r"[/?#]").search(token, path, end)
                if "@" in token[path : authority_end.start() if authority_end else end]:
                    path = authority_end.end() if authority_end else end
            full_stop = re.compile("[\u3002\uff61]").search(token, path, end)
            if full_stop is not None:
                end = full_stop.start()
    opened, closed = token.count("(", start, end), token.count(")", start, end)
    while end > start:
        last = token[end - 1]
        if last in _OLD_TRAILING:
            end -= 1
        elif last == ")" and opened < closed:
            closed -= 1
            end -= 1
        else:
            break
    return end


# A mention's path as it was read before issue 30: a regex repeat in the mention pattern.
OLD_MENTION = re.compile(
    _finder._MENTION.pattern + r"(?P<path>[/\\][^\s<>\"`]{0,512})?", re.IGNORECASE
)


def old_read_mentions(token: str, position: int, finish: int, found: list[_finder.Found]) -> None:
    """``_read_mentions`` as written before issue 30."""
    while _finder._DOT_THEN_LABEL.search(token, position, finish) is not None:
        mention = OLD_MENTION.search(token, position)
        if mention is None or mention.start() >= finish:
            return
        start, end = mention.span()
        path_start = mention.start("path")
        host_end = path_start if path_start != -1 else end
        position = host_end
        if (
            end < len(token)
            and token[end] == "@"
            and token[end + 1 : end + 2].isalnum()
            and token[start - 1 : start] in _finder._LOCAL_BEFORE
            and _finder._EMAIL_NAME.fullmatch(token, start, end)
        ):
            continue
        if path_start != -1 or not token[end - 1].isalnum():
            end = old_link_end(token, start, end)
            host_end = min(host_end, end)
        host = token[start:host_end]
        if not _hostlike.is_host_like(host):
            continue
        written = token[start:end]
        readings = (written,) if host.isascii() else (written, *_hostlike.cjk_free(host))
        found.append(_finder.Found(start, end, written, "mention", readings))


FRAGMENTS = st.sampled_from(
    [
        "https://", "http://", "HTTPS://", "hTtP://", "www.", "WWW.", "wWw.", "ww", "w",
        "//", "\\", ":", "a", "b.com", "evil.com", "a.example", "x-y", ".", "..", "。", "｡",
        "．", "/", "?q=", "#f", "&", "%2F", "=", "'", "*", "_", "~", ",", ";", "!", "?",
        "(", ")", "[", "]", "](", "[x](", "{.}", "[.]", "(dot)", "[DOT]", " ", "\n", "東京",
        "参见：", "（", "）", "@", "$", "+", "1", "42", "xn--e-ufa", "\u200b", "İ", "K", "é",
        "`", "<", '"', "ftp://", "hxxps://", "mailto:", "](//", "=//", "'//", ".)", ")).",
    ]
)  # fmt: skip
TEXTS = st.lists(FRAGMENTS, max_size=40).map("".join)

WORDS = ["the", "of", "see", "data", "report", "with", "which", "was", "www", "Tokyo"]
HOSTS = ["abc.com", "www.python.org", "evil.example", "a-b.co.uk", "x1.io"]
PIECES = [
    "[{h}](https://{h}/articles/{n}?utm_source=openai)",
    "www.{h}/news",
    "according to {h},",
    "edit setup.py first",
    "version {n}.{n}.1",
    "write to press@{h}",
    "东京的人口。https://{h}/ja/{n}。",
    "参见以下资料：https://{h}/ja/{n}｡.",
    "(see https://www.{h}/wiki/Page_(x))",
    "HTTP://{h}:8080/x",
    "https://{h}/r?to=https%3A%2F%2Fevil.example%2F",
    "[t](http://{h}/a)[u](//{h}/b)",
    "https://{h}/a=//evil.example/",
    "https://{h}/x?y=www.evil.example",
    "www.{h}/q=www.evil.example",
    "https://{h}.",
    "(https://{h}/x.)).",
]


def answer_like(seed: int, size: int = 6000) -> str:
    rng = random.Random(seed)
    chunks: list[str] = []
    while sum(map(len, chunks)) < size:
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 9)))
        piece = rng.choice(PIECES).format(h=rng.choice(HOSTS), n=rng.randint(1, 999))
        chunks.append(f"{words} {piece}. ")
    return "".join(chunks)


def real_texts() -> list[str]:
    """Every string in the real cassettes' JSON bodies (streamed events too), and each file."""
    files = [path.read_text(encoding="utf-8") for path in FILES]
    return [*files, *body_strings()]


CORPUS = [
    *(shape[0][:20_000] for shape in HOSTILE.values()),
    *(answer_like(seed) for seed in range(12)),
]
REAL = real_texts()


def anchored_tokens(pattern: re.Pattern[str], text: str) -> list[tuple[int, str]]:
    """``(offset, token)`` of each token holding a match of ``pattern``, in text order."""
    found = []
    for match in pattern.finditer(text):
        start = match.start()
        while start > 0 and _finder.TOKEN_RUN.fullmatch(text[start - 1]):
            start -= 1
        found.append((start, text[start : match.end()]))
    return found


def old_tokens(text: str) -> list[tuple[int, str]]:
    return anchored_tokens(OLD_ANCHOR_ANY, text)


def check_anchors(text: str) -> None:
    assert list(link_tokens(text)) == anchored_tokens(OLD_LINK_ANCHOR, text)
    # tokens() picks the cheapest pattern for the text; each finds what ANCHOR_ANY finds.
    assert list(tokens(text)) == old_tokens(text)
    assert anchored_tokens(_finder.ANCHOR_ANY, text) == old_tokens(text)
    # The rule-out searches inside one token at a time.
    for start, token in old_tokens(text):
        end = start + len(token)
        assert (_finder.ANCHOR_ANY.search(text, start, end) is None) == (
            OLD_ANCHOR_ANY.search(text, start, end) is None
        )


def full_reading(token: str, *, mentions: bool, monkeypatch: pytest.MonkeyPatch) -> list[object]:
    with monkeypatch.context() as patched:
        patched.setattr(_finder, "plain_url", lambda token: None)
        patched.setattr(_finder, "_read_mentions", old_read_mentions)
        return list(read_token(token, mentions=mentions))


def check_token(token: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for start in range(len(token) + 1):
        assert link_end(token, start) == old_link_end(token, start), (token, start)
        for limit in (start, (start + len(token)) // 2, len(token)):
            assert link_end(token, start, limit) == old_link_end(token, start, limit)
    for mentions in (False, True):
        assert read_token(token, mentions=mentions) == full_reading(
            token, mentions=mentions, monkeypatch=monkeypatch
        ), (token, mentions)


POLICIES = [
    DomainPolicy.allow(["abc.com", "python.org", "a.example"]),
    DomainPolicy.allow(["abc.com", "a.example"], bare_hosts=True),
    DomainPolicy.block(["evil.example", "evil.com", "b.com", "x1.io"]),
    DomainPolicy.block(["evil.example", "127.0.0.1"]),  # an IP rule: every token is read
]


def audit(policy: DomainPolicy, text: str) -> list[Violation]:
    transcript = Transcript()
    transcript.add_user_message("question")
    transcript.add_assistant_message([TextPart(text=text)])
    return list(policy.audit(transcript))


def rendered(policy: DomainPolicy, text: str) -> str:
    half = len(text) // 2
    hits = [SearchHit(text[:half][:300], "https://a.example/", text[half:][:600])]
    return render_results(hits, policy=policy)


def slow_readings(monkeypatch: pytest.MonkeyPatch) -> None:
    """The finder as it read before issue 30: the old anchors, no plain shapes."""
    monkeypatch.setattr(_finder, "plain_url", lambda token: None)
    monkeypatch.setattr(_finder, "_read_mentions", old_read_mentions)
    monkeypatch.setattr(_finder, "_LINK_ANCHOR", OLD_LINK_ANCHOR)
    monkeypatch.setattr(_finder, "ANCHOR_ANY", OLD_ANCHOR_ANY)
    monkeypatch.setattr(_prefilter, "ANCHOR_ANY", OLD_ANCHOR_ANY)
    monkeypatch.setattr(_extent, "link_end", old_link_end)
    monkeypatch.setattr(_finder, "link_end", old_link_end)


def check_audits(texts: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    fast = [(audit(p, text), rendered(p, text)) for text in texts for p in POLICIES]
    with monkeypatch.context() as patched:
        slow_readings(patched)
        slow = [(audit(p, text), rendered(p, text)) for text in texts for p in POLICIES]
    assert fast == slow


@settings(max_examples=400, deadline=None)
@given(text=TEXTS)
@example(text="see www.a.com/x?q=www.evil.com and x[.]com")
@example(text="[www.x](https://a.com/)")
@example(text="东京https://a.com/x。https://evil.com/")
@example(text="https://a.com/(x))..")
@example(text="b.com/b.com/x\\b.com y.com@z.com/ ev[.]il.com/p")
def test_the_anchors_and_the_plain_shapes_read_what_the_old_reading_did(text: str) -> None:
    check_anchors(text)
    with pytest.MonkeyPatch.context() as monkeypatch:
        for _, token in old_tokens(text):
            check_token(token, monkeypatch)
        check_audits([text], monkeypatch)


@pytest.mark.parametrize("index", range(len(CORPUS)))
def test_on_the_corpus_violations_and_rendered_results_are_unchanged(
    index: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = CORPUS[index]
    check_anchors(text)
    for _, token in old_tokens(text)[:400]:
        check_token(token[:300], monkeypatch)
    check_audits([text], monkeypatch)


@pytest.mark.skipif(not REAL, reason=f"real cassettes not found at {REAL_CASSETTES}")
def test_on_the_real_cassettes_violations_and_rendered_results_are_unchanged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for text in REAL:
        check_anchors(text)
    tokens_read = {token for text in REAL for _, token in old_tokens(text) if len(token) < 400}
    for token in sorted(tokens_read)[:4000]:
        check_token(token, monkeypatch)
    check_audits([text for text in REAL if len(text) < 200_000][:400], monkeypatch)


def test_the_common_shapes_of_a_link_are_read_without_the_general_search() -> None:
    # The shapes answers are made of take the plain path (what makes the audit fast).
    for token, link, host in [
        ("[a.example](https://a.example/x?utm_source=openai).", "https://a.example/x?u", "a.ex"),
        ("www.a.example/news.", "www.a.example/news", "www.a"),
        ("https://www.a.example/wiki/Page_(x)).", "https://www.a.example/wiki/Page_(x)", "www."),
        ("东京的人口。https://a.example/ja/3。.", "https://a.example/ja/3", "a.ex"),
    ]:
        plain = plain_link(token)
        assert plain is not None
        start, end, host_start = plain
        assert token[start:end].startswith(link)
        assert token[host_start:].startswith(host)
        assert read_token(token, mentions=False)[0].text == token[start:end]
    # A second link start sends the token to the general reading.
    assert plain_link("https://a.example/x,https://b.example/") is None
    assert plain_link("[www.a.example](https://a.example/)") is None
    assert plain_link("https://a.example:8080/") is None
