"""Whether a test passes the plugin: every pass/fail decision of ours, behind :func:`judge`.

The session calls :func:`judge` at three moments of a test (before its body, after it,
after teardown) and turns a :class:`Verdict` into the test's failure; nothing else in
the plugin fails a test for a policy, evidence or cassette reason.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, NamedTuple

import pytest

from agentloop_tools._plugin import messages
from agentloop_tools._plugin.failures import kind_of

if TYPE_CHECKING:
    from agentloop_tools._plugin.budget import Budget
    from agentloop_tools._plugin.policies import Marker
    from agentloop_tools.testing import AgentloopEvidence
    from agentloop_tools.web import DomainPolicy

Moment = Literal["before", "call", "teardown"]


class Rules(NamedTuple):
    """What a test is held to, as the session read it from the configuration and markers."""

    ours: bool  # the test uses the plugin (a fixture or the marker)
    marker: Marker | None
    policy: DomainPolicy | None  # the policy it is audited with, if any
    origin: str | None  # where that policy was written
    project_origin: str | None  # the project policy's origin, when there is one
    record_in_ci: bool  # --agentloop-record-in-ci
    refused_attempts: str = "report"  # how a URL web_fetch refused counts
    refused_from: str | None = None  # where "fail" was set
    budget: Budget | None = None  # the most its agents may spend (markers over ini key)


class Verdict(NamedTuple):
    """A failure of the plugin's: the message, its kind, and whether it beats an xfail."""

    message: str
    kind: str | None
    beats_xfail: bool


def judge(
    item: pytest.Item,
    rules: Rules,
    when: Moment,
    evidence: AgentloopEvidence | None,
    body: BaseException | None = None,
) -> Verdict | None:
    """The plugin's verdict on a test at one moment, or None when it has nothing against it.

    ``before``: a plain vcr test under the project policy would record model traffic in
    CI. ``call``: after the body (``body`` is what it raised): unused interactions, the
    evidence the policy needs, then the audit; a breach is never hidden by the body's
    own skip, xfail or failure. ``teardown``: the cassette was refused when saved, or a
    conversation teardown ran (a fixture's, a finalizer's) breached the policy.
    """
    if when == "before":
        # (The plugin's own tests are guarded by their cassette fixture instead.)
        return None if rules.ours else _recording_in_ci(item, rules)
    if when == "teardown":
        return _after_teardown(item, rules, evidence)
    verdict = _after_body(item, rules, evidence, body)
    _remember_what_was_judged(item, evidence)
    return verdict


def _remember_what_was_judged(item: pytest.Item, evidence: AgentloopEvidence | None) -> None:
    """What the body left: teardown judges only the conversations that come after it."""
    if evidence is None:
        return
    from agentloop_tools._plugin.cassette import provider_answers

    seen = (len(evidence.transcripts), evidence.observer.answers, provider_answers(item))
    item.stash[_JUDGED] = seen


def _after_teardown(
    item: pytest.Item, rules: Rules, evidence: AgentloopEvidence | None
) -> Verdict | None:
    """A refused cassette, then a breach in a conversation teardown ran (a fixture's)."""
    from agentloop_tools._plugin.cassette import refusal

    problem = refusal(item) if rules.ours else None
    notes = [problem] if problem else []
    kind = "secret" if problem else None
    late = _late_breach(item, rules, evidence)
    if late is not None:
        notes.append(late)
        kind = kind or "domain-policy"
    return Verdict("\n".join(notes), kind, beats_xfail=True) if notes else None


