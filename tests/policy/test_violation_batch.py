"""The text audit's batched Violation building and its once-per-readings verdicts
(issue 30) leave every finding as it was.

``add_text_violations`` builds a token's Violations in one loop; ``_refused`` skips the
verdict lookup when a finding's readings are the previous finding's tuple (a repeated
path's mentions share one). The oracle: each Violation through the public constructor,
and every finding's readings a tuple of its own (so the skip never applies). Texts:
generated ones, the hostile shapes, answer-like and benchmark-like text, and the real
cassettes when present; violations (every field, in order) and rendered ``web_search``
results are compared.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import pickle
from collections.abc import Iterator

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from agentloop_tools.web import Violation
from agentloop_tools.web._policy import _text_audit
from agentloop_tools.web._policy._memo import AuditMemo, Flagged
from agentloop_tools.web._policy._text_audit import TextAudit
from agentloop_tools.web._policy._violation import add_text_violations, text_violation
from agentloop_tools.web._text._finder import Found
from tests.policy.test_hot_path import URLS
from tests.policy.test_plain_links import CORPUS, POLICIES, REAL, TOKENS, outcome
from tests.text.test_finder_speed import TEXTS

pytestmark = pytest.mark.core


def _one_by_one(
    violations: list[Violation], flagged: list[Flagged], index: int, offset: int
) -> None:
    for start, end, written, rule, _ in flagged:
        violations.append(
            Violation(written, "text", index, rule, span=(start + offset, end + offset))
        )


@contextlib.contextmanager
def without_batching() -> Iterator[None]:
    """The reading before: one constructor call per Violation, one lookup per finding."""
    refused = TextAudit._refused

    def own_readings(
        audit: TextAudit, token: str, finds: list[Found], memo: AuditMemo
    ) -> list[Flagged]:
        # (*t,) is a new tuple (tuple(t) is t): no finding shares the last one's readings.
        fresh = [found._replace(readings=(*found.readings,)) for found in finds]
        return refused(audit, token, fresh, memo)

    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(_text_audit, "add_text_violations", _one_by_one)
        patched.setattr(TextAudit, "_refused", own_readings)
        yield


def check(texts: list[str]) -> None:
    fast = [outcome(policy, text) for text in texts for policy in POLICIES]
    with without_batching():
        slow = [outcome(policy, text) for text in texts for policy in POLICIES]
    assert fast == slow


@settings(max_examples=150, deadline=None)
@given(text=st.lists(st.one_of(TEXTS, URLS, TOKENS), max_size=6).map(" ".join))
@example(text="https://a.example/" + "b.com/" * 300)
@example(text="https://evil.example/" + "b.com/evil.com/" * 50 + " b.com b.com")
def test_generated_texts_are_audited_as_one_by_one(text: str) -> None:
    check([text])


@pytest.mark.parametrize("index", range(len(CORPUS)))
def test_the_corpus_is_audited_as_one_by_one(index: int) -> None:
    check([CORPUS[index]])


@pytest.mark.skipif(not REAL, reason="real cassettes not found (tests/real_cassettes.py)")
def test_the_real_cassettes_are_audited_as_one_by_one() -> None:
    check([text for text in REAL if len(text) < 100_000][:300])
    check(["\n".join(REAL)[:400_000]])


def test_a_batched_violation_is_the_dataclass_one() -> None:
    flagged: list[Flagged] = [(0, 5, "b.com", "b.com", True), (6, 11, "a.org", None, False)]
    batched: list[Violation] = []
    add_text_violations(batched, flagged, 3, 10)
    built = [
        Violation("b.com", "text", 3, "b.com", span=(10, 15)),
        Violation("a.org", "text", 3, None, span=(16, 21)),
    ]
    assert batched == built
    assert batched == [
        text_violation(url, 3, rule, (s + 10, e + 10)) for s, e, url, rule, _ in flagged
    ]
    for fast, slow in zip(batched, built, strict=True):
        assert type(fast) is Violation
        assert hash(fast) == hash(slow)
        assert repr(fast) == repr(slow)
        assert str(fast) == str(slow)
        assert pickle.loads(pickle.dumps(fast)) == slow
        assert copy.copy(fast) == slow
        assert copy.deepcopy(fast) == slow
        assert dataclasses.replace(fast, rule="x") == dataclasses.replace(slow, rule="x")
        assert dataclasses.astuple(fast) == dataclasses.astuple(slow)
        with pytest.raises(dataclasses.FrozenInstanceError):
            fast.url = "c.com"  # type: ignore[misc]
