"""The model narrows a search (never widens it): allowed_domains / blocked_domains.

Driven by a real agentloop Agent on a scripted model; the search API is scripted.
"""

from __future__ import annotations

from typing import Any

import pytest
from agentloop.transcript import ToolCallPart

from agentloop_tools.testing import (
    ScriptedSearch,
    brave_results,
    exa_results,
    searxng_results,
    tavily_results,
)
from agentloop_tools.web import DomainPolicy, sources
from agentloop_tools.web.backends import brave, exa, searxng, tavily
from tests.search.helpers import EXA_KEY, TAVILY_KEY, results, run_agent, scripted_tool

DOCS = ("https://docs.python.org/3/whatsnew/3.13.html", "What's New In Python 3.13")
BLOG = ("https://realpython.com/python313-repl/", "Python 3.13 REPL")
EVIL = ("https://evil.example/python", "Python mirror")


def narrow(query: str, **arguments: Any) -> ToolCallPart:
    return ToolCallPart(
        id="call_1",
        tool_name="web_search",
        arguments={
            "query": query,
            "count": None,
            "allowed_domains": None,
            "blocked_domains": None,
            **arguments,
        },
    )


def test_the_schema_offers_both_lists_as_nullable_and_required() -> None:
    tool = scripted_tool(ScriptedSearch("brave", []))
    properties = tool.parameters["properties"]
    for key in ("allowed_domains", "blocked_domains"):
        assert properties[key]["type"] == ["array", "null"]
        assert properties[key]["items"] == {"type": "string"}
        assert key in tool.parameters["required"]


def test_allowed_domains_keeps_only_hits_under_them() -> None:
    script = ScriptedSearch("brave", [brave_results([DOCS, BLOG, EVIL])])
    transcript = run_agent(scripted_tool(script), [narrow("repl", allowed_domains=["python.org"])])
    [result] = results(transcript)
    assert not result.is_error
    assert [s.url for s in sources(transcript)] == [DOCS[0]]
    assert "2 results outside the call's domain list withheld" in result.content
    # The evidence of the narrowing the model asked for is in the result itself.
    assert "Narrowed by the call: allowed_domains (1 domain)." in result.content


def test_blocked_domains_adds_to_the_tool_blocklist() -> None:
    policy = DomainPolicy.block(["evil.example"])
    script = ScriptedSearch("brave", [brave_results([DOCS, BLOG, EVIL])])
    tool = scripted_tool(script, policy=policy)
    transcript = run_agent(tool, [narrow("repl", blocked_domains=["realpython.com"])])
    [result] = results(transcript)
    assert [s.url for s in sources(transcript)] == [DOCS[0]]
    assert "1 result withheld by the domain policy" in result.content
    assert "1 result outside the call's domain list withheld" in result.content


def test_a_model_allowlist_cannot_widen_the_tool_allowlist() -> None:
    policy = DomainPolicy.allow(["python.org"])
    script = ScriptedSearch("tavily", [tavily_results([DOCS, EVIL])])
    tool = scripted_tool(script, tavily(TAVILY_KEY), policy=policy)
    transcript = run_agent(
        tool, [narrow("repl", allowed_domains=["evil.example", "docs.python.org"])]
    )
    assert [s.url for s in sources(transcript)] == [DOCS[0]]
    # Pushed down: only the intersection of both allowlists.
    assert script.sent()[0]["include_domains"] == ["docs.python.org"]


def test_a_model_allowlist_outside_the_policy_sends_no_request() -> None:
    policy = DomainPolicy.allow(["python.org"])
    script = ScriptedSearch("tavily", [tavily_results([EVIL])])
    tool = scripted_tool(script, tavily(TAVILY_KEY), policy=policy)
    transcript = run_agent(tool, [narrow("repl", allowed_domains=["evil.example"])])
    [result] = results(transcript)
    assert not result.is_error
    assert result.content.splitlines()[1] == "0 results."
    assert "None of the allowed_domains given is permitted" in result.content
    assert script.requests == []


def test_both_lists_at_once_is_a_soft_error_without_a_request() -> None:
    script = ScriptedSearch("brave", [brave_results([DOCS])])
    transcript = run_agent(
        scripted_tool(script),
        [narrow("repl", allowed_domains=["python.org"], blocked_domains=["evil.example"])],
    )
    [result] = results(transcript)
    assert result.is_error
    assert result.content.startswith("Error: [domain-lists-conflict] ")
    assert script.requests == []


@pytest.mark.parametrize(
    "bad",
    [
        ["https://python.org/"],
        ["python.org:443"],
        [""],
        ["python.org", " "],
        "python.org",
        [7],
        ["exa mple.com"],
    ],
)
def test_a_bad_list_is_invalid_domain_without_a_request(bad: object) -> None:
    script = ScriptedSearch("brave", [brave_results([DOCS])])
    transcript = run_agent(scripted_tool(script), [narrow("repl", allowed_domains=bad)])
    [result] = results(transcript)
    assert result.is_error
    assert result.content.startswith("Error: [invalid-domain] allowed_domains ")
    assert script.requests == []


def test_an_empty_list_narrows_nothing() -> None:
    # Models on a strict schema often send [] where they mean null.
    script = ScriptedSearch("tavily", [tavily_results([DOCS, EVIL])])
    tool = scripted_tool(script, tavily(TAVILY_KEY))
    transcript = run_agent(
        tool, [narrow("repl", allowed_domains=[], blocked_domains=["evil.example"])]
    )
    assert [s.url for s in sources(transcript)] == [DOCS[0]]
    assert script.sent()[0]["exclude_domains"] == ["evil.example"]