def _late_breach(item: pytest.Item, rules: Rules, evidence: AgentloopEvidence | None) -> str | None:
    if evidence is None or rules.policy is None:
        return None
    conversations, observed, played = item.stash.get(_JUDGED, (0, 0, 0))
    if len(evidence.transcripts) <= conversations:
        return None
    from agentloop_tools._plugin.cassette import provider_answers
    from agentloop_tools.testing._violation_report import violation_report
    from agentloop_tools.web._policy._violation import failing

    found = [v for v in evidence.audit(rules.policy) if v.conversation >= conversations]
    item.stash[VIOLATIONS] = item.stash.get(VIOLATIONS, 0) + len(found)
    item.stash[REFUSED] = item.stash.get(REFUSED, 0) + sum(v.refused for v in found)
    if not failing(found, rules.refused_attempts):
        return None
    item.stash[LATE_BREACH] = True
    every = [transcript.messages for transcript in evidence.transcripts]
    report = violation_report(
        found,
        every,
        rules.policy,
        several=True,
        refused_attempts=rules.refused_attempts,
        setting_from=rules.refused_from,
    )
    late = sorted({v.conversation + 1 for v in found})
    # Answers the observer saw after the body that the cassette did not serve: those
    # conversations ran with the cassette closed (or on a transport of their own).
    unreplayed = evidence.observer.answers - observed > provider_answers(item) - played
    note = messages.breach_in_teardown(item.nodeid, late, replayed=not unreplayed)
    return f"{report}\n(policy from {rules.origin})\n{note}"


def _after_body(
    item: pytest.Item,
    rules: Rules,
    evidence: AgentloopEvidence | None,
    body: BaseException | None,
) -> Verdict | None:
    if body is not None and not _agent_ran(item, evidence):
        return None  # ended before any agent ran: its own outcome, as the test says
    ended = body if isinstance(body, (pytest.skip.Exception, pytest.xfail.Exception)) else None
    notes: list[str] = []
    try:
        if body is not None and ended is None:
            # The body's own failure stands beside a breach, which leads (an xfail
            # would otherwise swallow both).
            _audit(item, rules, evidence)
            if kind_of(body) is None:  # a failure of ours (a miss, the cap) says it all
                _check_budget(item, rules, evidence, known_only=True)
            return None
        if rules.ours and ended is None:
            from agentloop_tools._plugin.cassette import check_unused_interactions

            check_unused_interactions(item)
        _require_evidence(item, rules, evidence)
        if rules.ours:
            _audit(item, rules, evidence)
            _check_budget(item, rules, evidence)
    except pytest.fail.Exception as failure:
        notes.append(str(failure.msg))
        kind = kind_of(failure)
    else:
        return None
    if ended is not None:
        how = "xfail" if isinstance(ended, pytest.xfail.Exception) else "skip"
        notes.append(messages.ended_after_breach(how))
    elif body is not None:
        notes.append(messages.body_failed_too(body))
    beats_xfail = not expects_the_gate(item)
    if item.get_closest_marker("xfail") is not None and beats_xfail:
        notes.append(messages.xfail_does_not_expect(item.nodeid))
    return Verdict("\n".join(notes), kind, beats_xfail)


def _check_budget(
    item: pytest.Item, rules: Rules, evidence: AgentloopEvidence | None, *, known_only: bool = False
) -> None:
    """Over budget, a limited counter unknown, or a request the spend cap refused."""
    __tracebackhide__ = True
    if rules.budget is None and not rules.ours:
        return
    from agentloop_tools._plugin.budget import check_budget

    check_budget(item, rules.budget, evidence, known_only=known_only)


def _agent_ran(item: pytest.Item, evidence: AgentloopEvidence | None) -> bool:
    """Whether the body got as far as an agent: a conversation seen, or model traffic."""
    if evidence is not None and evidence.transcripts:
        return True
    from agentloop_tools._plugin.cassette import provider_requests

    return provider_requests(item) > 0


def _recording_in_ci(item: pytest.Item, rules: Rules) -> Verdict | None:
    """A plain vcr test under the project policy must not record model traffic in CI."""
    from agentloop_tools._plugin.cassette import ci, recorded_provider_requests

    cassette = getattr(item, "funcargs", {}).get("vcr")
    if cassette is None or cassette.write_protected or not ci() or rules.record_in_ci:
        return None
    if recorded_provider_requests(cassette):
        path = str(cassette._path)
        message = messages.recording_test_in_ci(item.nodeid, path, exists=True)
        return Verdict(message, None, beats_xfail=True)
    return None


