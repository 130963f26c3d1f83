"""One judgement of a URL: ``RuleIndex.judge`` is what permits, match, explain and the
text audit answer, and the policy room's neighbours read no private attribute of a policy."""

from __future__ import annotations

import ast
from pathlib import Path
from urllib.parse import quote

import pytest
from agentloop.transcript import Message, TextPart
from hypothesis import example, given
from hypothesis import strategies as st

import agentloop_tools
from agentloop_tools.web import DomainPolicy
from agentloop_tools.web._domains._index import NESTING, RuleIndex
from agentloop_tools.web._domains._rules import parse_rules
from agentloop_tools.web._domains._url import locate

pytestmark = pytest.mark.core

LABEL = st.sampled_from(["a", "b", "evil", "good", "docs", "xn--80ak6aa92e"])
TLD = st.sampled_from(["com", "org", "example"])
IP = st.sampled_from(["10.0.0.1", "127.0.0.1", "[::1]", "[::ffff:127.0.0.1]", "[::ffff:a00:1]"])
# Most rules name a whole host; some a path under it.
RULE_PATH = st.sampled_from(["", "", "", "/x", "/x/y", "/a%2Fb", "/docs/"])
URL_PATH = st.sampled_from(["", "/", "/x", "/x/y", "/X", "/x/../y", "/a%2fb", "/docs/guide"])
SCHEME = st.sampled_from(["https://", "http://", "HTTPS://", "//", ""])
# What comes before the host: userinfo, and the backslash that browsers and RFC 3986
# clients read as different hosts.
BEFORE_HOST = st.sampled_from(["", "", "user@", "good.com\\@", "evil.com\\@", "a@b@"])


@st.composite
def domains(draw: st.DrawFn) -> str:
    return ".".join([*draw(st.lists(LABEL, min_size=1, max_size=3)), draw(TLD)])


HOST = st.one_of(domains(), domains(), IP)


@st.composite
def rules(draw: st.DrawFn) -> list[str]:
    hosts = draw(st.lists(HOST, min_size=1, max_size=5, unique=True))
    return [host + draw(RULE_PATH) for host in hosts]


@st.composite
def urls(draw: st.DrawFn, depth: int = 0) -> str:
    url = draw(SCHEME) + draw(BEFORE_HOST) + draw(HOST) + draw(URL_PATH)
    if depth < NESTING + 1 and draw(st.booleans()):
        inner = draw(urls(depth + 1))
        url += "?url=" + (quote(inner, safe="") if draw(st.booleans()) else inner)
    return url


MODE = st.sampled_from(["allow", "block"])


def _policy(mode: str, entries: list[str]) -> DomainPolicy:
    return DomainPolicy.allow(entries) if mode == "allow" else DomainPolicy.block(entries)


@given(entries=rules(), url=urls(), mode=MODE)
@example(entries=["evil.com"], url="https://good.com\\@evil.com/", mode="block")
@example(entries=["docs.example/x"], url="https://docs.example/x/../y", mode="allow")
@example(entries=["127.0.0.1"], url="http://[::ffff:127.0.0.1]/", mode="block")
def test_permits_match_and_explain_give_the_rule_index_s_one_verdict(
    entries: list[str], url: str, mode: str
) -> None:
    allow = mode == "allow"
    policy = _policy(mode, entries)
    index = RuleIndex(parse_rules(entries, argument="rules"))
    permitted, rule = index.judge(url, allow)

    assert policy.permits(url) is permitted
    assert policy.match(url) == (rule if permitted is allow else None)
    explanation = policy.explain(url)
    if explanation.kind == "url":
        assert explanation.permitted is permitted
        location = locate(url)
        first = explanation.readings[0]
        assert (first.permitted, first.rule) == index.verdict(location, allow)


@given(entries=st.lists(domains(), min_size=1, max_size=5, unique=True), url=urls(), mode=MODE)
@example(entries=["evil.com"], url="https://good.com/?url=https://evil.com/", mode="block")
def test_the_text_audit_refuses_a_link_exactly_where_the_verdict_refuses_it(
    entries: list[str], url: str, mode: str
) -> None:
    # A markdown link to a URL with a scheme and no trick: every reader follows the
    # same URL, so the audit's finding is the verdict's (its quick host path included).
    policy = _policy(mode, entries)
    plain = url.split("?", 1)[0]
    if not plain.startswith(("https://", "http://")) or "@" in plain or "\\" in plain:
        plain = "https://good.example/"
    text = f"See [the page]({plain}) for more."
    found = policy.audit([Message(role="assistant", content=(TextPart(text=text),))])
    permitted, rule = RuleIndex(parse_rules(entries, argument="rules")).judge(
        plain, mode == "allow"
    )

    assert [violation.url for violation in found] == ([] if permitted else [plain])
    assert [violation.rule for violation in found] == ([] if permitted else [rule])


def _redirects(target: str, times: int) -> str:
    for _ in range(times):
        target = "https://r.example/?url=" + quote(target, safe="")
    return target


def test_policy_and_explain_follow_urls_inside_urls_to_the_same_depth() -> None:
    policy = DomainPolicy.block(["evil.example"])
    reached = _redirects("https://evil.example/", NESTING)
    beyond = _redirects("https://evil.example/", NESTING + 1)

    assert not policy.permits(reached)
    assert not policy.explain(reached).permitted
    assert policy.permits(beyond)
    assert policy.explain(beyond).permitted
    nested = [reading for reading in policy.explain(beyond).readings if reading.name == "nested"]
    assert len(nested) == NESTING


# What DomainPolicy keeps to itself; only its own module reads them.
_POLICY_PRIVATES = {"_bare_hosts", "_domains", "_index", "_judge", "_mode", "_text_audit", "_view"}


def test_no_module_but_the_policy_s_own_reads_its_private_attributes() -> None:
    source = Path(agentloop_tools.__file__).parent
    own = source / "web" / "_policy" / "_policy.py"
    readers = []
    for path in sorted(source.rglob("*.py")):
        if path == own:
            continue
        where = path.relative_to(source)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Attribute)
                and node.attr in _POLICY_PRIVATES
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
            ):
                readers.append(f"{where}:{node.lineno} .{node.attr}")
            elif isinstance(node, ast.ClassDef) and any(
                isinstance(base, ast.Name) and base.id == "Protocol" for base in node.bases
            ):
                # A protocol with a private member is the same read, spelled as a type.
                readers.extend(
                    f"{where}:{member.lineno} {name}"
                    for member in node.body
                    for name in _member_names(member)
                    if name in _POLICY_PRIVATES
                )
    assert readers == []


def _member_names(member: ast.stmt) -> list[str]:
    if isinstance(member, ast.FunctionDef):
        return [member.name]
    if isinstance(member, ast.AnnAssign) and isinstance(member.target, ast.Name):
        return [member.target.id]
    return []
