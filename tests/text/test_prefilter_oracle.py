"""The blocklist's rule-out, as fast as it now runs, against the reading it replaced.

``OldFinder`` is ``RuleFinder.tokens_to_read`` as it was before its fast paths (ASCII
texts, hosts and hiding marks searched apart): the same tokens, in the same order, must come
out of both, on either engine, for Hypothesis' texts, the hostile corpus and the real
recorded answers; and the audits (every field, in order) and rendered results agree.
"""

from __future__ import annotations

from collections.abc import Iterable

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from agentloop_tools.web import DomainPolicy
from agentloop_tools.web._text import _prefilter
from agentloop_tools.web._text._finder import tokens
from agentloop_tools.web._text._literal_search import LiteralSearch, hyperscan_module
from agentloop_tools.web._text._prefilter import RuleFinder
from tests.policy.test_hot_path import CORPUS
from tests.real_cassettes import body_strings
from tests.text.test_literal_engines import audit, rendered
from tests.text.test_prefilter import RULES, TEXTS

pytestmark = pytest.mark.core

ENGINES = ["aho-corasick", *(["hyperscan"] if hyperscan_module() is not None else [])]


class OldFinder:
    """The oracle: the rule-out as it read texts before (one path for every text)."""

    def __init__(self, hosts: Iterable[str], *, cjk: bool, engine: str) -> None:
        hiding = _prefilter._HIDING
        literals = [*sorted(set(hosts) - set(hiding)), *hiding]
        ascii_rules = all(literal.isascii() for literal in literals)
        seen = _prefilter._SEEN_CJK_RULED if cjk and ascii_rules else None
        self.search = LiteralSearch(literals, engine=engine, seen=seen)  # type: ignore[arg-type]
        self.unseen = _prefilter._UNSEEN_CJK_RULED if cjk else _prefilter._UNSEEN

    def tokens_to_read(self, text: str) -> list[tuple[int, str]]:
        positions = self.bytes_positions(text)
        if positions is None:
            positions = self.text_positions(text)
        if positions is None:
            return list(tokens(text))
        if not positions:
            return []
        return _prefilter._tokens_at(text, positions)

    def bytes_positions(self, text: str) -> list[int] | None:
        if self.search.engine != "hyperscan" or any(c in text for c in "\u0130\u212a"):
            return None
        try:
            data = text.encode().lower()
        except UnicodeEncodeError:
            return None
        for dot in _prefilter._DOT_BYTES:
            data = data.replace(dot, b".")
        return self.search.starts_and_unseen(data, len(text))

    def text_positions(self, text: str) -> list[int] | None:
        lowered = text.lower()
        if len(lowered) != len(text):
            return None
        for dot in _prefilter._DOTS:
            lowered = lowered.replace(dot, ".")
        try:
            positions = self.search.starts(lowered)
        except UnicodeEncodeError:
            return None
        positions.extend(match.start() for match in self.unseen.finditer(text))
        return positions


def both_finders(hosts: list[str], cjk: bool, engine: str) -> tuple[RuleFinder, OldFinder]:
    new = RuleFinder(hosts, cjk=cjk)
    old = OldFinder(hosts, cjk=cjk, engine=engine)
    return new, old


def assert_same_tokens(
    hosts: list[str], texts: Iterable[str], engine: str, mp: pytest.MonkeyPatch
) -> None:
    mp.setenv("AGENTLOOP_TOOLS_BLOCKLIST_ENGINE", engine)
    for cjk in (True, False):
        new, old = both_finders(hosts, cjk, engine)
        for text in texts:
            assert new.tokens_to_read(text) == old.tokens_to_read(text), (hosts, cjk, text)


# Control characters (unseen, and ASCII), dots of every width and rules' pieces.
ASCII_TEXTS = st.lists(
    st.sampled_from(["evil.com", "e.com", ".", "a", " ", "\x00", "\x7f", "\x1c", "\x0b", "%",
                     "\\", "[.]", "(dot)", "xn--", "www.", "http://", "/", "\n", "E", "é"]),
    max_size=30,
).map("".join)  # fmt: skip


