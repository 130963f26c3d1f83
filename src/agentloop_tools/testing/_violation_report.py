"""The failure text of a domain policy breach, shared by the helper and the plugin's audit."""

from __future__ import annotations

from collections.abc import Sequence

from agentloop.transcript import Message, TextPart

from agentloop_tools._visible import visible
from agentloop_tools.web import DomainPolicy, Violation
from agentloop_tools.web._transcript._tool_calls import ToolCall, call_for, tool_calls

EXCERPT = 60


def violation_report(
    found: Sequence[Violation],
    conversations: Sequence[Sequence[Message]],
    policy: DomainPolicy,
    *,
    several: bool,
) -> str:
    """One line per violation: where, message, URL or mention, verdict; text ones with an excerpt.

    Args:
        found: the violations, each naming its conversation (``Violation.conversation``).
        conversations: the messages of each conversation, for the excerpts.
        policy: the policy they break.
        several: whether to name the conversation on each line.
    """
    noun = "violation" if len(found) == 1 else "violations"
    lines = [f"{len(found)} domain policy {noun} ({policy!r}):"]
    calls: dict[int, list[ToolCall]] = {}
    refused = 0
    for violation in found:
        place = f"conversation {violation.conversation + 1}, " if several else ""
        line = (
            f"  - {violation.where:<8} {place}message {violation.message_index}: "
            f"{visible(violation.url)}  [{violation.verdict}]"
        )
        messages = conversations[violation.conversation]
        excerpt = _excerpt(messages, violation)
        if violation.where == "tool-call":
            if violation.conversation not in calls:
                calls[violation.conversation] = tool_calls(messages)
            call = call_for(calls[violation.conversation], violation.message_index, violation.url)
            if call is not None:
                refused += call.status == "refused"
                line += f"\n      {visible(call.outcome())}"
        lines.append(line + (f"\n      ...{excerpt}..." if excerpt else ""))
    if refused == len(found):
        lines += [
            "",
            "Each line is a URL the model asked web_fetch for; the tool refused it, so nothing "
            "was requested or read and no page of it reached the answer. To pass, keep the "
            "model from asking for it (the prompt, the results it is shown), or change the "
            "policy if the domain is fine.",
        ]
    else:
        lines += [
            "",
            "Each line is a place a finished turn reached a domain the policy does not permit. "
            "Tighten the prompt or the search filter, or change the policy if the domain is "
            "fine." + (" A line that says the tool refused it read nothing." if refused else ""),
        ]
    return "\n".join(lines)


def _excerpt(messages: Sequence[Message], violation: Violation) -> str:
    if violation.span is None:
        return ""
    message = messages[violation.message_index]
    text = "".join(part.text for part in message.content if isinstance(part, TextPart))
    start, end = violation.span
    left = max(start - EXCERPT // 2, 0)
    right = min(end + EXCERPT // 2, len(text))
    return visible(" ".join(text[left:right].split()))
