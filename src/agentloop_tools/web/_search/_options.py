"""What narrows one web_search call: the model's domain lists and the tool's point in time.

The model may pass ``allowed_domains`` or ``blocked_domains`` (never both). Either
can only narrow what the tool's own ``DomainPolicy`` permits: every hit must pass
the tool's policy *and* the model's list. The lists are validated by the same
rules as every domain list (``DomainPolicy.allow``/``block``).

``as_of`` is the tool's configuration, not the model's: hits published after it
are dropped in our code, and undated hits follow ``undated``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Literal

from agentloop_tools.web._policy._policy import DomainPolicy
from agentloop_tools.web._tool_errors import ToolFailure

type Undated = Literal["keep", "drop"]

# More domains than any provider's filter takes: a longer list is a pasted document.
MAX_MODEL_DOMAINS = 50


@dataclass(frozen=True, slots=True)
class SearchOptions:
    """What a backend may push down for one call, besides the tool's own policy.

    Attributes:
        allowed_domains: the model's allowlist, as it passed it (validated), or None.
        blocked_domains: the model's blocklist, as it passed it (validated), or None.
        as_of: the tool's point in time: only pages published on or before it.
    """

    allowed_domains: tuple[str, ...] | None = None
    blocked_domains: tuple[str, ...] | None = None
    as_of: date | None = None


@dataclass(frozen=True, slots=True)
class Narrowing:
    """The model's list for one call, as options for the backend and a filter for us."""

    options: SearchOptions
    policy: DomainPolicy | None  # the model's list as a policy, or None

    def describe(self) -> str:
        """One line for the result: the narrowing the model asked for.

        Counted, not listed: the domains are in the call's arguments, and a result
        never names a host a list refuses.
        """
        for label, given in (
            ("allowed_domains", self.options.allowed_domains),
            ("blocked_domains", self.options.blocked_domains),
        ):
            if given is not None:
                noun = "domain" if len(given) == 1 else "domains"
                return f"Narrowed by the call: {label} ({len(given)} {noun})"
        return ""


def narrowing(allowed: object, blocked: object, as_of: date | None) -> Narrowing | ToolFailure:
    """The model's ``allowed_domains``/``blocked_domains``, validated, or the soft error."""
    # An empty list narrows nothing: strict-schema models often send [] for "none".
    given_allowed = allowed is not None and allowed != []
    given_blocked = blocked is not None and blocked != []
    if given_allowed and given_blocked:
        return ToolFailure(
            "domain-lists-conflict",
            "both allowed_domains and blocked_domains were given; a call takes one list or none",
            "call again with only one of them (the other null)",
        )
    if not given_allowed and not given_blocked:
        return Narrowing(SearchOptions(as_of=as_of), None)
    label = "allowed_domains" if given_allowed else "blocked_domains"
    entries = allowed if given_allowed else blocked
    if not isinstance(entries, list | tuple) or not all(isinstance(e, str) for e in entries):
        return ToolFailure(
            "invalid-domain",
            f"{label} must be a list of domain strings, got {_shown(entries)}",
            'pass a list such as ["python.org"], or null',
        )
    cleaned = tuple(dict.fromkeys(entry.strip() for entry in entries))
    if len(cleaned) > MAX_MODEL_DOMAINS:
        return ToolFailure(
            "invalid-domain",
            f"{label} holds {len(cleaned)} domains, over {MAX_MODEL_DOMAINS}",
            f"pass at most {MAX_MODEL_DOMAINS} domains",
        )
    try:
        policy = DomainPolicy.allow(cleaned) if given_allowed else DomainPolicy.block(cleaned)
    except (ValueError, TypeError) as error:
        reason = " ".join(str(error).split())[:300]
        return ToolFailure(
            "invalid-domain",
            f"{label} is not a valid domain list: {reason}",
            'pass bare domains such as "python.org" (no scheme, no port), or null',
        )
    options = (
        SearchOptions(allowed_domains=cleaned, as_of=as_of)
        if given_allowed
        else SearchOptions(blocked_domains=cleaned, as_of=as_of)
    )
    return Narrowing(options, policy)


def allowed_hosts(policy: DomainPolicy | None, options: SearchOptions) -> list[str] | None:
    """The hosts every hit must be under, for a provider's include list; None: no such list.

    The intersection of the tool's allowlist and the model's: a model domain inside a
    tool rule's host, or a tool rule's host inside a model domain. An empty list means
    nothing can be permitted.
    """
    model = _hosts(options.allowed_domains) if options.allowed_domains is not None else None
    tool = _hosts(policy.domains) if policy is not None and policy.mode == "allow" else None
    if model is None:
        return tool
    if tool is None:
        return model
    both: list[str] = []
    for mine in model:
        for theirs in tool:
            if _under(mine, theirs):
                both.append(mine)
            elif _under(theirs, mine):
                both.append(theirs)
    return list(dict.fromkeys(both))


def blocked_hosts(policy: DomainPolicy | None, options: SearchOptions) -> list[str]:
    """Host-only rules of the tool's blocklist and the model's, for an exclude list.

    Path rules are left out: as a provider's host filter they would block the whole host.
    """
    rules: list[str] = []
    if policy is not None and policy.mode == "block":
        rules += policy.domains
    if options.blocked_domains is not None:
        rules += options.blocked_domains
    return list(dict.fromkeys(rule.lower() for rule in rules if "/" not in rule))


def _hosts(domains: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(domain.split("/", 1)[0].lower().rstrip(".") for domain in domains))


def _under(host: str, parent: str) -> bool:
    return host == parent or host.endswith("." + parent)


def parse_as_of(value: object, *, caller: str) -> date | None:
    """``as_of`` as a date: a ``date`` (a ``datetime`` is taken as its date) or an ISO string."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.astimezone(UTC).date() if value.tzinfo is not None else value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        try:
            return date.fromisoformat(value.strip())
        except ValueError:
            pass
    raise ValueError(
        f"{caller}(as_of={value!r}) is not accepted; use an ISO date such as '2024-06-30' "
        "or a datetime.date."
    )


def check_undated(value: object, as_of: date | None, *, caller: str) -> Undated:
    """``undated`` checked: ``"drop"`` by default when ``as_of`` is set."""
    if value is None:
        return "drop"
    if value not in ("keep", "drop"):
        raise ValueError(f"{caller}(undated={value!r}) is not accepted; use 'keep' or 'drop'.")
    if as_of is None:
        raise ValueError(
            f"{caller}(undated={value!r}) has no effect without as_of=...: pass an as_of "
            "date, or leave undated out."
        )
    return "keep" if value == "keep" else "drop"


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:116] + "...'"
