"""What the audit reports: one ``Violation`` per place a turn reached a domain it must not."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from agentloop_tools.web._policy._verdict import verdict

type Mode = Literal["allow", "block"]
type Where = Literal["source", "citation", "text", "tool-call", "tool-result", "redirect", "robots"]
# How a refused attempt (``Violation.refused``) counts: shown and counted but passing
# (``report``, the default), or failing like any violation (``fail``).
type RefusedAttempts = Literal["report", "fail"]
REFUSED_ATTEMPTS: tuple[RefusedAttempts, ...] = ("report", "fail")


@dataclass(frozen=True, slots=True)
class Violation:
    """One place a finished turn reached a domain the policy does not permit.

    Attributes:
        url: the URL or host as it appears (a source or citation URL, or the text as
            written in the answer).
        where: ``"source"`` (a page a hosted tool consulted), ``"citation"`` or
            ``"text"`` (a link or a mention in the answer); for our client-side
            tools, ``"tool-call"`` (a URL, or a ``site:`` host, in the arguments the
            model passed: a page ``web_fetch`` was asked for, a search's query),
            ``"redirect"`` (a redirect hop ``web_fetch`` followed), ``"robots"`` (a
            robots.txt ``web_fetch`` read, or its redirect hop: judged by its host, see
            :func:`robots_policy`) or
            ``"tool-result"`` (a URL our tool's output showed the model: the final
            URL ``web_fetch`` read, a ``web_search`` result).
        message_index: index of the message in the transcript.
        rule: the block rule that matched, or None for "not on the allowlist".
        span: for ``where="text"``, the ``(start, end)`` offsets of ``url`` in the
            message's text (its text parts joined without separators); else None.
        conversation: which conversation of several it was found in: the index
            ``AgentloopEvidence.audit`` gives; ``DomainPolicy.audit`` reads one
            conversation and leaves it 0. Text shows it numbered from 1
            (``str(violation)`` says "conversation 2" for index 1).
        refused: True for an attempt the policy held: a ``web_fetch`` URL (asked for, or
            a redirect hop or robots.txt it was about to request) that our tool refused
            before anything of it was sent (``blocked-by-policy``, ``blocked-address``,
            ``disallowed-by-robots``, the URL checks), so nothing of it was read. Still
            returned by the audit, and counted; the test plugin, ``assert_no_violations``
            and the command line fail on it only when asked (``refused_attempts="fail"``).
            False for everything a tool read or reached, and for every other ``where``.
    """

    url: str
    where: Where
    message_index: int
    rule: str | None
    span: tuple[int, int] | None = None
    conversation: int = 0
    refused: bool = False

    # Written by hand rather than generated (the decorator keeps a class's own
    # ``__init__``): the generated one sets each field through ``object.__setattr__``,
    # three times slower, and an audit builds one Violation per link it flags.
    def __init__(
        self,
        url: str,
        where: Where,
        message_index: int,
        rule: str | None,
        span: tuple[int, int] | None = None,
        conversation: int = 0,
        refused: bool = False,
    ) -> None:
        _set_url(self, url)
        _set_where(self, where)
        _set_message_index(self, message_index)
        _set_rule(self, rule)
        _set_span(self, span)
        _set_conversation(self, conversation)
        _set_refused(self, refused)

    @property
    def verdict(self) -> str:
        """Why it is a violation, worded as every report and message words it."""
        return verdict(self.rule)

    def __str__(self) -> str:
        place = f"conversation {self.conversation + 1}, " if self.conversation else ""
        held = "; refused by the tool, nothing read" if self.refused else ""
        return (
            f"{place}message {self.message_index} {self.where}: {self.url} ({self.verdict}{held})"
        )


# The slots' own setters: a frozen dataclass refuses ``setattr``, and these are what
# ``object.__setattr__`` ends up calling, without its lookup by name.
def _slot_setter(name: str) -> Callable[[Violation, Any], None]:
    setter: Callable[[Violation, Any], None] = Violation.__dict__[name].__set__
    return setter


_set_url = _slot_setter("url")
_set_where = _slot_setter("where")
_set_message_index = _slot_setter("message_index")
_set_rule = _slot_setter("rule")
_set_span = _slot_setter("span")
_set_conversation = _slot_setter("conversation")
_set_refused = _slot_setter("refused")
_new = object.__new__


def text_violation(
    url: str, message_index: int, rule: str | None, span: tuple[int, int]
) -> Violation:
    """``Violation(url, "text", message_index, rule, span=span)``, built without the
    call's argument handling: the text audit builds one per link it flags."""
    violation: Violation = _new(Violation)
    _set_url(violation, url)
    _set_where(violation, "text")
    _set_message_index(violation, message_index)
    _set_rule(violation, rule)
    _set_span(violation, span)
    _set_conversation(violation, 0)
    _set_refused(violation, False)
    return violation


def add_text_violations(
    violations: list[Violation],
    flagged: Iterable[tuple[int, int, str, str | None, bool]],
    index: int,
    offset: int,
) -> None:
    """:func:`text_violation` for each finding of one token (spans moved by ``offset``),
    appended in order: one loop, no call per finding (a token can flag thousands)."""
    new, cls, append = _new, Violation, violations.append
    set_url, set_where, set_index, set_rule = _set_url, _set_where, _set_message_index, _set_rule
    set_span, set_conversation, set_refused = _set_span, _set_conversation, _set_refused
    for start, end, written, rule, _ in flagged:
        violation = new(cls)
        set_url(violation, written)
        set_where(violation, "text")
        set_index(violation, index)
        set_rule(violation, rule)
        set_span(violation, (start + offset, end + offset))
        set_conversation(violation, 0)
        set_refused(violation, False)
        append(violation)


def moved(violation: Violation, url: str, span: tuple[int, int] | None) -> Violation:
    """``dataclasses.replace(violation, url=url, span=span)``, without its walk over
    the fields."""
    copy: Violation = _new(Violation)
    _set_url(copy, url)
    _set_where(copy, violation.where)
    _set_message_index(copy, violation.message_index)
    _set_rule(copy, violation.rule)
    _set_span(copy, span)
    _set_conversation(copy, violation.conversation)
    _set_refused(copy, violation.refused)
    return copy


def failing(violations: Iterable[Violation], refused_attempts: str) -> list[Violation]:
    """The violations that fail under ``refused_attempts``: all of them with ``"fail"``,
    all but the refused attempts with ``"report"``."""
    return [v for v in violations if refused_attempts == "fail" or not v.refused]


def refused_attempts_value(value: object, where: str) -> RefusedAttempts:
    """``value`` checked as a refused-attempts setting; a ``ValueError`` naming ``where``
    and the allowed values otherwise (a typo must not read as the default)."""
    if value in REFUSED_ATTEMPTS:
        return "fail" if value == "fail" else "report"
    raise ValueError(
        f"{where}: {value!r} is not a refused-attempts setting; use "
        f"{' or '.join(repr(v) for v in REFUSED_ATTEMPTS)} (report: a URL the tool refused "
        "is shown and counted, not failing; fail: it fails like any violation)."
    )
