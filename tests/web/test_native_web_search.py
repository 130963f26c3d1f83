"""native_web_search: a validated HostedTool, and agentloop sends what it says."""

from __future__ import annotations

import json
from typing import Any

import httpx
import httpx2
import pytest
from agentloop import Agent, HostedTool, Transcript

from agentloop_tools.web import DomainPolicy, native_web_search

pytestmark = pytest.mark.core


def test_unconfigured_search_has_no_options() -> None:
    tool = native_web_search()
    assert isinstance(tool, HostedTool)
    assert tool.kind == "web_search"
    assert tool.options == {}


def test_options_carry_only_what_was_set() -> None:
    tool = native_web_search(
        allowed_domains=("python.org", "example.com/docs"),
        max_uses=3,
        user_location={"country": "GB", "city": "London", "timezone": "Europe/London"},
        search_context_size="high",
    )
    assert tool.options == {
        "allowed_domains": ["python.org", "example.com/docs"],
        "max_uses": 3,
        "user_location": {"country": "GB", "city": "London", "timezone": "Europe/London"},
        "search_context_size": "high",
    }
    assert native_web_search(dynamic_filtering=True).options == {"dynamic_filtering": True}
    assert native_web_search(blocked_domains=["a.example"]).options == {
        "blocked_domains": ["a.example"]
    }


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (
            {"allowed_domains": ["a.com"], "blocked_domains": ["b.com"]},
            ValueError,
            "not both",
        ),
        ({"allowed_domains": ["https://a.com"]}, ValueError, "has a scheme"),
        ({"allowed_domains": ["http://a.com/x"]}, ValueError, "'a.com/x'"),
        ({"blocked_domains": ["bücher.de"]}, ValueError, "xn--bcher-kva.de"),
        ({"allowed_domains": ["exаmple.com"]}, ValueError, "non-ASCII"),
        ({"allowed_domains": ["*.example.com"]}, ValueError, "'*' in the host"),
        ({"allowed_domains": ["ex*ample.com"]}, ValueError, "'*' in the host"),
        ({"allowed_domains": [""]}, ValueError, "is empty"),
        ({"allowed_domains": ["   "]}, ValueError, "is empty"),
        ({"allowed_domains": ["a.com", " b.com"]}, ValueError, "whitespace"),
        ({"allowed_domains": ["a.com:8080"]}, ValueError, "port"),
        ({"allowed_domains": [".a.com"]}, ValueError, "'a.com'"),
        ({"allowed_domains": ["a..com"]}, ValueError, "label"),
        ({"allowed_domains": ["user@a.com"]}, ValueError, "userinfo"),
        ({"allowed_domains": ["a.com/x?y=1"]}, ValueError, "query"),
        ({"allowed_domains": ["a.com/../x"]}, ValueError, "'..'"),
        ({"allowed_domains": ["::1"]}, ValueError, "brackets"),
        ({"allowed_domains": "a.com"}, TypeError, "write allowed_domains=['a.com']"),
        ({"allowed_domains": [3]}, TypeError, "must be strings"),
        ({"allowed_domains": 3}, TypeError, "list of domain strings"),
        ({"max_uses": 0}, ValueError, "max_uses=0"),
        ({"max_uses": -2}, ValueError, "1 or more"),
        ({"max_uses": 2.5}, TypeError, "max_uses must be an int"),
        ({"max_uses": True}, TypeError, "max_uses must be an int"),
        ({"search_context_size": "huge"}, ValueError, "'low', 'medium', 'high'"),
        ({"user_location": {"planet": "Mars"}}, ValueError, "['planet']"),
        ({"user_location": {"country": "USA"}}, ValueError, "two-letter"),
        ({"user_location": {"country": "1A"}}, ValueError, "'1A'"),
        ({"user_location": {"type": "exact"}}, ValueError, "'approximate'"),
        ({"user_location": {"city": ""}}, ValueError, "non-empty string"),
        ({"user_location": "London"}, TypeError, "mapping"),
        ({"dynamic_filtering": "yes"}, TypeError, "True or False"),
        ({"allowed_domain": ["a.com"]}, TypeError, "allowed_domains, blocked_domains"),
    ],
)
def test_bad_input_is_refused_with_a_message_naming_it(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as raised:
        native_web_search(**kwargs)
    assert message in str(raised.value)


def test_each_domain_error_names_the_offending_entry_and_the_argument() -> None:
    with pytest.raises(ValueError, match=r"blocked_domains entry 'https://x\.org'"):
        native_web_search(blocked_domains=["ok.org", "https://x.org"])


def test_path_wildcards_and_ips_are_accepted() -> None:
    tool = native_web_search(
        allowed_domains=["example.com/*/articles", "192.0.2.1", "[2001:db8::1]", "xn--bcher-kva.de"]
    )
    assert len(tool.options["allowed_domains"]) == 4


def test_policy_builds_the_search_from_its_own_list() -> None:
    policy = DomainPolicy.block(["wikipedia.org"])
    assert policy.native_web_search(max_uses=2).options == {
        "blocked_domains": ["wikipedia.org"],
        "max_uses": 2,
    }
    with pytest.raises(ValueError, match="cannot be passed"):
        policy.native_web_search(allowed_domains=["x.org"])
    with pytest.raises(ValueError, match="cannot be passed"):
        policy.native_web_search(blocked_domains=["x.org"])


ANTHROPIC_REPLY = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-test",
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 1, "output_tokens": 1},
    "content": [{"type": "text", "text": "ok"}],
}
OPENAI_REPLY = {
    "id": "resp_1",
    "object": "response",
    "status": "completed",
    "model": "gpt-test",
    "output": [
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "ok", "annotations": []}],
        }
    ],
    "usage": {"input_tokens": 1, "output_tokens": 1},
}


