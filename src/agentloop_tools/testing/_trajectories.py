"""Trajectory assertions: which tools the agent called, in what order, with which arguments.

``tool_call(name, **arguments)`` describes one expected call; ``assert_tool_calls``
aligns the expected calls against the actual trajectory (``web.tool_calls``: hosted and
client-side calls alike) and, when they disagree, shows that alignment: which expected
call matched which actual call, and for each one that did not, why, argument by
argument. Like the other helpers it raises ``EvidenceAssertionError`` itself, so it reads
the same under ``--assert=plain``, and its message is redacted and terminal-safe.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from agentloop import Transcript
from agentloop.transcript import Message

from agentloop_tools._docs import docs_url
from agentloop_tools._errors import EvidenceAssertionError
from agentloop_tools.testing._evidence import AgentloopEvidence
from agentloop_tools.web import ToolCall, tool_calls
from agentloop_tools.web._transcript._tool_calls import shown_value

type Order = Literal["exact", "in-order", "any"]
ORDERS: tuple[Order, ...] = ("exact", "in-order", "any")
_ORDER_WORDS = {
    "exact": "exactly these calls, in this order",
    "in-order": "these calls in this order",
    "any": "these calls, in any order",
}
_SHOWN = 60  # characters of one value in a message
_ROWS = 40  # actual calls listed in a failure
_CANDIDATES = 3  # closest calls shown for an expected call that matched none


@dataclass(frozen=True, slots=True, repr=False)
class ExpectedToolCall:
    """One expected tool call; build it with :func:`tool_call`."""

    name: str
    arguments: Mapping[str, Any]

    def __repr__(self) -> str:
        shown = "".join(f", {key}={_matcher_text(want)}" for key, want in self.arguments.items())
        return f"tool_call({self.name!r}{shown})"

    def matches(self, call: ToolCall) -> bool:
        """Whether ``call`` is this call: the same name, every named argument matching."""
        return call.name == self.name and all(
            key in call.arguments and _why_not(call.arguments[key], want) is None
            for key, want in self.arguments.items()
        )

    def mismatches(self, call: ToolCall) -> list[str]:
        """Why ``call`` is not this call, one reason per name or argument; empty if it is."""
        if call.name != self.name:
            return [f"named {_short(call.name)}, not {self.name!r}"]
        reasons = []
        for key, want in self.arguments.items():
            if key not in call.arguments:
                given = ", ".join(map(str, call.arguments)) or "none"
                if len(given) > _SHOWN:
                    given = given[: _SHOWN - 3] + "..."
                reasons.append(f"{key}: not given (arguments given: {given})")
                continue
            why = _why_not(call.arguments[key], want)
            if why is not None:
                reasons.append(f"{key}: {why}")
        return reasons


def tool_call(name: str, /, **arguments: Any) -> ExpectedToolCall:
    """An expected tool call for :func:`assert_tool_calls`.

    Args:
        name: the tool's name as the model called it (``"web_search"`` is a hosted
            search and our client-side search alike; ``ToolCall.hosted`` tells them apart).
        **arguments: the arguments to check, each a value (compared with ``==``), a
            compiled pattern (``re.search`` on ``str(value)``) or a predicate (a callable
            given the value, true to match). Arguments not named are ignored; a named
            argument the call did not pass does not match.
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"tool_call() needs a tool name (a non-empty str), got {name!r}.")
    for key, want in arguments.items():
        if isinstance(want, re.Pattern) and not isinstance(want.pattern, str):
            raise TypeError(
                f"tool_call({name!r}, {key}=...) got a bytes pattern {want!r}; arguments are "
                "matched as text: compile a str pattern, re.compile(r'...')."
            )
        if isinstance(want, type):
            raise TypeError(
                f"tool_call({name!r}, {key}={want.__name__}) got a class, which would be "
                "called as a predicate; to check the type, pass "
                f"{key}=lambda value: isinstance(value, {want.__name__})."
            )
    return ExpectedToolCall(name, dict(arguments))


