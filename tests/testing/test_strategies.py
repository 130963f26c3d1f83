"""The strategies keep their promises: checked against the audit they were not built with."""

from __future__ import annotations

import re

import pytest
from agentloop.transcript import Message, TextPart
from hypothesis import HealthCheck, find, given, settings

from agentloop_tools.testing.strategies import answers, transcripts, urls
from agentloop_tools.web import DomainPolicy

POLICIES = [
    DomainPolicy.block(["evil.com"]),
    DomainPolicy.block(["evil.com", "tracker.example.net", "docs.python.org/3/library"]),
    DomainPolicy.block(["10.0.0.1", "bad.org"]),
    DomainPolicy.allow(["python.org"]),
    DomainPolicy.allow(["python.org", "docs.djangoproject.com/en", "10.0.0.1"]),
]
IDS = [repr(policy) for policy in POLICIES]
# 40 examples a case in the suite (30 cases); HYPOTHESIS_PROFILE=thorough searches deeper.
_DEEP = settings().max_examples > 100
SETTINGS = settings(
    max_examples=settings().max_examples if _DEEP else 40,
    suppress_health_check=[HealthCheck.too_slow],
)


def answer(text: str) -> list[Message]:
    return [Message(role="assistant", content=(TextPart(text=text),))]


@pytest.mark.parametrize("policy", POLICIES, ids=IDS)
@pytest.mark.parametrize("permitted", [True, False])
def test_urls_are_inside_or_outside_as_promised(policy: DomainPolicy, permitted: bool) -> None:
    @SETTINGS
    @given(urls(policy, permitted=permitted))
    def check(url: str) -> None:
        assert policy.permits(url) is permitted, url

    check()


@pytest.mark.parametrize("policy", POLICIES, ids=IDS)
@pytest.mark.parametrize("violating", [True, False])
def test_answers_breach_or_keep_to_the_policy(policy: DomainPolicy, violating: bool) -> None:
    @SETTINGS
    @given(answers(policy, violating=violating))
    def check(text: str) -> None:
        found = policy.audit(answer(text))
        assert bool(found) is violating, (text, found)

    check()


@pytest.mark.parametrize("policy", POLICIES, ids=IDS)
@pytest.mark.parametrize("violating", [True, False])
def test_transcripts_breach_or_keep_to_the_policy(policy: DomainPolicy, violating: bool) -> None:
    @SETTINGS
    @given(transcripts(policy, violating=violating))
    def check(transcript: object) -> None:
        found = policy.audit(transcript)  # type: ignore[arg-type]
        assert bool(found) is violating, (transcript, found)

    check()


def test_examples_shrink_to_short_readable_cases() -> None:
    block = DomainPolicy.block(["evil.com"])
    assert find(urls(block, permitted=False), lambda url: True) == "https://evil.com/"
    assert find(answers(block, violating=True), lambda text: True) == "Try evil.com instead."
    # A failing property shrinks to the smallest breach that still fails it.
    tricked = find(urls(block, permitted=False), lambda url: "@" in url)
    assert re.fullmatch(r"https://[a-z0-9]{1,2}\.(example|test|invalid)@evil\.com/", tricked)
