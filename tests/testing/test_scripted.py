"""The scripted provider: wrong-provider scripts refused, ids stable per test."""

from __future__ import annotations

import httpx
import pytest

from agentloop_tools.testing import (
    ScriptedProvider,
    anthropic_message,
    anthropic_search,
    anthropic_text,
    openai_message,
    openai_response,
    openai_search,
)


def test_an_anthropic_body_for_an_openai_script_is_refused_at_construction() -> None:
    body = anthropic_message([anthropic_text("Hi.")])
    with pytest.raises(ValueError, match=r"response 1 is an Anthropic Messages body") as error:
        ScriptedProvider("openai", [openai_response([openai_message("Hi.")]), body])
    assert "openai_response(...)" in str(error.value)
    with pytest.raises(ValueError, match=r"response 0 is an OpenAI Responses body"):
        ScriptedProvider("anthropic", [(200, openai_response([openai_message("Hi.")]))])


def test_error_bodies_and_raw_strings_are_not_judged() -> None:
    ScriptedProvider("openai", [(500, {"error": {"type": "server_error"}}), "not json"])
    ScriptedProvider("anthropic", [(529, {"type": "error", "error": {"type": "overloaded"}})])


def _served(provider: ScriptedProvider) -> list[bytes]:
    client = provider.http_client()
    served = []
    while provider.responses:
        request = httpx.Request("POST", "https://api.example/v1", content=b"{}")
        served.append(client._transport.handle_request(request).read())
    return served


def _script() -> list[dict[str, object]]:
    return [
        anthropic_message(
            [
                anthropic_search("q", ["https://a.example/"]),
                anthropic_text("A.", cite=["https://a.example/"]),
            ]
        ),
        anthropic_message([anthropic_text("Again.")]),
    ]


def test_ids_are_the_same_whatever_was_built_before() -> None:
    first = _served(ScriptedProvider("anthropic", _script()))
    for _ in range(7):  # other tests' scripts, built in between
        openai_response([openai_search("x", ["https://b.example/"])])
    second = _served(ScriptedProvider("anthropic", _script()))
    assert first == second
    assert b"srvtoolu_scripted0002" in first[0]  # numbered per provider, from 1
    assert b"msg_scripted0003" in first[1]


def test_a_scripted_search_header_replaces_the_default_whatever_its_case() -> None:
    from agentloop_tools.testing import ScriptedSearch

    script = ScriptedSearch("brave", [(200, "<html></html>", {"Content-Type": "text/html"})])
    with script.http_client() as client:
        response = client.get("https://api.search.brave.com/res/v1/web/search")
    assert response.headers.get_list("content-type") == ["text/html"]
