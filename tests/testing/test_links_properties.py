"""links() reads links exactly as the allowlist audit does (property tests)."""

from __future__ import annotations

from agentloop.transcript import Message, TextPart
from hypothesis import example, given

from agentloop_tools.testing.strategies import answers
from agentloop_tools.web import DomainPolicy, links
from agentloop_tools.web._text._commands import command_targets

POLICY = DomainPolicy.allow(["python.org", "docs.example.com/guide"])


def _turn(answer: str) -> list[Message]:
    return [
        Message(role="user", content=(TextPart(text="q"),)),
        Message(role="assistant", content=(TextPart(text=answer),)),
    ]


@given(answers(POLICY, violating=True))
# WHATWG reads "\\" as the path's start, RFC 3986 readers as part of the authority
# (host python。org): the ideographic full stop is no sentence end, the link is whole.
@example("https://a.example\\@python\u3002org/")
def test_every_link_the_allowlist_refuses_is_a_link(answer: str) -> None:
    spans = {(link.start, link.end) for link in links(_turn(answer))}
    commands = {(found.start, found.end) for found in command_targets(answer)}
    in_text = [v for v in POLICY.audit(_turn(answer)) if v.where == "text"]
    # A violating answer is a text the allowlist refuses: never zero checks.
    assert in_text, answer
    for violation in in_text:
        assert violation.span in spans or violation.span in commands, violation


def test_a_backslash_before_userinfo_keeps_an_ideographic_full_stop_in_the_link() -> None:
    # To WHATWG the host is a.example and "@python。org/" its path; to urllib, httpx and
    # curl "a.example\\" is userinfo and python。org (python.org) the host. Readers
    # disagree on the path, so "。" ends no sentence: one link, refused by the allowlist.
    answer = "see https://a.example\\@python\u3002org/ now"
    whole = (4, 4 + len("https://a.example\\@python\u3002org/"))
    assert [(link.start, link.end) for link in links(_turn(answer))] == [whole]
    audited = [(v.span, v.url) for v in POLICY.audit(_turn(answer)) if v.where == "text"]
    assert audited == [(whole, answer[whole[0] : whole[1]])]


@given(answers(POLICY, violating=False))
def test_links_of_a_clean_answer_are_the_links_it_permits(answer: str) -> None:
    found = links(_turn(answer))
    assert POLICY.audit(_turn(answer)) == []
    for link in found:
        # The URL a reader follows is one the policy permits, as the audit judged it.
        assert POLICY.permits(link.url), link
        assert not link.consulted  # no tool ran in this conversation
