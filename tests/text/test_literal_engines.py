"""Hyperscan and Aho-Corasick rule out the same text: speed never changes a verdict.

A blocklist's rule-out (``_prefilter.RuleFinder``) finds its rules' text with
``_literal_search.LiteralSearch``: Hyperscan when the ``speed`` extra is installed,
Aho-Corasick otherwise. Each engine is forced through ``AGENTLOOP_TOOLS_BLOCKLIST_ENGINE``
(or ``engine=``) and compared with the other: the literals found, the tokens read, the
violations of an audit and the search results the model reads. The Hyperscan side
skips where the package is absent (``.ci/lowest``), where the fallback runs alone.
"""

from __future__ import annotations

import os
import pickle
import re
from pathlib import Path

import pytest
from agentloop import Transcript
from agentloop.transcript import TextPart
from ahocorasick_rs import AhoCorasick
from hypothesis import example, given, settings
from hypothesis import strategies as st

from agentloop_tools._errors import ConfigError
from agentloop_tools.web import DomainPolicy
from agentloop_tools.web._search._render import SearchHit, render_results
from agentloop_tools.web._text import _literal_search
from agentloop_tools.web._text._literal_search import ENGINE_VARIABLE, LiteralSearch
from agentloop_tools.web._text._prefilter import RuleFinder
from tests.text.test_prefilter import RULES, TEXTS

pytestmark = pytest.mark.core

needs_hyperscan = pytest.mark.skipif(
    _literal_search.hyperscan_module() is None, reason="the speed extra is not installed"
)

REAL_CASSETTES = Path(
    os.environ.get(
        "AGENTLOOP_TOOLS_REAL_CASSETTES",
        Path(__file__).resolve().parents[3] / "shared" / "real-cassettes",
    )
)
LITERALS = st.lists(
    st.text(st.sampled_from("ab.é東%\\-\x00"), min_size=1, max_size=5), min_size=1, max_size=8
)


def occurrences(literals: list[str], text: str) -> set[tuple[int, int]]:
    """``(start, end)`` of each occurrence of each literal (the oracle: ``str.find``)."""
    found: set[tuple[int, int]] = set()
    for literal in literals:
        at = text.find(literal)
        while at != -1:
            found.add((at, at + len(literal)))
            at = text.find(literal, at + 1)
    return found


@needs_hyperscan
@settings(max_examples=400)
@given(literals=LITERALS, text=st.text(st.sampled_from("ab.é東%\\- \n\x00"), max_size=80))
@example(literals=["aa"], text="aaaa")
@example(literals=["é.b", "b"], text="東é.b é.b")
def test_both_engines_find_every_occurrence_or_one_overlapping_it(
    literals: list[str], text: str
) -> None:
    search = LiteralSearch(literals, engine="hyperscan")
    fast = search.starts(text)
    fallback = LiteralSearch(literals, engine="aho-corasick").starts(text)
    every = occurrences(literals, text)
    if any("\x00" in literal for literal in literals):  # C strings: not for Hyperscan
        assert search.engine == "aho-corasick"
        assert fast == fallback
    else:
        assert search.engine == "hyperscan"
        assert set(fast) == {start for start, _ in every}  # all of them, in characters
    overlapping = AhoCorasick(literals).find_matches_as_indexes(text, overlapping=True)
    assert {(start, end) for _, start, end in overlapping} == every
    reported = {
        (start, end) for _, start, end in AhoCorasick(literals).find_matches_as_indexes(text)
    }
    assert sorted(fallback) == sorted(start for start, _ in reported)
    for start, end in every - reported:  # each one left out overlaps a reported one
        assert any(begin < end and start < stop for begin, stop in reported)


def audit(policy: DomainPolicy, text: str) -> list[object]:
    transcript = Transcript()
    transcript.add_user_message("question")
    transcript.add_assistant_message([TextPart(text=text)])
    return list(policy.audit(transcript))


def rendered(policy: DomainPolicy, text: str) -> str:
    hits = [SearchHit(title=text[:80], url="https://example.org/", snippet=text, published=None)]
    return render_results(hits, policy=policy)


def both_engines(rules: list[str], text: str) -> list[tuple[object, ...]]:
    readings: list[tuple[object, ...]] = []
    for engine in ("hyperscan", "aho-corasick"):
        with pytest.MonkeyPatch.context() as patched:
            patched.setenv(ENGINE_VARIABLE, engine)
            finder = RuleFinder(rules, cjk=not any("xn--" in rule for rule in rules))
            policy = DomainPolicy.block(rules)
            # The first text compiles the database; the next ones are read as bytes.
            finder.tokens_to_read("warm")
            audit(policy, "warm")
            if engine == "hyperscan":
                assert finder._search.engine == engine
            readings.append(
                (finder.tokens_to_read(text), audit(policy, text), rendered(policy, text))
            )
            if engine == "aho-corasick":
                assert finder._search.engine == engine
    return readings