def assert_tool_calls(
    evidence: AgentloopEvidence | Transcript | Sequence[Message] | Sequence[ToolCall] | Any,
    *expected: ExpectedToolCall | str,
    order: Order = "in-order",
    allow_extra: bool = True,
) -> list[ToolCall]:
    """The agent made the expected tool calls, hosted and client-side alike.

    Args:
        evidence: the ``agentloop_evidence`` fixture value (every conversation, in
            order), a ``Transcript``, a ``ConversationResult``, a list of messages, or a
            list of ``ToolCall`` (``tool_calls()`` filtered as you like).
        *expected: :func:`tool_call` values; a bare name is ``tool_call(name)``.
        order: ``"exact"``: exactly these calls in this order (``allow_extra`` does not
            apply); ``"in-order"``: these calls in this order, others allowed between
            them unless ``allow_extra=False`` (then one after the other, with other
            calls allowed only before and after the run); ``"any"``: these calls in any
            order, with ``allow_extra=False`` exactly this multiset.
        allow_extra: whether calls that match no expected call are allowed (for
            ``"in-order"``: between the expected ones).

    Returns:
        The actual call each expected call matched, in the order of ``expected``.
    """
    __tracebackhide__ = True
    wanted = _expected(expected)
    if order not in ORDERS:
        raise ValueError(
            f"assert_tool_calls() order must be one of {', '.join(map(repr, ORDERS))}, "
            f"got {order!r}."
        )
    if not isinstance(allow_extra, bool):
        raise TypeError(
            f"assert_tool_calls() allow_extra must be True or False, got {allow_extra!r}."
        )
    if not wanted and order != "exact" and allow_extra:
        raise TypeError(
            "assert_tool_calls() was given no expected call, so with other calls allowed it "
            "checks nothing. Name the calls (tool_call('web_search', query=...)), or assert "
            "that no tool was called with order='exact' or allow_extra=False."
        )
    actual = _trajectory(evidence)
    extras_ok = allow_extra and order != "exact"
    if order == "exact":
        pairs = _positional(wanted, actual)
    elif order == "in-order":
        run = None if allow_extra else _consecutive(wanted, actual)
        pairs = run if run is not None else _in_order(wanted, actual)
    else:
        pairs = _any_order(wanted, actual)
    missing = [index for index in range(len(wanted)) if index not in pairs]
    extra = [index for index in range(len(actual)) if index not in pairs.values()]
    if order == "in-order" and not allow_extra and pairs:
        # Only a call between the expected ones breaks the run; before and after are free.
        first, last = min(pairs.values()), max(pairs.values())
        extra = [index for index in extra if first < index < last]
    if not missing and (extras_ok or not extra):
        return [actual[pairs[index]] for index in range(len(wanted))]
    raise EvidenceAssertionError(
        _failure(wanted, actual, pairs, missing, extra, order=order, extras_ok=extras_ok)
    )


def _expected(given: Sequence[object]) -> list[ExpectedToolCall]:
    found = []
    for item in given:
        if isinstance(item, str):
            found.append(tool_call(item))
        elif isinstance(item, ExpectedToolCall):
            found.append(item)
        else:
            raise TypeError(
                f"assert_tool_calls() takes expected calls built with tool_call(name, "
                f"**arguments) (or a bare tool name), got {item!r}."
            )
    return found


def _trajectory(evidence: object) -> list[ToolCall]:
    if isinstance(evidence, AgentloopEvidence):
        if not evidence.transcripts:
            raise EvidenceAssertionError(
                "No conversation was captured in agentloop_evidence, so there is nothing to "
                "check. Build agents with the agentloop_agent fixture, or pass "
                "observer=agentloop_evidence.observer to agents you build yourself."
            )
        return evidence.tool_calls()
    if (
        isinstance(evidence, Sequence)
        and evidence
        and all(isinstance(item, ToolCall) for item in evidence)
    ):
        return list(evidence)
    return tool_calls(evidence)  # type: ignore[arg-type]  # a TypeError names what it takes


def _positional(wanted: Sequence[ExpectedToolCall], actual: Sequence[ToolCall]) -> dict[int, int]:
    return {
        index: index
        for index, expected in enumerate(wanted)
        if index < len(actual) and expected.matches(actual[index])
    }


def _in_order(wanted: Sequence[ExpectedToolCall], actual: Sequence[ToolCall]) -> dict[int, int]:
    """Each expected call matched to the earliest call after the previous match: if any
    in-order matching exists this finds one. One not found is skipped, so the later
    ones still show where they matched."""
    pairs: dict[int, int] = {}
    after = 0
    for index, expected in enumerate(wanted):
        at = next(
            (j for j in range(after, len(actual)) if expected.matches(actual[j])),
            None,
        )
        if at is not None:
            pairs[index] = at
            after = at + 1
    return pairs


