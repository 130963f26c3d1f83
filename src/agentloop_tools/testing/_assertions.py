"""Assertion helpers for agent tests: was it cited, was it searched, was the policy kept.

Each failure says what was expected, what was found, and what to do. The helpers
raise ``EvidenceAssertionError`` (an ``AssertionError``) themselves, so they read
the same under ``--assert=plain``, hide their frames from tracebacks, redact
anything key-shaped from their messages and write recorded control characters as
visible escapes (``\x1b``), so a hostile URL cannot drive the terminal pytest
prints to.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from agentloop import Citation
from agentloop.transcript import Message, TextPart

from agentloop_tools._docs import docs_url
from agentloop_tools._errors import EvidenceAssertionError
from agentloop_tools._visible import visible
from agentloop_tools.testing._conversations import (
    Conversation,
    Evidence,
    read_conversations,
    searches,
)
from agentloop_tools.testing._targets import Target, read_targets
from agentloop_tools.testing._violation_report import EXCERPT, violation_report
from agentloop_tools.web import DomainPolicy, Link
from agentloop_tools.web._domains._identity import page_key
from agentloop_tools.web._policy._links import given_pages
from agentloop_tools.web._policy._violation import failing, refused_attempts_value

_EXCERPT = 60


def assert_cited(transcript: Evidence, *targets: str, since: int = 0) -> None:
    """Every target is cited at least once.

    A citation is one the provider attached to the answer (hosted search), or a link
    in the answer to a page a tool of the same conversation returned (a ``web_search``
    hit, a page ``web_fetch`` read, a hosted source: see :func:`~agentloop_tools.web.links`).
    A link to a page no tool returned is not a citation.

    Args:
        transcript: a ``Transcript``, a list of messages, a ``ConversationResult`` or
            the ``agentloop_evidence`` fixture value.
        *targets: a domain (``"python.org"``, subdomains included), a path rule
            (``"docs.python.org/3/library"``) or a full URL (query parameters in the
            target must be present; others such as ``utm_source`` are ignored).
        since: read messages from this index on (negative counts from the end).
    """
    __tracebackhide__ = True
    matchers = read_targets(targets, "assert_cited")
    conversations = read_conversations(transcript, since)
    found = [citation for conversation in conversations for citation in conversation.citations()]
    answered = [link for conversation in conversations for link in conversation.links()]
    grounded = [link for link in answered if link.consulted]
    missing = [
        m
        for m in matchers
        if not any(m.matches(c.url) for c in found)
        and not any(m.matches(link.url) for link in grounded)
    ]
    if not missing:
        return
    consulted = [source for conversation in conversations for source in conversation.sources()]
    lines = [f"assert_cited: {_count(missing, targets)} not cited: {_names(missing)}.", ""]
    lines += [_LOOKED_FOR, ""]
    lines += _citation_lines(found, conversations, heading="Provider citations")
    lines += _link_lines(grounded, "Links to pages the tools returned")
    for matcher in missing:
        unconsulted = [
            link for link in answered if not link.consulted and matcher.matches(link.url)
        ]
        if unconsulted:
            lines += [
                "",
                f"{matcher.text!r} was linked, but no tool of the conversation returned "
                "that page, so the link is not a citation:",
            ]
            lines += [f"  - {visible(link.url)}" for link in unconsulted[:5]]
        searched = [s.url for s in consulted if matcher.matches(s.url)]
        if searched:
            lines += ["", f"{matcher.text!r} was searched but never cited; consulted:"]
            lines += [f"  - {visible(url)}" for url in searched[:5]]
    unobservable = _unobservable_citations(conversations)
    if unobservable:
        lines += ["", f"Citations could not be observed here: {unobservable}."]
        lines += ["Assert on sources instead: assert_searched(...)."]
    else:
        lines += [
            "",
            "If citing is optional, assert_searched() checks what was consulted; if the "
            "cassette is stale, re-record it with --record-mode=rewrite.",
        ]
    raise EvidenceAssertionError("\n".join([*lines, "", f"See {docs_url('assert_cited')}."]))


def assert_not_cited(transcript: Evidence, *targets: str, since: int = 0) -> None:
    """No target is cited or linked (same targets as :func:`assert_cited`).

    Counts the citations the provider attached and every link in the answer, whether
    a tool returned its page or not.
    """
    __tracebackhide__ = True
    matchers = read_targets(targets, "assert_not_cited")
    conversations = read_conversations(transcript, since)
    found = [citation for conversation in conversations for citation in conversation.citations()]
    answered = [link for conversation in conversations for link in conversation.links()]
    offending = [c for c in found if any(m.matches(c.url) for m in matchers)]
    linked = [link for link in answered if any(m.matches(link.url) for m in matchers)]
    if not offending and not linked:
        return
    hit = [
        m
        for m in matchers
        if any(m.matches(c.url) for c in offending) or any(m.matches(k.url) for k in linked)
    ]
    lines = [f"assert_not_cited: {_count(hit, targets)} cited: {_names(hit)}.", ""]
    lines += [
        "Looked for: citations the provider attached, and every link in the answers "
        "(to pages the tools returned or not).",
        "",
    ]
    if offending:
        lines += _citation_lines(offending, conversations, heading="Offending provider citations")
    if linked:
        if offending:
            lines.append("")
        lines.append(f"Offending links in the answers ({len(linked)}):")
        lines += [_link_line(link) for link in linked[:20]]
        if len(linked) > 20:
            lines.append(f"  ... and {len(linked) - 20} more")
    lines += [
        "",
        "To keep a domain out of answers, filter the search with a DomainPolicy "
        "(web_search(..., policy=...), web_fetch(policy=...) or native_web_search).",
    ]
    raise EvidenceAssertionError("\n".join([*lines, "", f"See {docs_url('assert_not_cited')}."]))


def assert_links_grounded(evidence: Evidence, *, allow: Sequence[str] = (), since: int = 0) -> None:
    """Every link in the answers leads to a page the conversation gave the model.

    A link is grounded when a tool of its conversation returned that page (a hosted
    source, a ``web_search`` hit, a page ``web_fetch`` read: ``Link.consulted``), when a
    user message of that conversation gave it, or when it matches an ``allow`` target
    (same targets as :func:`assert_cited`: your own docs, say). Anything else is a URL
    the model wrote on its own, perhaps made up; the failure lists each with its
    message and span.

    Args:
        evidence: the ``agentloop_evidence`` fixture value, a ``Transcript``, a list of
            messages or a ``ConversationResult``.
        allow: targets the model may link without a tool having returned them.
        since: read answers from this message index on (negative counts from the end).
    """
    __tracebackhide__ = True
    if isinstance(allow, str) or not isinstance(allow, Sequence | set | frozenset):
        raise TypeError(
            f"assert_links_grounded() allow= takes a list of targets, got {allow!r}; "
            "write allow=['docs.example.com']."
        )
    matchers = read_targets(tuple(allow), "assert_links_grounded", empty_ok=True)
    conversations = read_conversations(evidence, since)
    ungrounded: list[tuple[int, Link]] = []
    total = 0
    for number, conversation in enumerate(conversations):
        given = given_pages(conversation.messages)
        for link in conversation.links():
            total += 1
            if link.consulted or page_key(link.url) in given:
                continue
            if any(matcher.matches(link.url) for matcher in matchers):
                continue
            ungrounded.append((number, link))
    if not ungrounded:
        return
    several = len(conversations) > 1
    noun = "link was" if len(ungrounded) == 1 else "links were"
    lines = [
        f"assert_links_grounded: {len(ungrounded)} of {total} {noun} not consulted "
        "(no tool of the conversation returned the page, no user message gave it, "
        "no allow= target matches):",
    ]
    for number, link in ungrounded[:20]:
        place = f"conversation {number + 1}, " if several else ""
        text = f" [{_clip(visible(link.text))}]" if link.text else ""
        lines.append(
            f"  - {place}message {link.message_index}, characters {link.start}-{link.end}: "
            f"{visible(link.url)}{text}"
        )
        excerpt = _span_excerpt(conversations[number].messages, link.message_index, link)
        if excerpt:
            lines.append(f"      ...{excerpt}...")
    if len(ungrounded) > 20:
        lines.append(f"  ... and {len(ungrounded) - 20} more")
    pages = [source.url for conversation in conversations for source in conversation.sources()]
    lines.append("")
    if pages:
        lines.append(f"Pages the tools returned ({len(pages)}):")
        lines += [f"  - {visible(url)}" for url in pages[:10]]
        if len(pages) > 10:
            lines.append(f"  ... and {len(pages) - 10} more")
    else:
        lines.append("No tool returned any page in these conversations.")
    lines += [
        "",
        "The model wrote these URLs on its own: it may have made them up. Let it search or "
        "fetch before it links, tell it to link only results, or pass allow=[...] for "
        "pages it may link without looking them up (your own docs).",
    ]
    raise EvidenceAssertionError(
        "\n".join([*lines, "", f"See {docs_url('assert_links_grounded')}."])
    )


_LOOKED_FOR = (
    "Looked for: citations the provider attached, and links in the answers to pages the "
    "tools returned (web_search hits, web_fetch pages, hosted sources)."
)


def assert_searched(transcript: Evidence, *targets: str, since: int = 0) -> None:
    """Every target is among the pages hosted tools consulted (same targets as above)."""
    __tracebackhide__ = True
    matchers = read_targets(targets, "assert_searched")
    conversations = read_conversations(transcript, since)
    consulted = [source for conversation in conversations for source in conversation.sources()]
    missing = [m for m in matchers if not any(m.matches(s.url) for s in consulted)]
    if not missing:
        return
    lines = [f"assert_searched: {_count(missing, targets)} not among the sources: "
             f"{_names(missing)}.", ""]  # fmt: skip
    if consulted:
        lines.append(f"Sources consulted ({len(consulted)}):")
        lines += [f"  - {visible(source.url)}" for source in consulted[:20]]
        if len(consulted) > 20:
            lines.append(f"  ... and {len(consulted) - 20} more")
    else:
        lines.append("No sources were consulted.")
    calls = searches(conversations)
    failed = [part for part in calls if part.error]
    if not calls and not consulted:
        lines += [
            "",
            "The agent made no search: is native_web_search() (hosted) or web_search(backend) "
            "(client-side) among its tools?",
        ]
    for part in failed:
        query = f" for {part.query!r}" if part.query else ""
        lines.append(f"A {part.kind} call{query} failed with {part.error!r}.")
    if failed:
        lines.append("A failed search has no sources: see the provider's error code above.")
    raise EvidenceAssertionError("\n".join([*lines, "", f"See {docs_url('assert_searched')}."]))


def assert_no_violations(
    transcript: Evidence,
    policy: DomainPolicy,
    *,
    since: int = 0,
    refused_attempts: str = "report",
) -> None:
    """``policy.audit(...)`` finds nothing that fails, in every conversation.

    Args:
        transcript: what to audit (as :func:`assert_cited` takes it).
        policy: the policy.
        since: read messages from this index on (negative counts from the end).
        refused_attempts: ``"report"`` (the default): a URL our ``web_fetch`` refused
            before requesting it (``Violation.refused``: the policy held) does not fail,
            and is shown when something else does; ``"fail"``: it fails like any
            violation.
    """
    __tracebackhide__ = True
    if not isinstance(policy, DomainPolicy):
        raise TypeError(
            f"assert_no_violations() needs a DomainPolicy, got {type(policy).__name__}; "
            "build one with DomainPolicy.allow([...]) or DomainPolicy.block([...])."
        )
    setting = refused_attempts_value(refused_attempts, "assert_no_violations() refused_attempts")
    conversations = read_conversations(transcript, since)
    found = [
        replace(violation, conversation=index)
        for index, conversation in enumerate(conversations)
        for violation in policy.audit(conversation.messages, since=conversation.since)
    ]
    if not failing(found, setting):
        return
    raise EvidenceAssertionError(
        "assert_no_violations: "
        + violation_report(
            found,
            [conversation.messages for conversation in conversations],
            policy,
            several=len(conversations) > 1,
            refused_attempts=setting,
            setting_from="assert_no_violations(refused_attempts='fail')",
        )
        + f"\n\nSee {docs_url('assert_no_violations')}.",
        kind="domain-policy",
    )


def _count(items: Sequence[object], targets: Sequence[object]) -> str:
    verb = "was" if len(items) == 1 else "were"
    return f"{len(items)} of {len(targets)} target(s) {verb}"


def _names(matchers: Sequence[Target]) -> str:
    return ", ".join(repr(matcher.text) for matcher in matchers)


def _citation_lines(
    found: Sequence[Citation],
    conversations: Sequence[Conversation],
    heading: str = "Citations found",
) -> list[str]:
    if not found:
        return (
            ["No citations were found."] if heading == "Citations found" else [f"{heading}: none."]
        )
    lines = [f"{heading} ({len(found)}):"]
    for citation in found[:20]:
        quote = _quote(citation, conversations)
        lines.append(f"  - {visible(citation.url)}" + (f'  "{visible(quote)}"' if quote else ""))
    if len(found) > 20:
        lines.append(f"  ... and {len(found) - 20} more")
    return lines


def _link_lines(found: Sequence[Link], heading: str) -> list[str]:
    if not found:
        return [f"{heading}: none."]
    lines = [f"{heading} ({len(found)}):"]
    lines += [_link_line(link) for link in found[:20]]
    if len(found) > 20:
        lines.append(f"  ... and {len(found) - 20} more")
    return lines


def _link_line(link: Link) -> str:
    text = f" [{_clip(visible(link.text))}]" if link.text else ""
    state = "consulted" if link.consulted else "not consulted"
    return f"  - {visible(link.url)}{text}  (message {link.message_index}, {state})"


def _clip(text: str, width: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


def _span_excerpt(messages: Sequence[Message], index: int, link: Link) -> str:
    text = "".join(part.text for part in messages[index].content if isinstance(part, TextPart))
    left = max(link.start - EXCERPT // 2, 0)
    right = min(link.end + EXCERPT // 2, len(text))
    return visible(" ".join(text[left:right].split()))


def _quote(citation: Citation, conversations: Sequence[Conversation]) -> str:
    text = citation.cited_text
    if not text and citation.start is not None and citation.end is not None:
        for conversation in conversations:
            for message in conversation.read():
                for part in message.content:
                    if isinstance(part, TextPart) and citation in part.citations:
                        text = part.text[citation.start : citation.end]
    text = " ".join((text or "").split())
    return text if len(text) <= 80 else text[:77] + "..."


def _dynamic_filtering(block: dict[str, Any]) -> bool:
    """A block of a search the model filtered with code: a code-execution block, or a
    tool block whose ``caller`` is code execution. (Anthropic marks a plain search
    ``"caller": {"type": "direct"}``, which shows nothing of the kind.)
    """
    caller = block.get("caller")
    if isinstance(caller, dict) and str(caller.get("type", "")).startswith("code_execution"):
        return True
    return "code_execution" in str(block.get("type", ""))


def _unobservable_citations(conversations: Sequence[Conversation]) -> str:
    """Why citations cannot be seen in these conversations, or "" if they can."""
    calls = searches(conversations)
    raws = [
        block
        for conversation in conversations
        for message in conversation.read()
        if message.origin is not None
        for block in message.origin.raw
    ]
    if any(_dynamic_filtering(block) for block in raws):
        return (
            "the search ran with dynamic filtering (the model filtered results with code), "
            "which returns no citations"
        )
    if calls and all(part.error for part in calls):
        codes = ", ".join(sorted({str(part.error) for part in calls}))
        return f"every search failed ({codes}), so there was nothing to cite"
    if (
        not calls
        and not any(
            isinstance(part, TextPart) and part.citations
            for conversation in conversations
            for message in conversation.read()
            for part in message.content
        )
        and not any(conversation.sources() for conversation in conversations)
    ):
        return (
            "the agent made no search and fetched no page (hosted or client-side), so "
            "there was nothing to cite"
        )
    return ""


__all__ = [
    "EvidenceAssertionError",
    "assert_cited",
    "assert_links_grounded",
    "assert_no_violations",
    "assert_not_cited",
    "assert_searched",
    "violation_report",
]
