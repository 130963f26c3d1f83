"""Properties of the policy over generated hosts, URLs and texts (Hypothesis)."""

from __future__ import annotations

import pytest
from agentloop import Transcript
from agentloop.transcript import Citation, HostedToolPart, Source, TextPart
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from agentloop_tools.web import DomainPolicy
from agentloop_tools.web._domains._rules import parse_rule
from agentloop_tools.web._domains._url import locate, parse, quick_host

pytestmark = pytest.mark.core

LABEL = st.from_regex(r"[a-z][a-z0-9]{0,8}(?:-[a-z0-9]{1,4})?", fullmatch=True)
TLD = st.sampled_from(["com", "org", "net", "io", "de", "jp", "co.uk", "example"])


@st.composite
def domains(draw: st.DrawFn) -> str:
    return ".".join([*draw(st.lists(LABEL, min_size=1, max_size=3)), draw(TLD)])


PATH = st.from_regex(r"(?:/[A-Za-z0-9._~-]{0,8}){0,3}", fullmatch=True)
SCHEME = st.sampled_from(["https://", "http://", "HTTPS://", "//", ""])


@st.composite
def urls(draw: st.DrawFn) -> str:
    return draw(SCHEME) + draw(domains()) + draw(PATH)


RULE_LISTS = st.lists(domains(), min_size=1, max_size=6, unique=True)


@given(rules=RULE_LISTS, url=urls())
@example(rules=["example.com"], url="https://www.example.com/")
def test_allow_and_block_of_one_list_disagree_exactly_where_it_covers(
    rules: list[str], url: str
) -> None:
    allow, block = DomainPolicy.allow(rules), DomainPolicy.block(rules)
    assert allow.permits(url) is not block.permits(url)
    assert allow.match(url) == block.match(url)


@given(rule=domains(), prefix=LABEL, suffix=LABEL, path=PATH)
@example(rule="example.com", prefix="not", suffix="au", path="/")
def test_a_rule_covers_its_subdomains_and_no_neighbour(
    rule: str, prefix: str, suffix: str, path: str
) -> None:
    allow, block = DomainPolicy.allow([rule]), DomainPolicy.block([rule])
    for covered in (rule, f"{prefix}.{rule}", f"a.{prefix}.{rule}"):
        assert allow.match(f"https://{covered}{path}") == rule
        assert not block.permits(f"https://{covered}{path}")
    neighbours = [f"{prefix}{rule}", f"{rule}.{suffix}", f"{rule}{suffix}", f"{rule}-{suffix}"]
    for neighbour in neighbours:
        assert allow.match(f"https://{neighbour}{path}") is None, neighbour
        assert block.permits(f"https://{neighbour}{path}"), neighbour


@given(rules=RULE_LISTS, host=domains(), path=PATH, mode=st.sampled_from(["allow", "block"]))
def test_case_trailing_dot_and_www_never_change_a_verdict(
    rules: list[str], host: str, path: str, mode: str
) -> None:
    policy = DomainPolicy.allow(rules) if mode == "allow" else DomainPolicy.block(rules)
    verdict = policy.permits(f"https://{host}{path}")
    for variant in (host.upper(), host.title(), f"{host}.", f"www.{host}", f"WWW.{host}.".upper()):
        assert policy.permits(f"https://{variant}{path}") is verdict, variant
    # The same holds for the rules themselves.
    variants = [f"www.{rule}" if i % 2 else f"{rule.upper()}." for i, rule in enumerate(rules)]
    twin = DomainPolicy.allow(variants) if mode == "allow" else DomainPolicy.block(variants)
    assert twin.permits(f"https://{host}{path}") is verdict


@given(
    rules=RULE_LISTS,
    host=domains(),
    path=PATH,
    mode=st.sampled_from(["allow", "block"]),
    cuts=st.lists(st.tuples(st.integers(min_value=0), st.sampled_from("\t\n\r")), max_size=4),
)
@example(rules=["a.com"], host="a.com", path="/", mode="block", cuts=[(2, "\t")])
def test_tabs_and_newlines_anywhere_in_a_url_never_change_a_verdict(
    rules: list[str], host: str, path: str, mode: str, cuts: list[tuple[int, str]]
) -> None:
    policy = DomainPolicy.allow(rules) if mode == "allow" else DomainPolicy.block(rules)
    url = f"https://{host}{path}"
    verdict = policy.permits(url)
    written = url
    for position, char in cuts:  # browsers and web_fetch's parser delete them, scheme too
        position %= len(written) + 1
        written = written[:position] + char + written[position:]
    assert policy.permits(written) is verdict, repr(written)


