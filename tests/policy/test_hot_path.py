"""The judging and Violation-building hot path (issue 30) never changes a verdict.

The audit's speed-ups are held to the reading they replace: ``Violation`` built by hand
to the dataclass the decorator generates (kept here as the oracle), ``quick_host`` to
its reading before the split into ``plain_host`` and ``host_of_plain``, and the audit
with its per-audit memo and its plain-host path to the audit with both switched off
(every URL then goes through ``RuleIndex.judge``, each token is read again, each
violation is built through the public constructor and ``dataclasses.replace``). Texts:
generated ones, the hostile shapes, answer-like text and the real cassettes' texts;
the violations (every field) and the rendered ``web_search`` results are compared.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import inspect
import pickle
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal, cast

import pytest
from agentloop import Transcript
from agentloop.transcript import TextPart
from hypothesis import example, given, settings
from hypothesis import strategies as st

from agentloop_tools.web import DomainPolicy, Violation
from agentloop_tools.web._domains import _url
from agentloop_tools.web._domains._index import RuleIndex
from agentloop_tools.web._domains._url import locate, normalize_host, quick_host
from agentloop_tools.web._policy import _memo, _text_audit
from agentloop_tools.web._policy._violation import moved, text_violation
from agentloop_tools.web._search._render import SearchHit, render_results
from tests.real_cassettes import FILES, body_strings
from tests.text.test_finder_speed import TEXTS, answer_like
from tests.text.test_hostile_text import HOSTILE

pytestmark = pytest.mark.core


@dataclass(frozen=True, slots=True)
class GeneratedViolation:
    """``Violation`` as the decorator generates it (its ``__init__`` included)."""

    url: str
    where: Literal["source", "citation", "text", "tool-call", "tool-result", "redirect", "robots"]
    message_index: int
    rule: str | None
    span: tuple[int, int] | None = None
    conversation: int = 0
    refused: bool = False


def generated(violation: Violation) -> GeneratedViolation:
    return GeneratedViolation(*dataclasses.astuple(violation))


EXAMPLES = [
    Violation("https://evil.com/", "text", 1, "evil.com", span=(3, 20)),
    Violation("https://a.example/", "source", 0, None),
    Violation("https://a.example/x", "tool-call", 4, "a.example", None, 2, True),
    Violation(url="u", where="robots", message_index=7, rule=None, refused=True),
    text_violation("evil.com", 3, "evil.com", (1, 9)),
    moved(Violation("x", "citation", 2, None, None, 1, True), "y", (4, 5)),
]


@pytest.mark.parametrize("violation", EXAMPLES, ids=repr)
def test_violation_behaves_as_the_generated_dataclass(violation: Violation) -> None:
    oracle = generated(violation)
    assert type(violation) is Violation
    assert repr(violation) == "Violation" + repr(oracle).removeprefix("GeneratedViolation")
    assert hash(violation) == hash(oracle)
    assert violation == Violation(*dataclasses.astuple(violation))
    assert violation != cast(object, oracle)  # equality stays within the class
    assert dataclasses.asdict(violation) == dataclasses.asdict(oracle)
    assert pickle.loads(pickle.dumps(violation)) == violation
    assert copy.copy(violation) == violation == copy.deepcopy(violation)
    changed = dataclasses.replace(violation, url="z", span=None)
    assert generated(changed) == dataclasses.replace(oracle, url="z", span=None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        violation.url = "other"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del violation.rule
    assert not hasattr(violation, "__dict__")


def test_violation_keeps_the_generated_dataclass_surface() -> None:
    def described(cls: type) -> list[tuple[object, ...]]:
        return [
            (field.name, field.default, field.init, field.repr, field.compare, field.hash)
            for field in dataclasses.fields(cls)
        ]

    assert described(Violation) == described(GeneratedViolation)
    assert Violation.__match_args__ == GeneratedViolation.__match_args__
    assert Violation.__slots__ == GeneratedViolation.__slots__
    params = "__dataclass_params__"
    assert repr(getattr(Violation, params)) == repr(getattr(GeneratedViolation, params))
    ours = inspect.signature(Violation).parameters
    theirs = inspect.signature(GeneratedViolation).parameters
    assert [(p.name, p.kind, p.default) for p in ours.values()] == [
        (p.name, p.kind, p.default) for p in theirs.values()
    ]
    # The same calls are accepted and refused.
    with pytest.raises(TypeError):
        Violation("u", "text", 1)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Violation("u", "text", 1, None, spam=1)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Violation("u", "text", 1, None, (1, 2), 0, False, "extra")  # type: ignore[call-arg]
    match Violation("u", "text", 1, None):
        case Violation(url, where, index, rule):
            assert (url, where, index, rule) == ("u", "text", 1, None)


# quick_host as it read before the hot path was cut (the oracle).
_OLD_PLAIN_HOST_PREFIX = re.compile(
    r"(?:[Hh][Tt][Tt][Pp][Ss]?://)?((?:[A-Za-z0-9_-]+\.)+[A-Za-z_][A-Za-z0-9_-]*)(?=[/?#]|$)"
)


def old_quick_host(url_or_host: str) -> str | None:
    match = _OLD_PLAIN_HOST_PREFIX.match(url_or_host)
    # Read case-insensitively since the fix for capital XN-- labels (test_readings.py).
    if match is None or "xn--" in match.group(1).lower() or "\\" in url_or_host[: match.end() + 1]:
        return None
    return normalize_host(match.group(1).lower())


URL_PIECES = st.sampled_from(
    [
        "https://", "http://", "HTTP://", "hTtPs://", "//", "\\", "\\\\", "www.", "a", "b",
        "evil", ".com", ".", "-", "_", "1", "xn--", "XN--", "/", "?", "#", "@", ":", ":80",
        "%2F", "%3A", "=", "=//", "?to=https://evil.com/", "&", " ", "\t", "é", "東京", "。",
    ]
)  # fmt: skip
URLS = st.lists(URL_PIECES, max_size=16).map("".join)


@settings(max_examples=1500, deadline=None)
@given(url=URLS)
@example(url="https://a.com\\@evil.com/")
@example(url="a.com#\\x")
@example(url="https://www.a.com./x")
@example(url="http://xn--mnchen-3ya.de/")
def test_quick_host_reads_what_it_read_before(url: str) -> None:
    assert quick_host(url) == old_quick_host(url)
    host = quick_host(url)
    if host is not None:
        location = locate(url)
        assert location is not None
        assert location.host == host


# --- the audit, fast against slow ----------------------------------------------------


class _Forgetful(dict[Any, Any]):
    """A memo that keeps nothing: every token is read and every reading judged again."""

    def __setitem__(self, key: Any, value: Any) -> None:
        pass


class _NoMemo(_memo.AuditMemo):
    def __init__(self) -> None:
        self.tokens = _Forgetful()
        self.readings = _Forgetful()
        self.hosts = _Forgetful()


def _public_text_violation(
    url: str, message_index: int, rule: str | None, span: tuple[int, int]
) -> Violation:
    return Violation(url, "text", message_index, rule, span=span)


def _public_moved(violation: Violation, url: str, span: tuple[int, int] | None) -> Violation:
    return dataclasses.replace(violation, url=url, span=span)


@contextlib.contextmanager
def slow_path() -> Iterator[None]:
    """The audit with the hot path's speed-ups switched off."""
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(_text_audit, "AuditMemo", _NoMemo)
        patched.setattr(_text_audit, "plain_host", lambda url: None)  # every URL judged in full
        patched.setattr(
            _text_audit, "plain_host_link", lambda token: None
        )  # no plain-link shortcut
        patched.setattr(_text_audit, "text_violation", _public_text_violation)
        patched.setattr(_text_audit, "moved", _public_moved)
        yield