@needs_hyperscan
@settings(max_examples=300)
@given(rules=RULES, text=TEXTS)
@example(rules=["evil.com"], text="see evil。com and ｅvil.com, EVIL.COM/x")
@example(rules=["evil.com"], text="\ud800 see evil.com")
@example(rules=["evil.com"], text="東京 https://evil.com/ and evil[.]com")
def test_the_audit_and_the_rendered_results_are_the_same_with_either_engine(
    rules: list[str], text: str
) -> None:
    fast, fallback = both_engines(rules, text)
    assert fast == fallback


def real_texts() -> list[Path]:
    return sorted(REAL_CASSETTES.glob("*.yaml")) if REAL_CASSETTES.is_dir() else []


@needs_hyperscan
@pytest.mark.skipif(not real_texts(), reason="the real cassettes are not on this machine")
@pytest.mark.parametrize("path", real_texts(), ids=lambda path: path.name)
def test_real_recorded_text_reads_the_same_with_either_engine(path: Path) -> None:
    text = path.read_text(encoding="utf-8", errors="replace")
    hosts = sorted(set(re.findall(r"(?:[a-z0-9-]+\.)+[a-z]{2,}", text.lower())))
    rules = [*hosts[::3][:200], "wikipedia.org", "evil.example"]
    fast, fallback = both_engines(rules, text)
    assert fast == fallback


@needs_hyperscan
def test_a_compiled_search_pickles_with_its_database_and_finds_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    search = LiteralSearch(["evil.com", "%", "xn--"], engine="hyperscan")
    text = "see https://EVIL.com/%41 and xn--e-ufa.com".lower()
    found = sorted(search.starts(text))
    assert search.engine == "hyperscan"
    pickled = pickle.dumps(search)
    monkeypatch.setattr(_literal_search, "_COMPILED", {})  # as in a fresh worker
    monkeypatch.setenv(ENGINE_VARIABLE, "auto")
    restored = pickle.loads(pickled)
    assert restored.engine == "hyperscan"  # loaded from the pickle: no compile to wait for
    assert sorted(restored.starts(text)) == found


@needs_hyperscan
def test_a_database_that_does_not_load_here_is_compiled_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    search = LiteralSearch(["other.example"], engine="auto")
    monkeypatch.setattr(_literal_search, "_COMPILED", {})
    restored = _literal_search._restore(("other.example",), "auto", b"not a database")
    assert restored.engine == "aho-corasick"
    assert restored.starts("an other.example") == search.starts("an other.example") == [3]


@needs_hyperscan
def test_auto_compiles_once_the_text_read_would_have_paid_for_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_literal_search, "_COMPILED", {})
    search = LiteralSearch(["paid.example"], engine="auto")
    chunk = "a" * 1000 + " paid.example "
    for _ in range(_literal_search.PAYBACK_CHARS_PER_LITERAL // len(chunk)):
        search.starts(chunk)
    assert search.engine == "aho-corasick"
    search.starts(chunk * 2)
    assert search.engine == "hyperscan"
    # Another search of the same literals in this process uses the same database.
    assert LiteralSearch(["paid.example"], engine="auto").engine == "hyperscan"


def test_forcing_the_fallback_never_compiles(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENGINE_VARIABLE, "aho-corasick")
    search = LiteralSearch(["forced.example"])
    search.starts("forced.example " * 100_000)
    assert search.engine == "aho-corasick"


@pytest.mark.parametrize("value", ["hyperscan!", "ac", "on"])
def test_an_unknown_engine_fails_loudly_naming_the_variable_and_the_choices(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv(ENGINE_VARIABLE, value)
    with pytest.raises(ConfigError, match=r"AGENTLOOP_TOOLS_BLOCKLIST_ENGINE=.*auto, hyperscan"):
        audit(DomainPolicy.block(["evil.com"]), "see evil.com")


def test_asking_for_hyperscan_without_the_package_names_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(ENGINE_VARIABLE, "hyperscan")
    monkeypatch.setattr(_literal_search, "_imported", [None])
    with pytest.raises(ConfigError, match=r"speed extra"):
        LiteralSearch(["evil.com"])


def test_the_whitespace_written_out_is_what_a_str_pattern_calls_whitespace() -> None:
    from agentloop_tools.web._text._prefilter import _WHITESPACE

    written = re.compile(f"[{_WHITESPACE}]")
    every = "".join(chr(code) for code in range(0x110000) if not 0xD800 <= code < 0xE000)
    assert [m.start() for m in written.finditer(every)] == [
        m.start() for m in re.finditer(r"\s", every)
    ]


@needs_hyperscan
def test_hyperscan_reads_the_class_of_unseen_characters_as_python_does_for_every_character() -> (
    None
):
    from agentloop_tools.web._text._prefilter import _SEEN_CJK_RULED, _UNSEEN_CJK_RULED

    search = LiteralSearch(["never.example"], engine="hyperscan", seen=_SEEN_CJK_RULED)
    search.starts("x")  # compiles
    every = "".join(chr(code) for code in range(0x110000) if not 0xD800 <= code < 0xE000)
    found = search.starts_and_unseen(every.encode(), len(every))
    assert found is not None
    assert sorted(found) == [m.start() for m in _UNSEEN_CJK_RULED.finditer(every)]
