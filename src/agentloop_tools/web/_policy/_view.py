"""What the rest of the policy room reads of a ``DomainPolicy``: a small typed view.

``DomainPolicy``'s public surface is the 0.1.x contract and does not grow, so the
modules that need its rule index, its mode or its text audit (``explain``,
``audit_text``) are handed this view instead of reading the policy's private
attributes. The judgement itself is :meth:`RuleIndex.judge`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial

from agentloop_tools.web._domains._index import RuleIndex
from agentloop_tools.web._domains._rules import Rule
from agentloop_tools.web._policy._text_audit import TextAudit
from agentloop_tools.web._policy._violation import Mode


@dataclass(frozen=True, slots=True)
class PolicyView:
    """One policy's mode, rule index and text audit, as its own room reads them.

    Attributes:
        mode: ``"allow"`` or ``"block"``.
        allow: ``mode == "allow"``, the form the rule index takes.
        index: the rules, filed by host.
        judge: ``judge(url)`` is ``(permitted, the rule that admits or blocks it)`` of a
            URL and the URLs it carries: ``index.judge`` with this policy's mode.
        text_audit: the audit of answer text under this policy.
    """

    mode: Mode
    allow: bool
    index: RuleIndex
    judge: Callable[[str], tuple[bool, str | None]]
    text_audit: TextAudit


def policy_view(mode: Mode, rules: Iterable[Rule], *, bare_hosts: bool) -> PolicyView:
    """The view of a policy with these rules (the index is built once, here)."""
    index = RuleIndex(rules)
    allow = mode == "allow"
    # A partial, not a method: the judgement is hot, and this adds no Python frame to it.
    judge = partial(index.judge, allow=allow)
    return PolicyView(mode, allow, index, judge, TextAudit(mode, index, bare_hosts=bare_hosts))