@pytest.mark.parametrize("engine", ENGINES)
@settings(max_examples=300, deadline=None)
@given(rules=RULES, text=st.one_of(TEXTS, ASCII_TEXTS))
@example(rules=["evil.com"], text="see evil.com\x00 and \x7fevil.com")
@example(rules=["evil.com"], text="plain ascii, no host at all.")
def test_the_tokens_read_are_those_the_old_reading_chose(
    engine: str, rules: list[str], text: str
) -> None:
    with pytest.MonkeyPatch.context() as mp:
        hosts = DomainPolicy.block(rules)._view.index.domain_hosts()
        assert_same_tokens(hosts, [text], engine, mp)


@pytest.mark.parametrize("engine", ENGINES)
def test_the_hostile_and_recorded_texts_read_the_same_tokens(
    engine: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = [*CORPUS, *body_strings()]
    rules = ["b.com", "x.example", "evil.com", "wikipedia.org", "github.com", "openai.com"]
    hosts = DomainPolicy.block(rules)._view.index.domain_hosts()
    assert_same_tokens(hosts, texts, engine, monkeypatch)


@pytest.mark.parametrize("engine", ENGINES)
@settings(max_examples=100, deadline=None)
@given(rules=RULES, text=st.one_of(TEXTS, ASCII_TEXTS))
def test_audits_and_rendered_results_equal_the_full_reading(
    engine: str, rules: list[str], text: str
) -> None:
    """Against reading every token: the verdicts (all fields, in order) and the text."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AGENTLOOP_TOOLS_BLOCKLIST_ENGINE", engine)
        fast = DomainPolicy.block(rules)
        found = (audit(fast, text), rendered(fast, text))
        mp.setattr(RuleFinder, "tokens_to_read", lambda self, text: list(tokens(text)))
        full = DomainPolicy.block(rules)
        assert found == (audit(full, text), rendered(full, text))


def test_the_ascii_characters_ruled_out_by_bytes_are_those_both_regexes_see() -> None:
    for code in range(128):
        character = chr(code)
        unseen = bool(character.encode().translate(None, _prefilter._ASCII_SEEN))
        assert unseen is bool(_prefilter._UNSEEN.match(character)), code
        assert unseen is bool(_prefilter._UNSEEN_CJK_RULED.match(character)), code


LABELS = st.sampled_from(["evil", "x", "xn--e-ufa", "é", "東京", "a_b", "co", "uk", "b", "3com"])
DOTTED_RULES = st.lists(
    st.lists(LABELS, min_size=2, max_size=3).map(".".join), min_size=1, max_size=4, unique=True
)


@st.composite
def texts_of_hosts_and_marks(draw: st.DrawFn) -> tuple[list[str], str]:
    """Hosts and texts naming them among words, hiding marks (overlapping the hosts:
    ".xn--") and other dots, in every case and width."""
    rules = draw(DOTTED_RULES)
    pieces = st.one_of(
        st.sampled_from(rules),
        st.sampled_from(rules).map(str.upper),
        st.sampled_from(rules).map(lambda rule: rule.replace(".", "。")),
        st.sampled_from(["word ", "words and more words ", ". ", ".x", ".xn--", "xn--", "%",
                         "\\", "[.]", "(dot)", "\n", "\x00", "e", "ｅ", "İ", "東", " ", "/"]),
    )  # fmt: skip
    return rules, "".join(draw(st.lists(pieces, max_size=60)))


@pytest.mark.parametrize("engine", ENGINES)
@settings(max_examples=300, deadline=None)
@given(case=texts_of_hosts_and_marks())
@example(case=(["evil.com"], "see .xn--evil.com and x.xn--e-ufa"))
@example(case=(["a.xn--e-ufa"], "A.XN--E-UFA " + "word " * 50 + "a.xn--e-ufa"))
@example(case=(["a.xn--e-ufa"], "punycode hidden under a dot: q.xn--zz.org " + "word " * 20))
def test_hosts_and_marks_searched_apart_read_the_tokens_one_search_gave(
    engine: str, case: tuple[list[str], str]
) -> None:
    hosts, text = case  # RuleFinder's hosts as given: non-ASCII ones too
    with pytest.MonkeyPatch.context() as mp:
        assert_same_tokens(hosts, [text, text * 20], engine, mp)