def test_a_bad_blocklist_is_named_as_such() -> None:
    script = ScriptedSearch("brave", [])
    transcript = run_agent(
        scripted_tool(script), [narrow("repl", blocked_domains=["ftp://evil.example"])]
    )
    [result] = results(transcript)
    assert result.content.startswith("Error: [invalid-domain] blocked_domains ")


def test_tavily_gets_include_and_exclude_pushed_down_and_is_still_checked() -> None:
    # Tavily returns unfiltered results for a domain it has not indexed: we filter anyway.
    script = ScriptedSearch(
        "tavily", [tavily_results([DOCS, EVIL]), tavily_results([DOCS, BLOG, EVIL])]
    )
    tool = scripted_tool(script, tavily(TAVILY_KEY))
    transcript = run_agent(
        tool,
        [narrow("repl", allowed_domains=["python.org"])],
        [narrow("repl", blocked_domains=["evil.example", "realpython.com/python313-repl"])],
    )
    first, second = script.sent()
    assert first["include_domains"] == ["python.org"]
    assert "exclude_domains" not in first
    # A path rule would block the whole host as a provider filter: not sent, still enforced.
    assert second["exclude_domains"] == ["evil.example"]
    assert "include_domains" not in second
    for result in results(transcript):
        assert DOCS[0] in result.content
        assert "evil.example" not in result.content
        assert "realpython.com" not in result.content


def test_exa_gets_include_and_exclude_pushed_down() -> None:
    policy = DomainPolicy.block(["evil.example"])
    script = ScriptedSearch("exa", [exa_results([DOCS]), exa_results([DOCS])])
    tool = scripted_tool(script, exa(EXA_KEY), policy=policy)
    run_agent(
        tool,
        [narrow("repl", allowed_domains=["python.org"])],
        [narrow("repl", blocked_domains=["realpython.com"])],
    )
    first, second = script.sent()
    assert first["includeDomains"] == ["python.org"]
    assert first["excludeDomains"] == ["evil.example"]
    assert second["excludeDomains"] == ["evil.example", "realpython.com"]


@pytest.mark.parametrize("backend", ["brave", "searxng"])
def test_brave_and_searxng_have_no_domain_parameter_and_are_filtered_here(backend: str) -> None:
    hits = [DOCS, EVIL]
    reply = brave_results(hits) if backend == "brave" else searxng_results(hits)
    script = ScriptedSearch(backend, [reply])
    chosen = (
        brave("BSA-test-secret-0123456789")
        if backend == "brave"
        else searxng("http://127.0.0.1:8080")
    )
    transcript = run_agent(
        scripted_tool(script, chosen), [narrow("repl", blocked_domains=["evil.example"])]
    )
    sent = script.sent()[0]
    assert not {key for key in sent if "domain" in key.lower()}
    assert "site:" not in sent["q"]
    assert [s.url for s in sources(transcript)] == [DOCS[0]]


def test_the_audit_reads_an_allowed_domains_narrowing_as_a_site_search() -> None:
    policy = DomainPolicy.allow(["python.org"])
    script = ScriptedSearch("brave", [brave_results([DOCS])])
    tool = scripted_tool(script, policy=policy)
    transcript = run_agent(tool, [narrow("repl", allowed_domains=["evil.example", "python.org"])])
    found = [(v.where, v.url) for v in policy.audit(transcript)]
    assert found == [("tool-call", "evil.example")]
    # blocked_domains name sites the model avoids: never a violation.
    block = DomainPolicy.block(["evil.example"])
    script = ScriptedSearch("brave", [brave_results([DOCS])])
    transcript = run_agent(
        scripted_tool(script, policy=block), [narrow("repl", blocked_domains=["evil.example"])]
    )
    assert block.audit(transcript) == []


def test_an_openrouter_model_narrows_through_the_real_client() -> None:
    from agentloop import Agent

    from agentloop_tools.testing import ScriptedProvider, chat_completion

    arguments = {
        "query": "python 3.13 repl",
        "count": 3,
        "allowed_domains": ["docs.python.org"],
        "blocked_domains": None,
    }
    provider = ScriptedProvider(
        "openrouter",
        [
            chat_completion(calls=[("call_1", "web_search", arguments)]),
            chat_completion("The REPL has multi-line editing."),
        ],
    )
    script = ScriptedSearch("brave", [brave_results([DOCS, BLOG])])
    agent = Agent.from_env(
        {"LLM_PROVIDER": "openrouter", "OPENROUTER_API_KEY": "sk-or-placeholder"},
        [scripted_tool(script)],
        http_client=provider.http_client(),
    )
    agent.run("What changed in the Python 3.13 REPL?")
    # The strict schema went to the provider, and the model's narrowing came back.
    [definition] = provider.requests[0]["tools"]
    assert definition["function"]["parameters"]["required"] == [
        "query",
        "count",
        "allowed_domains",
        "blocked_domains",
    ]
    sent_back = provider.requests[1]["messages"][-1]["content"]
    assert DOCS[0] in sent_back
    assert BLOG[0] not in sent_back
    assert "Narrowed by the call: allowed_domains (1 domain)." in sent_back