def _consecutive(
    wanted: Sequence[ExpectedToolCall], actual: Sequence[ToolCall]
) -> dict[int, int] | None:
    """The earliest run of calls, one after the other, that the expected calls match."""
    for start in range(len(actual) - len(wanted) + 1):
        if all(expected.matches(actual[start + k]) for k, expected in enumerate(wanted)):
            return {k: start + k for k in range(len(wanted))}
    return None


def _any_order(wanted: Sequence[ExpectedToolCall], actual: Sequence[ToolCall]) -> dict[int, int]:
    """A largest matching of expected to actual calls (augmenting paths): a greedy one
    could give a call to a loose expectation that a strict one needed."""
    fits = [[j for j, call in enumerate(actual) if expected.matches(call)] for expected in wanted]
    owner: dict[int, int] = {}  # actual index -> expected index

    def place(index: int, seen: set[int]) -> bool:
        free = next((j for j in fits[index] if j not in owner), None)
        if free is not None:  # a free call first: the matching reads in order where it can
            owner[free] = index
            return True
        for j in fits[index]:
            if j in seen:
                continue
            seen.add(j)
            if j not in owner or place(owner[j], seen):
                owner[j] = index
                return True
        return False

    for index in range(len(wanted)):
        place(index, set())
    return {index: j for j, index in owner.items()}


def _failure(
    wanted: Sequence[ExpectedToolCall],
    actual: Sequence[ToolCall],
    pairs: Mapping[int, int],
    missing: Sequence[int],
    extra: Sequence[int],
    *,
    order: Order,
    extras_ok: bool,
) -> str:
    rule = _ORDER_WORDS[order]
    if order == "in-order" and not extras_ok:
        rule += ", one after the other (other calls only before and after them)"
    elif order != "exact":
        rule += ", other calls allowed" if extras_ok else ", no other call"
    problems = []
    if missing:
        problems.append(f"{len(missing)} of {len(wanted)} expected call(s) not found")
    if extra and not extras_ok:
        problems.append(f"{len(extra)} call(s) not expected")
    lines = [f"assert_tool_calls: {' and '.join(problems)} (order={order!r}: {rule}).", ""]
    lines += _aligned(wanted, actual, pairs, missing, () if extras_ok else extra, order=order)
    if missing:
        lines += ["", "Why each expected call matched none:"]
        for index in missing:
            lines += _why_missing(index, wanted, actual, pairs, order)
    lines += ["", *_advice(order, extras_ok, bool(missing)), "", f"See {docs_url('trajectories')}."]
    return "\n".join(lines)


def _aligned(
    wanted: Sequence[ExpectedToolCall],
    actual: Sequence[ToolCall],
    pairs: Mapping[int, int],
    missing: Sequence[int],
    extra: Sequence[int],
    *,
    order: Order,
) -> list[str]:
    """The actual calls, one a line, each with the expected call it matched; an expected
    call not found sits where it was looked for; ``extra``: the calls not allowed."""
    unwanted = set(extra)
    matched_by = {j: index for index, j in pairs.items()}
    several = len({call.conversation for call in actual}) > 1
    # Where each missing expected call goes: before the actual call it was due at.
    due: dict[int, list[int]] = {}
    for index in missing:
        if order == "exact" and index < len(actual):
            continue  # its row says why it is not that call
        due.setdefault(_due_at(index, len(actual), pairs, order), []).append(index)
    noun = "call" if len(actual) == 1 else "calls"
    lines = [f"Actual trajectory ({len(actual)} {noun}), aligned against the expected calls:"]
    if not actual:
        lines.append("  (no tool was called)")
    for j, call in enumerate(actual[:_ROWS]):
        lines += [
            f"  --  expected {index + 1} not found: {wanted[index]!r}" for index in due.get(j, [])
        ]
        place = f"conversation {call.conversation + 1}, " if several else ""
        row = f"  {j + 1:>2}. {call}  ({place}message {call.message_index})"
        if j in matched_by:
            row += f"  == expected {matched_by[j] + 1}"
        elif order == "exact" and j < len(wanted):
            row += f"  != expected {j + 1}: {'; '.join(wanted[j].mismatches(call))}"
        elif j in unwanted:
            row += "  <- not expected"
        lines.append(row)
    if len(actual) > _ROWS:
        lines.append(f"  ... and {len(actual) - _ROWS} more call(s)")
    tail = [
        index for at, indexes in due.items() if at >= min(len(actual), _ROWS) for index in indexes
    ]
    lines += [f"  --  expected {index + 1} not found: {wanted[index]!r}" for index in sorted(tail)]
    return lines


