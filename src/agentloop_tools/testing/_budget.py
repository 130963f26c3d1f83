"""Budgets: what a test's agents may spend, checked against its evidence record.

A budget limits a test's totals (``EvidenceSummary``) for the counters in
``BUDGET_COUNTERS``. ``searches`` and ``fetches`` count hosted and client-side calls
alike: the provider's billed or shown hosted calls plus each call of our ``web_search``
or ``web_fetch`` (once, whatever its HTTP retries; a fetch our tool refused before any
request is a refused attempt, not a fetch). A limit on a counter the record does not
know fails: a budget never passes on a counter nobody reported.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentloop_tools._budget_limits import BUDGET_COUNTERS, check_limits
from agentloop_tools._errors import EvidenceAssertionError

if TYPE_CHECKING:
    from agentloop_tools.testing._evidence import AgentloopEvidence
    from agentloop_tools.testing._summary import ConversationEvidence, EvidenceSummary

# Which of our client-side tools a counter adds to the provider's hosted calls.
_CLIENT_TOOL = {"searches": "web_search", "fetches": "web_fetch"}


def spent(conversation: ConversationEvidence, counter: str) -> int | None:
    """What one conversation spent of a budget counter; None when unknown."""
    if counter not in _CLIENT_TOOL:
        return conversation.counter(counter)
    hosted = conversation.counter(counter)
    if hosted is None:
        return None
    tool = _CLIENT_TOOL[counter]
    client = sum(1 for call in conversation.tool_calls if _is(call, tool) and not call.refused)
    return hosted + client


def _is(call: object, tool: str) -> bool:
    known = getattr(call, "tool", None)
    return bool(known == tool if known is not None else getattr(call, "name", None) == tool)


@dataclass(frozen=True, slots=True)
class Overspend:
    """One counter over its limit, or unknown: what a budget failure names."""

    counter: str
    limit: int
    total: int | None  # None: unknown
    by_conversation: tuple[int | None, ...]

    def line(self) -> str:
        shares = ", ".join(
            f"conversation {index + 1}: {'unknown' if value is None else value}"
            for index, value in enumerate(self.by_conversation)
        )
        shares = f" ({shares})" if shares else ""
        if self.total is None:
            return f"- {self.counter}: limit {self.limit}, spent unknown{shares}"
        return f"- {self.counter}: limit {self.limit}, spent {self.total}{shares}"


def overspent(summary: EvidenceSummary, limits: Mapping[str, int]) -> list[Overspend]:
    """Each limited counter the test spent more of than its limit, or does not know."""
    found = []
    unplaced = any("could not be placed in a conversation" in note for note in summary.notes)
    for counter in BUDGET_COUNTERS:
        if counter not in limits:
            continue
        shares = tuple(spent(c, counter) for c in summary.conversations)
        total: int | None
        if any(share is None for share in shares) or (unplaced and counter != "tool_calls"):
            total = None
        else:
            total = sum(share for share in shares if share is not None)
        if total is None or total > limits[counter]:
            found.append(Overspend(counter, limits[counter], total, shares))
    return found


def budget_message(
    test: str | None,
    summary: EvidenceSummary,
    found: list[Overspend],
    origin: str,
) -> str:
    """What a budget failure says: the counters, their limits, the spend and the fix."""
    who = test or "the test"
    over = [item for item in found if item.total is not None]
    unknown = [item for item in found if item.total is None]
    lines = []
    if over:
        lines.append(f"{who} spent more than its budget allows:")
        lines += [item.line() for item in over]
    if unknown:
        lines.append(
            f"{who} has a budget on counter(s) the provider did not report, so they are "
            "unknown and the budget cannot hold:"
        )
        lines += [item.line() for item in unknown]
        lines.append(_why_unknown(summary, unknown))
    lines.append(f"(budget from {origin})")
    if over:
        lines.append(
            "Fix: make the agent spend less (fewer turns, searches or fetches; a shorter "
            "answer), then re-record its cassette; or, if the spend is right, raise the "
            "limit where the budget is written."
        )
    return "\n".join(lines)


def _why_unknown(summary: EvidenceSummary, unknown: list[Overspend]) -> str:
    notes = [note for note in summary.notes if "could not be placed" in note]
    if notes:
        return notes[0]
    if summary.attribution == "observer":
        return (
            "Usage comes from the provider's raw answers, which the plugin sees only for a "
            "test it records or replays (@pytest.mark.vcr): give the test a cassette."
        )
    names = {item.counter for item in unknown}
    if names & {"searches", "fetches"}:
        return (
            "A provider that shows no hosted call (Chat Completions) leaves searches and "
            "fetches unknown: limit tokens or model_requests for it instead, or use an API "
            "that reports them (Anthropic Messages, OpenAI Responses)."
        )
    return (
        "The recorded answers carry no usage for it (a provider that does not report it, "
        "or a cut body): limit a counter the provider reports instead."
    )


def assert_within_budget(
    evidence: AgentloopEvidence | EvidenceSummary, **limits: int
) -> EvidenceSummary:
    """Assert the test's agents spent no more than ``limits`` allow, in total.

    Args:
        evidence: the ``agentloop_evidence`` fixture, or an ``EvidenceSummary``.
        **limits: ``model_requests``, ``input_tokens``, ``output_tokens``, ``searches``,
            ``fetches``, ``tool_calls``: each the most the test may spend.

    Returns:
        The summary it checked.

    Raises:
        EvidenceAssertionError: a counter is over its limit, or unknown (a limit on a
            counter the provider did not report never passes), naming the counter, the
            limit, the spend and each conversation's share.
        TypeError, ValueError: an unknown counter, a limit that is not a whole number
            from 0, or no limit at all.
    """
    __tracebackhide__ = True
    checked = check_limits(limits, "assert_within_budget()")
    from agentloop_tools.testing._summary import EvidenceSummary

    summary = evidence if isinstance(evidence, EvidenceSummary) else evidence.summary()
    found = overspent(summary, checked)
    if found:
        written = ", ".join(f"{name}={value}" for name, value in checked.items())
        message = budget_message(summary.test, summary, found, f"assert_within_budget({written})")
        raise EvidenceAssertionError(message, kind="budget")
    return summary
