"""Hypothesis strategies for property tests of code that wraps a :class:`DomainPolicy`.

A re-ask loop, a redaction step or a moderation hook built on a policy needs inputs just
inside and just outside it::

    from hypothesis import given
    from agentloop_tools.testing.strategies import answers, urls
    from agentloop_tools.web import DomainPolicy

    POLICY = DomainPolicy.block(["evil.example"])

    @given(answers(POLICY, violating=True))
    def test_redaction_removes_every_breach(answer):
        assert not POLICY.audit(as_transcript(redact(answer)))

Every example keeps its promise by construction, never by filtering through
``policy.permits`` or ``policy.audit``: a strategy filtered by the thing under test
would make every test built on it unable to fail. Violating examples are built from the
policy's own rules and spellings that browsers and renderers read as those hosts;
clean ones from hosts no rule covers (for a blocklist) or covered hosts (for an
allowlist), written in forms that link nothing else. Examples shrink towards short,
readable cases (a plain ``https://`` URL, one sentence).

Hypothesis is imported when this module is. It is in the ``strategies`` extra, not in
``testing``: installed, its pytest plugin loads in every run of the environment.
"""

from __future__ import annotations

import string
from typing import TYPE_CHECKING

try:
    from hypothesis import strategies as st
except ModuleNotFoundError as error:
    if error.name != "hypothesis":
        raise
    # Name the extra that brings it, not just the missing module.
    raise ModuleNotFoundError(
        f"{error}: agentloop_tools.testing.strategies needs Hypothesis; install it with "
        "pip install 'based-models-agentloop-tools[strategies]'",
        name=error.name,
    ) from None

if TYPE_CHECKING:
    from agentloop import Transcript

    from agentloop_tools.web import DomainPolicy
    from agentloop_tools.web._domains._rules import Rule

__all__ = ["answers", "transcripts", "urls"]

_LABEL = st.text(string.ascii_lowercase + string.digits, min_size=1, max_size=8).filter(
    lambda label: not label.isdigit()
)
# Reserved names (RFC 2606, 6761): never a real site, so no test built on them can
# reach one; rules of a user's policy are checked against them all the same.
_RESERVED = ("example", "test", "invalid")
_WORDS = st.sampled_from(
    ["the", "docs", "say", "this", "works", "see", "answer", "release", "notes", "and", "a"]
)
_PATH = st.lists(_LABEL, max_size=3).map(lambda parts: "/" + "/".join(parts))
_FULL_WIDTH = {c: chr(ord(c) - 0x21 + 0xFF01) for c in string.ascii_lowercase + string.digits}


def _rules(policy: DomainPolicy) -> tuple[Rule, ...]:
    from agentloop_tools.web._domains._rules import parse_rules

    return parse_rules(policy.domains, argument="domains")


def _covered(host: str, rules: tuple[Rule, ...]) -> bool:
    """Whether some rule's host is this host or a parent of it (any path)."""
    return any(host == rule.host or host.endswith("." + rule.host) for rule in rules)


def _under_rule(rule: Rule) -> st.SearchStrategy[str]:
    """A host a rule covers: its own, or (for a domain) a subdomain of it."""
    if rule.is_ip:
        return st.just(rule.host)
    return st.one_of(
        st.just(rule.host),
        st.lists(_LABEL, min_size=1, max_size=2).map(lambda labels: ".".join(labels)),
    ).map(lambda head: head if head == rule.host else f"{head}.{rule.host}")


def _outside(rules: tuple[Rule, ...]) -> st.SearchStrategy[str]:
    """Hosts no rule covers, look-alikes of the rules' hosts first."""
    names = [rule.host for rule in rules if not rule.is_ip]
    look_alikes = (
        st.tuples(st.sampled_from(names), _LABEL, st.sampled_from(_RESERVED)).flatmap(
            lambda t: st.sampled_from(
                [
                    f"{t[0]}.{t[1]}.{t[2]}",  # the rule's host as a subdomain elsewhere
                    f"{t[1]}{t[0]}",  # glued in front: 'evilpython.org'
                    f"{t[0].replace('.', '-')}.{t[2]}",  # dots turned into hyphens
                ]
            )
        )
        if names
        else st.nothing()
    )
    plain = st.tuples(_LABEL, st.sampled_from(_RESERVED)).map(lambda t: f"{t[0]}.{t[1]}")
    return st.one_of(look_alikes, plain).filter(
        lambda host: not _covered(host, rules) and not _is_ipv4_like(host)
    )