def _require_evidence(item: pytest.Item, rules: Rules, evidence: AgentloopEvidence | None) -> None:
    """A test held to a policy must show the plugin what its agents did."""
    __tracebackhide__ = True
    from agentloop_tools._plugin.cassette import provider_answers, provider_requests

    if evidence is not None and rules.policy is not None:
        problems = evidence.problems()
        if problems:
            pytest.fail("\n".join(problems), pytrace=False)
    if evidence is not None and evidence.transcripts:
        # Every answer the cassette shows must have reached the plugin: one connected
        # agent must not vouch for another that was not.
        answered = provider_answers(item) if rules.policy is not None else 0
        if answered > evidence.observer.answers:
            pytest.fail(
                messages.unseen_requests(
                    item.nodeid, answered, evidence.observer.answers, rules.origin or ""
                ),
                pytrace=False,
            )
        return
    marker = rules.marker
    if marker is not None:
        if marker.require_evidence:
            pytest.fail(messages.no_evidence(item.nodeid), pytrace=False)
        # The opt-out says no agent runs; a cassette that shows one says otherwise.
        sent = provider_requests(item)
        if sent:
            pytest.fail(messages.opted_out_but_sent(item.nodeid, sent), pytrace=False)
        item.stash[NOT_AUDITED] = True
        return
    if rules.project_origin is None:
        return
    # The project's policy applies to every test: a conversation the cassette shows
    # but the plugin never saw would otherwise pass unaudited.
    sent = provider_requests(item)
    if sent:
        pytest.fail(
            messages.unseen_conversation(item.nodeid, sent, rules.project_origin), pytrace=False
        )


def _audit(item: pytest.Item, rules: Rules, evidence: AgentloopEvidence | None) -> None:
    __tracebackhide__ = True
    if evidence is None or not evidence.transcripts or rules.policy is None:
        return
    from agentloop_tools._plugin.failures import fail
    from agentloop_tools.testing._violation_report import violation_report
    from agentloop_tools.web._policy._violation import failing

    found = evidence.audit(rules.policy)
    item.stash[VIOLATIONS] = len(found)
    item.stash[REFUSED] = sum(v.refused for v in found)
    # A refused attempt (the tool refused the URL, nothing was read) fails only when
    # refused attempts are set to fail; it is counted and shown all the same.
    if failing(found, rules.refused_attempts):
        conversations = [transcript.messages for transcript in evidence.transcripts]
        report = violation_report(
            found,
            conversations,
            rules.policy,
            several=len(conversations) > 1,
            refused_attempts=rules.refused_attempts,
            setting_from=rules.refused_from,
        )
        fail(f"{report}\n(policy from {rules.origin})", "domain-policy")


# What the session's report reads of a judged test.
VIOLATIONS = pytest.StashKey[int]()  # every violation the audit found
REFUSED = pytest.StashKey[int]()  # of which attempts the policy held (Violation.refused)
LATE_BREACH = pytest.StashKey[bool]()  # a conversation run by teardown breached
# Conversations, answers seen and answers the cassette served, when the body ended.
_JUDGED = pytest.StashKey[tuple[int, int, int]]()
NOT_AUDITED = pytest.StashKey[bool]()  # marked, opted out of evidence, and showed none


def expects_the_gate(item: pytest.Item) -> bool:
    """Whether the test's xfail names the plugin's failure: ``raises=pytest.fail.Exception``."""
    marker = item.get_closest_marker("xfail")
    raises = marker.kwargs.get("raises") if marker is not None else None
    try:
        return raises is not None and issubclass(pytest.fail.Exception, raises)
    except TypeError:  # not a class or tuple of classes: pytest reports that itself
        return False
