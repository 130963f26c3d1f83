"""What the rest of the policy room reads of a ``DomainPolicy``: a small typed view.

``DomainPolicy``'s public surface is the 0.1.x contract and does not grow, so the
modules that need its rule index, its mode or its text audit (``explain``,
``audit_text``) are handed this view instead of reading the policy's private
attributes. The judgement itself is :meth:`RuleIndex.judge`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from typing import TYPE_CHECKING

from agentloop_tools.web._domains._index import RuleIndex
from agentloop_tools.web._domains._rules import Rule
from agentloop_tools.web._policy._violation import Mode

if TYPE_CHECKING:
    from agentloop_tools.web._policy._text_audit import TextAudit


class PolicyView:
    """One policy's mode, rule index and text audit, as its own room reads them.

    Attributes:
        mode: ``"allow"`` or ``"block"``.
        allow: ``mode == "allow"``, the form the rule index takes.
        index: the rules, filed by host.
        judge: ``judge(url)`` is ``(permitted, the rule that admits or blocks it)`` of a
            URL and the URLs it carries: ``index.judge`` with this policy's mode.
        text_audit: the audit of answer text under this policy, built when first read:
            the text finder's modules compile many patterns at import, and a policy that
            only judges URLs (every ``domain_policy`` marker, read at collection) never
            needs them.
    """

    __slots__ = ("_bare_hosts", "_compiled", "_text_audit", "allow", "index", "judge", "mode")

    def __init__(self, mode: Mode, index: RuleIndex, *, bare_hosts: bool) -> None:
        self.mode: Mode = mode
        self.allow = mode == "allow"
        self.index = index
        # A partial, not a method: the judgement is hot, and this adds no Python frame to it.
        self.judge: Callable[[str], tuple[bool, str | None]] = partial(
            index.judge, allow=self.allow
        )
        self._bare_hosts = bare_hosts
        self._text_audit: TextAudit | None = None
        self._compiled: bytes | None = None

    @property
    def text_audit(self) -> TextAudit:
        audit = self._text_audit
        if audit is None:
            from agentloop_tools.web._policy._text_audit import TextAudit

            audit = TextAudit(
                self.mode, self.index, bare_hosts=self._bare_hosts, compiled=self._compiled
            )
            self._text_audit = audit
            self._compiled = None
        return audit

    def compiled(self) -> bytes | None:
        """The text audit's compiled blocklist database, to send with the policy's pickle."""
        audit = self._text_audit
        return audit.compiled() if audit is not None else self._compiled

    def prepare(self, size: int) -> None:
        """Readies a blocklist to audit about ``size`` characters: its Hyperscan database
        is compiled now if that much text pays for it (see ``compiled``)."""
        if self.mode == "block" and not self.index.has_ip_rules:
            self.text_audit._rule_finder().ready(size)

    def receive_compiled(self, compiled: bytes | None) -> None:
        """A database ``compiled()`` gave in another process: loaded, not compiled again."""
        if self._text_audit is None:
            self._compiled = compiled


def policy_view(mode: Mode, rules: Iterable[Rule], *, bare_hosts: bool) -> PolicyView:
    """The view of a policy with these rules (the index is built once, here)."""
    return PolicyView(mode, RuleIndex(rules), bare_hosts=bare_hosts)