def _is_ipv4_like(host: str) -> bool:
    # A last label of digits or hex is an IPv4 address to a browser: not a clean name.
    last = host.rsplit(".", 1)[-1]
    return last.isdigit() or last.startswith("0x")


def _ip_spellings(address: str) -> st.SearchStrategy[str]:
    """Spellings of an IPv4 address that WHATWG parsers read as it."""
    parts = address.split(".")
    if len(parts) != 4 or not all(part.isdigit() for part in parts):
        return st.just(f"[{address}]" if ":" in address else address)
    number = 0
    for part in parts:
        number = number * 256 + int(part)
    return st.sampled_from(
        [
            address,
            str(number),  # one decimal number
            hex(number),  # one hex number
            ".".join(hex(int(part)) for part in parts),  # hex octets
            ".".join("0" + oct(int(part))[2:] for part in parts),  # octal octets
        ]
    )


def _spell(host: str, *, plain: bool = False) -> st.SearchStrategy[str]:
    """The host as written some way a browser still reads as that host.

    ``plain``: only spellings every reader of answer text agrees on (a linkifier ends
    a domain at an ideographic full stop, so an allowlist rightly refuses that link).
    """
    if not any(c.isalpha() for c in host) or host.startswith("["):
        return st.just(host)
    spellings = [host, host.upper(), host + "."]  # case, a trailing dot
    if not plain:
        spellings += [
            host.replace(".", "\u3002"),  # ideographic full stops
            "".join(_FULL_WIDTH.get(c, c) for c in host),  # full-width letters
            "%" + format(ord(host[0]), "02X") + host[1:],  # a percent-escape in the host
        ]
    return st.sampled_from(spellings)


def _rule_path(rule: Rule, *, inside: bool, mode: str) -> st.SearchStrategy[str]:
    """A path inside (or outside) a path rule; any path for a whole-host rule."""
    if rule.path is None:
        return _PATH if inside else st.nothing()
    base = rule.path.rstrip("/").replace("*", "x")
    if inside:
        return _PATH.map(lambda tail: base + ("" if tail == "/" else tail))
    if mode == "block":
        # A blocklist's path rule is a prefix: a path elsewhere on the host is outside.
        return st.just("/zz-elsewhere" if not "/zz-elsewhere".startswith(base) else "/yy")
    return st.just(base + "zz") | st.just("/zz-elsewhere")


def _assemble(host: str, path: str) -> st.SearchStrategy[str]:
    return st.tuples(
        st.sampled_from(["https://", "http://", "HTTPS://"]),
        st.sampled_from(["", "?q=1", "#part", "?a=b&c=d"]),
    ).map(lambda t: f"{t[0]}{host}{path}{t[1]}")


def urls(policy: DomainPolicy, *, permitted: bool) -> st.SearchStrategy[str]:
    """URLs just inside (``permitted=True``) or just outside the policy.

    Outside: a blocked host spelled as browsers still read it (case, trailing dot,
    ideographic dots, full-width letters, percent-escapes, IPv4 as one number, hex or
    octal), behind userinfo (``https://allowed.example@blocked/``), before a backslash
    (``https://blocked\\@allowed/``), inside a redirect parameter, under a path rule; for
    an allowlist, look-alike hosts (``python.org.evil.example``, ``evilpython.org``) and
    paths outside a path rule. Inside: the allowed hosts and their subdomains in those
    spellings, or hosts no blocklist rule covers, look-alikes of the blocked ones first.
    """
    return _urls(policy, permitted=permitted, plain=False)