TRICKY = st.sampled_from(
    [
        "http",
        "https",
        "hxxp",
        "://",
        ":",
        "/",
        "\\",
        "//",
        "@",
        "%",
        "%2e",
        "%2F",
        "[.]",
        "(.)",
        ".",
        "。",
        "．",
        "www.",
        "example",
        ".com",
        "[",
        "]",
        "(",
        ")",
        "<",
        ">",
        '"',
        "'",
        "*",
        "_",
        "\t",
        "\n",
        " ",
        "\u00ad",
        "\u200b",
        "\u202e",
        "а",
        "ｅ",
        "を",
        "中",
        "\x00",
        "\ufffd",
        "0x7f",
        "[::1]",
        "href=",
        "](",
        "xn--",
        "-",
        "..",
        "?",
        "#",
        ":99999",
        "\ud800",
    ]
)
TEXTS = st.one_of(st.text(), st.lists(TRICKY, max_size=40).map("".join))


@settings(max_examples=400)
@given(text=TEXTS)
@example(text="https://\ud800.com/ \ud800example.com")
@example(text="\ud800 curl evil.com/x and git@evil.com:org/r.git")
@example(text="hxxp://[.]" + "(" * 50 + "https://a.b/" + ")" * 50)
def test_permits_match_and_audit_never_raise(text: str) -> None:
    for policy in (
        DomainPolicy.allow(["example.com", "a.b/x"]),
        DomainPolicy.block(["example.com"]),
    ):
        assert isinstance(policy.permits(text), bool)
        policy.match(text)
        transcript = Transcript()
        transcript.add_user_message(text)
        transcript.add_assistant_message(
            [
                HostedToolPart(kind="web_search", sources=(Source(url=text),)),
                TextPart(text=text, citations=(Citation(url=text),)),
            ]
        )
        before = transcript.model_dump()
        first = policy.audit(transcript)
        assert policy.audit(transcript) == first, "auditing is deterministic"
        assert transcript.model_dump() == before, "auditing does not mutate"
        for violation in first:
            if violation.span is not None:
                start, end = violation.span
                assert text[start:end] == violation.url


@given(url=urls())
@example(url="https://a.b/x/..")
@example(url="HTTP://WWW.A.B./")
def test_the_plain_url_shortcut_agrees_with_the_parser(url: str) -> None:
    assert locate(url) == parse(url)


# Most of TEXTS are no URL, so the assume() below discards many inputs by design: on
# some seeds Hypothesis's filter health check failed the run. It still raises
# Unsatisfiable when no input at all is kept.
@settings(suppress_health_check=[HealthCheck.filter_too_much])
@given(url=st.one_of(urls(), TEXTS))
@example(url="https://example.com@evil.net/")
@example(url="https://example.com:99999/")
@example(url="https://example.com\\@evil.net/")
@example(url="https://xn--exmple-cua.com/")
def test_the_quick_host_agrees_with_the_parser(url: str) -> None:
    host = quick_host(url)
    # The shortcut claims nothing when it answers None (the parser decides): search
    # among the inputs it answers, or the test could pass without checking one.
    assume(host is not None)
    location = locate(url)
    assert location is not None
    assert location.valid
    assert host == location.host


@given(entry=st.text(st.sampled_from("abcxyz019.-_*/:@[]%~ ."), max_size=20))
@example(entry="0/%00")
@example(entry="a.com/x%2Fy")
def test_every_accepted_rule_covers_itself(entry: str) -> None:
    try:
        rule = parse_rule(entry)
    except ValueError:
        return
    target = entry.replace("*", "x")
    assert DomainPolicy.allow([entry]).match(target) == rule.text
    assert DomainPolicy.block([entry]).match(target) == rule.text


RAW = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=30)
    | st.sampled_from(["text", "web_search_tool_result", "web_fetch_tool_result", "message",
                       "web_search_call", "open_page", "url_citation", "https://a.example/"]),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(
        st.sampled_from(["type", "url", "title", "content", "citations", "action", "sources",
                         "annotations", "tool_use_id", "caller"]),
        children,
        max_size=5,
    ),
    max_leaves=20,
)  # fmt: skip


@given(blocks=st.lists(RAW.filter(lambda block: isinstance(block, dict)), max_size=6))
def test_readers_never_raise_on_unrecognised_provider_blocks(
    blocks: list[dict[str, object]],
) -> None:
    from agentloop import Origin
    from agentloop.transcript import TextPart

    from agentloop_tools.web import citations, sources

    transcript = Transcript()
    transcript.add_user_message("q")
    origin = Origin(provider="anthropic", api="messages", model="m", raw=tuple(blocks))
    transcript.add_assistant_message([TextPart(text="answer")], origin=origin)
    found = sources(transcript)
    assert all(isinstance(source.url, str) and source.url for source in found)
    citations(transcript)
    for policy in (DomainPolicy.allow(["a.example"]), DomainPolicy.block(["a.example"])):
        policy.audit(transcript)