@pytest.mark.agentloop_06
def test_anthropic_receives_the_filter_through_the_real_adapter() -> None:
    sent: list[dict[str, Any]] = []

    def reply(request: httpx2.Request) -> httpx2.Response:
        sent.append(json.loads(request.content))
        return httpx2.Response(200, json=ANTHROPIC_REPLY)

    policy = DomainPolicy.allow(["python.org", "example.com/docs"])
    env = {"LLM_PROVIDER": "anthropic", "ANTHROPIC_API_KEY": "test-key"}
    with (
        httpx2.Client(transport=httpx2.MockTransport(reply)) as http,
        Agent.from_env(env, [policy.native_web_search(max_uses=2)], http_client=http) as agent,
    ):
        transcript = Transcript()
        transcript.add_user_message("hi")
        agent.converse(transcript)
    assert sent[0]["tools"] == [
        {
            "type": "web_search_20250305",
            "name": "web_search",
            "allowed_domains": ["python.org", "example.com/docs"],
            "max_uses": 2,
        }
    ]


@pytest.mark.agentloop_06
def test_openai_receives_the_filter_through_the_real_adapter() -> None:
    sent: list[dict[str, Any]] = []

    def reply(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        return httpx.Response(200, json=OPENAI_REPLY)

    tool = native_web_search(allowed_domains=["python.org"], search_context_size="low")
    env = {"LLM_PROVIDER": "openai", "OPENAI_API_KEY": "test-key"}
    with (
        httpx.Client(transport=httpx.MockTransport(reply)) as http,
        Agent.from_env(env, [tool], http_client=http) as agent,
    ):
        transcript = Transcript()
        transcript.add_user_message("hi")
        agent.converse(transcript)
    assert sent[0]["tools"] == [
        {
            "type": "web_search",
            "filters": {"allowed_domains": ["python.org"]},
            "search_context_size": "low",
        }
    ]
    assert sent[0]["include"] == ["web_search_call.action.sources"]


@pytest.mark.parametrize("empty", [[], set(), iter(())])
def test_an_empty_list_passed_on_purpose_is_refused(empty: object) -> None:
    with pytest.raises(ValueError, match="an empty list would search every domain"):
        native_web_search(allowed_domains=empty)  # type: ignore[arg-type]
    assert native_web_search(allowed_domains=()).options == {}