POLICIES = [
    DomainPolicy.allow(["abc.com", "python.org", "a.example", "x1.io"]),
    DomainPolicy.allow(["abc.com", "a.example"], bare_hosts=True),
    DomainPolicy.allow(["abc.com/articles", "a.example"]),  # a path rule: no host shortcut
    DomainPolicy.block(["evil.example", "evil.com", "b.com", "x1.io", "munchen.de"]),
    DomainPolicy.block(["evil.example", "127.0.0.1"]),  # an IP rule: every token is read
    DomainPolicy.block(["evil.example/private", "b.com"]),
]


def transcript_of(text: str) -> Transcript:
    """The text as one answer of two parts, then again as a second answer: the memo
    is shared by the seams between parts and by later messages."""
    transcript = Transcript()
    transcript.add_user_message("question")
    third = len(text) // 3
    transcript.add_assistant_message([TextPart(text=text[:third]), TextPart(text=text[third:])])
    transcript.add_user_message("again")
    transcript.add_assistant_message([TextPart(text=text)])
    return transcript


def outcome(policy: DomainPolicy, text: str) -> tuple[list[tuple[Any, ...]], str]:
    violations = policy.audit(transcript_of(text))
    assert all(type(violation) is Violation for violation in violations)
    half = len(text) // 2
    hits = [SearchHit(text[:half][:300], "https://a.example/", text[half:][:600])]
    return [dataclasses.astuple(v) for v in violations], render_results(hits, policy=policy)