def _urls(policy: DomainPolicy, *, permitted: bool, plain: bool) -> st.SearchStrategy[str]:
    rules = _rules(policy)
    inside_rule = st.sampled_from(rules).flatmap(
        lambda rule: st.tuples(
            _under_rule(rule).flatmap(
                lambda host: _ip_spellings(host) if rule.is_ip else _spell(host, plain=plain)
            ),
            _rule_path(rule, inside=True, mode=policy.mode),
        )
    )
    covered_url = inside_rule.flatmap(lambda t: _assemble(t[0], t[1]))
    clean_host = _outside(rules)
    clean_url = st.tuples(clean_host, _PATH).flatmap(lambda t: _assemble(t[0], t[1]))
    if policy.mode == "allow":
        if permitted:
            return covered_url
        path_rules = [rule for rule in rules if rule.path is not None and not rule.is_ip]
        outside_path = (
            st.sampled_from(path_rules).flatmap(
                lambda rule: _rule_path(rule, inside=False, mode="allow").flatmap(
                    lambda path: _assemble(rule.host, path)
                )
            )
            if path_rules
            else st.nothing()
        )
        return st.one_of(
            clean_url, _tricks(clean_host, inside_rule.map(lambda t: t[0])), outside_path
        )
    if permitted:
        # A host only path rules name is permitted elsewhere on it.
        whole = tuple(rule for rule in rules if rule.path is None)
        partly = [
            rule
            for rule in rules
            if rule.path is not None and not rule.is_ip and not _covered(rule.host, whole)
        ]
        elsewhere = (
            st.sampled_from(partly).flatmap(
                lambda rule: (
                    st.just("/zz-elsewhere")
                    .filter(lambda path: not _path_blocked(rule.host, path, rules))
                    .flatmap(lambda path: _assemble(rule.host, path))
                )
            )
            if partly
            else st.nothing()
        )
        return st.one_of(clean_url, elsewhere)
    # The tricks reach a host at its root: only rules that cover a whole host.
    whole_hosts = [rule for rule in rules if rule.path is None]
    blocked_host = (
        st.sampled_from(whole_hosts).flatmap(
            lambda rule: _under_rule(rule).flatmap(
                lambda host: _ip_spellings(host) if rule.is_ip else _spell(host)
            )
        )
        if whole_hosts
        else st.nothing()
    )
    return st.one_of(covered_url, _tricks(blocked_host, clean_host, redirects=True))


def _path_blocked(host: str, path: str, rules: tuple[Rule, ...]) -> bool:
    return any(
        rule.path is not None
        and _covered(host, (rule,))
        and path.lower().startswith(rule.path.rstrip("/").split("*")[0].lower())
        for rule in rules
    )


def _tricks(
    target: st.SearchStrategy[str],
    decoy: st.SearchStrategy[str],
    *,
    redirects: bool = False,
) -> st.SearchStrategy[str]:
    """URLs that reach ``target`` though ``decoy`` is written in them.

    With ``redirects``, also links to ``decoy`` whose redirect parameter is ``target``
    (a blocklist judges the target; an allowlist the link itself).
    """

    def forms(pair: tuple[str, str]) -> list[str]:
        target, decoy = pair
        found = [
            f"https://{decoy}@{target}/",  # userinfo: the host is after the @
            f"https://{decoy}:pass@{target}/login",
            f"https://{target}\\@{decoy}/",  # a backslash ends the host for browsers
        ]
        if redirects:
            found += [
                f"https://{decoy}/redirect?url=https://{target}/",
                f"https://{decoy}/out?to=https%3A%2F%2F{target}%2F",
            ]
        return found

    return st.tuples(target, decoy).flatmap(lambda pair: st.sampled_from(forms(pair)))


def _link_forms(url: str) -> st.SearchStrategy[str]:
    """The URL as an answer links it: every form a renderer or reader follows."""
    if "\\" in url:
        # Markdown reads a backslash before punctuation as an escape (``\@`` is ``@``):
        # such a URL is written where it stays literal.
        return st.sampled_from([url, f'<a href="{url}">the docs</a>'])
    return st.sampled_from(
        [
            url,
            f"[the docs]({url})",
            f"<{url}>",
            f'<a href="{url}">the docs</a>',
            f"![figure]({url})",
            f"| source | {url} |",
            f"`{url}`",
        ]
    )


def _sentence() -> st.SearchStrategy[str]:
    return st.lists(_WORDS, min_size=1, max_size=6).map(lambda words: " ".join(words) + ".")


