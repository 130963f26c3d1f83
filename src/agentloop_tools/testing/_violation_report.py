"""The failure text of a domain policy breach, shared by the helper and the plugin's audit."""

from __future__ import annotations

from collections.abc import Sequence

from agentloop.transcript import Message, TextPart

from agentloop_tools._visible import visible
from agentloop_tools.web import DomainPolicy, Violation
from agentloop_tools.web._transcript._tool_calls import ToolCall, call_for, our_tool_calls

EXCERPT = 60


def violation_report(
    found: Sequence[Violation],
    conversations: Sequence[Sequence[Message]],
    policy: DomainPolicy,
    *,
    several: bool,
    refused_attempts: str = "report",
    setting_from: str | None = None,
) -> str:
    """One line per violation: where, message, URL or mention, verdict; text ones with an excerpt.

    Args:
        found: the violations, each naming its conversation (``Violation.conversation``).
        conversations: the messages of each conversation, for the excerpts.
        policy: the policy they break.
        several: whether to name the conversation on each line.
        refused_attempts: how the refused attempts among them count (``"report"``: shown,
            not failing; ``"fail"``); ``setting_from`` says where ``"fail"`` was set.
    """
    held = sum(1 for violation in found if violation.refused)
    noun = "violation" if len(found) == 1 else "violations"
    some = f", {held} of them refused by the tool" if held and held < len(found) else ""
    if held and held == len(found):
        some = f", {'refused' if held == 1 else 'all refused'} by the tool"
    lines = [f"{len(found)} domain policy {noun}{some} ({policy!r}):"]
    calls: dict[int, list[ToolCall]] = {}
    for violation in found:
        place = f"conversation {violation.conversation + 1}, " if several else ""
        line = (
            f"  - {violation.where:<8} {place}message {violation.message_index}: "
            f"{visible(violation.url)}  [{violation.verdict}]"
        )
        messages = conversations[violation.conversation]
        excerpt = _excerpt(messages, violation)
        if violation.refused or violation.where == "tool-call":
            if violation.conversation not in calls:
                calls[violation.conversation] = our_tool_calls(messages)
            call = _call(calls[violation.conversation], violation)
            if violation.refused:
                by = f"{call.name} ([{call.code}])" if call is not None else "the tool"
                line += f"\n      refused by {visible(by)}: the policy held, nothing was read"
            elif call is not None:
                line += f"\n      {visible(call.describe())}"
        lines.append(line + (f"\n      ...{excerpt}..." if excerpt else ""))
    lines += ["", _advice(len(found), held, refused_attempts, setting_from)]
    return "\n".join(lines)


def _advice(total: int, held: int, refused_attempts: str, setting_from: str | None) -> str:
    """What the lines mean and what to do; never "keep the model from asking" for an
    attempt the policy held unless refused attempts were set to fail."""
    where = f" ({setting_from})" if setting_from else ""
    if held == total and refused_attempts == "fail":
        return (
            "Each line is a URL web_fetch refused before requesting it: nothing was read "
            "and the policy held. It fails this test because refused attempts are set to "
            f"fail{where}. To pass, keep the model from asking for it (the prompt, the "
            "results it is shown), change the policy if the domain is fine, or count "
            'refused attempts without failing (refused_attempts="report", the default).'
        )
    text = (
        "Each line is a place a finished turn reached a domain the policy does not permit. "
        "Tighten the prompt or the search filter, or change the policy if the domain is fine."
    )
    if held == total:
        return (
            "Each line is a URL web_fetch refused before requesting it: nothing was read "
            "and the policy held. Refused attempts are counted and shown, not failing "
            '(refused_attempts="report"); set refused_attempts="fail" to fail on them.'
        )
    if held and refused_attempts == "fail":
        return f"{text} A line refused by the tool read nothing; it fails too{where}."
    if held:
        return (
            f"{text} A line refused by the tool read nothing: the policy held, and it "
            'does not fail the test (refused_attempts="report").'
        )
    return text


def _call(calls: Sequence[ToolCall], violation: Violation) -> ToolCall | None:
    """The call a tool-call violation names, or whose result requested a refused hop."""
    if violation.where == "tool-call":
        return call_for(calls, violation.message_index, violation.url)
    for call in calls:
        if call.result_index == violation.message_index and violation.url in (
            *call.redirects,
            *call.robots,
        ):
            return call
    return None


def _excerpt(messages: Sequence[Message], violation: Violation) -> str:
    if violation.span is None:
        return ""
    message = messages[violation.message_index]
    text = "".join(part.text for part in message.content if isinstance(part, TextPart))
    start, end = violation.span
    left = max(start - EXCERPT // 2, 0)
    right = min(end + EXCERPT // 2, len(text))
    return visible(" ".join(text[left:right].split()))