def check(texts: list[str]) -> None:
    fast = [outcome(policy, text) for text in texts for policy in POLICIES]
    with slow_path():
        slow = [outcome(policy, text) for text in texts for policy in POLICIES]
    assert fast == slow


@settings(max_examples=300, deadline=None)
@given(text=st.lists(st.one_of(TEXTS, URLS), max_size=6).map(" ".join))
@example(
    text="https://abc.com/a https://ABC.com/b https://abc.com./c abc.com/x?to=https://evil.com/"
)
@example(text="https://xn--mnchen-3ya.de/ https://XN--mnchen-3ya.de/ b&#46;com https://b.com/")
@example(text="see https://abc.com/articles/1 and https://abc.com/other, `https://b.com/`")
def test_generated_texts_are_judged_as_without_the_hot_path(text: str) -> None:
    check([text])


CORPUS = [
    *(shape[0][:12_000] for shape in HOSTILE.values()),
    *(answer_like(seed, 4000) for seed in range(8)),
]


@pytest.mark.parametrize("index", range(len(CORPUS)))
def test_the_corpus_is_judged_as_without_the_hot_path(index: int) -> None:
    check([CORPUS[index]])


@pytest.mark.skipif(not FILES, reason="real cassettes not found (tests/real_cassettes.py)")
def test_the_real_cassettes_are_judged_as_without_the_hot_path() -> None:
    texts = sorted(set(body_strings()), key=len)
    assert texts
    # One text per cassette string, and all of them as one long answer.
    check([text for text in texts if len(text) < 100_000][:300])
    check(["\n".join(texts)[:400_000]])


# --- what the memo saves ---------------------------------------------------------------


def _counting(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[object]:
    calls: list[object] = []
    original = getattr(owner, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(args[-1])
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


def test_an_audit_judges_a_host_once_however_many_links_name_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    links = " ".join(f"[{n}](https://docs.abc.com/page/{n})" for n in range(40))
    for policy, blocked in (
        (DomainPolicy.allow(["abc.com"]), 0),
        (DomainPolicy.block(["abc.com"]), 80),
    ):
        lookups = _counting(monkeypatch, RuleIndex, "domain_rule")
        found = policy.audit(transcript_of(links + " https://evil.example/x"))
        assert lookups.count("docs.abc.com") == 1, lookups
        # 40 links in each of two messages (and, blocked, the link cut at the seam).
        assert len([v for v in found if v.rule == "abc.com"]) >= blocked
        assert len([v for v in found if "evil" in v.url]) == (2 if policy.mode == "allow" else 0)
        monkeypatch.undo()


def test_an_audit_reads_a_token_once_across_messages_and_decoded_readings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # "&amp;" makes the browser's decoded reading a text of its own; the link in it is
    # the same token as in the text as written.
    text = "Tom &amp; Jerry: https://evil.example/a?b=1"
    reads = _counting(monkeypatch, _text_audit, "read_token")
    # A plain link's token is read by plain_host_link instead (the shortcut).
    plain_reads = _counting(monkeypatch, _text_audit, "plain_host_link")
    found = DomainPolicy.block(["evil.example"]).audit(transcript_of(text))
    assert [v.url for v in found] == ["https://evil.example/a?b=1"] * 2
    assert plain_reads.count("https://evil.example/a?b=1") == 1, plain_reads
    assert reads.count("https://evil.example/a?b=1") == 0, reads


def test_the_plain_host_path_is_taken_for_plain_links(monkeypatch: pytest.MonkeyPatch) -> None:
    # A plain link on a host-rule list never reaches the URL parser.
    monkeypatch.setattr(_url, "parse", lambda url: pytest.fail(f"parsed {url}"))
    policy = DomainPolicy.block(["evil.example"])
    found = policy.audit(transcript_of("see https://www.evil.example/a and https://abc.com/b"))
    assert [v.rule for v in found] == ["evil.example"] * 2