def answers(policy: DomainPolicy, *, violating: bool) -> st.SearchStrategy[str]:
    """Answer texts that breach the policy (``violating=True``) or keep to it.

    Prose, markdown and HTML links, autolinks, tables and code spans around URLs from
    :func:`urls`; a violating answer holds at least one link outside the policy (and,
    for a blocklist, may name a blocked host bare, or in a ``curl`` command), a clean
    one only links inside it and otherwise holds words that link nothing.
    """
    # In text, an allowlist's clean links use the spellings every reader agrees on.
    plain = policy.mode == "allow"
    clean_link = _urls(policy, permitted=True, plain=plain).flatmap(_link_forms)
    clean_parts = st.lists(st.one_of(_sentence(), clean_link), max_size=4)
    if not violating:
        return st.tuples(_sentence(), clean_parts).map(lambda t: " ".join([t[0], *t[1]]))
    breach = urls(policy, permitted=False).flatmap(_link_forms)
    if policy.mode == "block":
        named = [rule.host for rule in _rules(policy) if rule.path is None and not rule.is_ip]
        if named:
            bare = st.sampled_from(named).flatmap(
                lambda host: st.sampled_from(
                    [f"Try {host} instead.", f"curl -fsSL {host}/install.sh | sh"]
                )
            )
            breach = st.one_of(breach, bare)
    return st.tuples(clean_parts, breach, clean_parts).map(lambda t: " ".join([*t[0], t[1], *t[2]]))


def transcripts(policy: DomainPolicy, *, violating: bool) -> st.SearchStrategy[Transcript]:
    """agentloop transcripts of one turn that breach the policy or keep to it.

    Each holds a user question and an assistant turn with hosted search sources,
    citations on the answer, and client-side ``web_fetch`` calls and results (in the
    form ``web_fetch`` writes). A violating one puts one URL outside the policy in one
    of those places (or in the answer text), the rest inside it.
    """
    inside = _urls(policy, permitted=True, plain=policy.mode == "allow")
    clean = st.tuples(
        st.lists(inside, max_size=3),  # hosted sources
        st.lists(inside, max_size=2),  # citations
        st.lists(inside, max_size=2),  # fetched pages
        answers(policy, violating=False),
    )
    if not violating:
        return clean.map(lambda t: _transcript(*t))
    places = st.sampled_from(["source", "citation", "fetch", "answer"])
    breach = st.tuples(
        clean, places, urls(policy, permitted=False), answers(policy, violating=True)
    )
    return breach.map(lambda t: _with_breach(*t))


def _with_breach(
    clean: tuple[list[str], list[str], list[str], str], place: str, url: str, answer: str
) -> Transcript:
    sources, cited, fetched, text = clean
    if place == "source":
        sources = [*sources, url]
    elif place == "citation":
        cited = [*cited, url]
    elif place == "fetch":
        fetched = [*fetched, url]
    else:
        text = answer
    return _transcript(sources, cited, fetched, text)


def _transcript(sources: list[str], cited: list[str], fetched: list[str], text: str) -> Transcript:
    from agentloop import Citation, Source, Transcript
    from agentloop.transcript import (
        HostedToolPart,
        Message,
        TextPart,
        ToolCallPart,
        ToolResultPart,
    )

    from agentloop_tools.web._transcript._fetch_format import header

    transcript = Transcript()
    transcript.add_user_message("What do the docs say?")
    messages = list(transcript.messages)
    if fetched:
        calls = tuple(
            ToolCallPart(id=f"call_{n}", tool_name="web_fetch", arguments={"url": url})
            for n, url in enumerate(fetched)
        )
        messages.append(Message(role="assistant", content=calls))
        results = tuple(
            ToolResultPart(
                call_id=f"call_{n}",
                tool_name="web_fetch",
                content=header(url, (), None, ()) + "\n\nThe page says it works.",
            )
            for n, url in enumerate(fetched)
        )
        messages.append(Message(role="user", content=results))
    parts: list[HostedToolPart | TextPart] = []
    if sources:
        found = tuple(Source(url=url, title="a page") for url in sources)
        parts.append(HostedToolPart(kind="web_search", query="docs", sources=found))
    citations = tuple(Citation(url=url, cited_text="it works") for url in cited)
    parts.append(TextPart(text=text, citations=citations))
    messages.append(Message(role="assistant", content=tuple(parts)))
    return Transcript(messages=messages)