def _due_at(index: int, length: int, pairs: Mapping[int, int], order: Order) -> int:
    """The actual call a missing expected call is shown before (``length``: the end)."""
    if order == "exact":
        return index
    if order == "any":
        return length
    earlier = [pairs[k] for k in range(index) if k in pairs]
    return earlier[-1] + 1 if earlier else 0


def _why_missing(
    index: int,
    wanted: Sequence[ExpectedToolCall],
    actual: Sequence[ToolCall],
    pairs: Mapping[int, int],
    order: Order,
) -> list[str]:
    expected = wanted[index]
    lines = [f"  expected {index + 1}: {expected!r}"]
    if order == "exact":
        if index >= len(actual):
            return [*lines, f"    - there is no call {index + 1}: {len(actual)} call(s) were made"]
        reasons = expected.mismatches(actual[index])
        return [*lines, f"    - call {index + 1} {actual[index].name}: {'; '.join(reasons)}"]
    named = [j for j, call in enumerate(actual) if call.name == expected.name]
    if not named:
        names = ", ".join(dict.fromkeys(_short(call.name) for call in actual)) or "none"
        return [*lines, f"    - no call is named {expected.name!r}; the tools called: {names}"]
    taken = {j: k for k, j in pairs.items()}
    earlier = [pairs[k] for k in range(index) if k in pairs]
    after = earlier[-1] if earlier and order == "in-order" else None
    ranked = sorted(named, key=lambda j: len(expected.mismatches(actual[j])))
    for j in ranked[:_CANDIDATES]:
        call = actual[j]
        reasons = expected.mismatches(call)
        if reasons:
            lines.append(f"    - call {j + 1} {call.name}: {'; '.join(reasons)}")
        elif j in taken:
            lines.append(
                f"    - call {j + 1} matches, but it is expected {taken[j] + 1}'s match "
                "(each call matches one expected call)"
            )
        elif after is not None and j < after:
            lines.append(
                f"    - call {j + 1} matches, but comes before call {after + 1} "
                f"(expected {taken[after] + 1}'s match): out of order"
            )
    if len(named) > _CANDIDATES:
        lines.append(f"    ... and {len(named) - _CANDIDATES} other {expected.name} call(s)")
    return lines


def _advice(order: Order, extras_ok: bool, missing: bool) -> list[str]:
    lines = [
        "If the agent's path changed on purpose, update the expected calls; if the "
        "cassette is stale, re-record it with --record-mode=rewrite."
    ]
    if missing and order != "any":
        lines.append("If the order does not matter, pass order='any'.")
    if not extras_ok:
        lines.append(
            "To allow other calls, pass allow_extra=True (with order='in-order' or 'any')."
        )
    return lines


def _why_not(value: object, want: object) -> str | None:
    """Why ``value`` does not match ``want`` (a value, a pattern or a predicate), or None."""
    if isinstance(want, re.Pattern):
        try:
            text = value if isinstance(value, str) else str(value)
        except Exception:  # a value too deep to write out: it cannot match a text pattern
            text = None
        if text is not None and want.search(text):
            return None
        return f"{_short(value)} does not match {want!r}"
    if callable(want):
        try:
            if want(value):
                return None
        except Exception as error:  # a predicate's failure is a mismatch, shown
            return f"{_matcher_text(want)} raised {type(error).__name__}: {_short(str(error))}"
        return f"{_short(value)} fails {_matcher_text(want)}"
    try:
        if value == want:
            return None
    except Exception:  # a hostile __eq__: not equal
        pass
    return f"{_short(value)}, expected {_short(want)}"


def _matcher_text(want: object) -> str:
    if isinstance(want, re.Pattern):
        return repr(want)
    if callable(want):
        name = getattr(want, "__qualname__", None) or type(want).__name__
        return f"<predicate {name}>"
    return _short(want)


def _short(value: object) -> str:
    return shown_value(value, _SHOWN)


__all__ = ["ExpectedToolCall", "assert_tool_calls", "tool_call"]
