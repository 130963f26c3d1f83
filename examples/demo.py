"""Demo: replay recorded provider traffic through real agentloop agents, then audit it.

    ./dev demo            # replay cassettes/demo/*.yaml (offline, no keys)
    ./dev demo --record   # re-create them from the scripted provider below

The cassettes were recorded from a *scripted* provider: an in-memory transport that
serves provider-shaped JSON to the real SDKs while vcrpy records the HTTP exchange.
Replaying them runs the real Anthropic SDK and agentloop's OpenAI client, offline.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import httpx
import httpx2
import vcr
from agentloop import Agent, Transcript, final_text

from agentloop_tools.web import DomainPolicy, citations, per_page, sources

CASSETTES = Path(__file__).resolve().parents[1] / "cassettes" / "demo"
QUESTION = "What changed in Python 3.13's interactive interpreter?"
# Placeholders only: replay never sends them anywhere, and recording hits the script.
ENV = {
    "anthropic": {"LLM_PROVIDER": "anthropic", "ANTHROPIC_API_KEY": "placeholder-not-a-key",
                  "ANTHROPIC_MODEL": "claude-sonnet-4-5"},
    "openai": {"LLM_PROVIDER": "openai", "OPENAI_API_KEY": "placeholder-not-a-key",
               "OPENAI_MODEL": "gpt-5.1"},
}  # fmt: skip
# Anthropic enforces allowlists for search, but nothing stops the model from writing
# a link from memory. OpenAI does not document blocklists, so one may not be enforced.
POLICIES = {
    "anthropic": DomainPolicy.allow(["python.org", "realpython.com"]),
    "openai": DomainPolicy.block(["medium.com"]),
}

ANTHROPIC_ANSWER: dict[str, Any] = {
    "id": "msg_01demo",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5",
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 2841, "output_tokens": 312,
              "server_tool_use": {"web_search_requests": 1}},
    "content": [
        {"type": "server_tool_use", "id": "srvtoolu_01demo", "name": "web_search",
         "input": {"query": "Python 3.13 new interactive interpreter REPL"}},
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01demo", "content": [
            {"type": "web_search_result", "url": "https://docs.python.org/3/whatsnew/3.13.html",
             "title": "What's New In Python 3.13", "encrypted_content": "EqgfCioIBhgCIiQ3",
             "page_age": "October 7, 2024"},
            {"type": "web_search_result", "url": "https://realpython.com/python313-repl/",
             "title": "Python 3.13 Preview: A Modern REPL", "encrypted_content": "Eo8YCioIBhgC",
             "page_age": "May 22, 2024"},
        ]},
        {"type": "text", "text": "Python 3.13 ships a new interactive interpreter. "},
        {"type": "text", "text": "It supports multi-line editing with history preservation "
                                 "and colour by default",
         "citations": [{"type": "web_search_result_location",
                        "url": "https://docs.python.org/3/whatsnew/3.13.html",
                        "title": "What's New In Python 3.13", "encrypted_index": "Eo8BCioIBhgC",
                        "cited_text": "Python now uses a new interactive shell by default, "
                                      "based on code from the PyPy project."}]},
        {"type": "text", "text": ", and commands like `help` and `exit` work without "
                                 "parentheses"},
        {"type": "text", "text": ".", "citations": [{"type": "web_search_result_location",
                        "url": "https://realpython.com/python313-repl/",
                        "title": "Python 3.13 Preview: A Modern REPL",
                        "encrypted_index": "EpEBCioIBhgC",
                        "cited_text": "you can now call exit and quit without parentheses"}]},
        {"type": "text", "text": " For background, see "
                                 "[the history of Python](https://en.wikipedia.org/wiki/History_of_Python)."},
    ],
}  # fmt: skip

DOCS_URL = "https://docs.python.org/3/whatsnew/3.13.html"
MEDIUM_URL = "https://medium.com/@pydev/python-3-13-repl-tour-5f1e"
DOCS_LINK = f"([docs.python.org]({DOCS_URL}?utm_source=openai))"
MEDIUM_LINK = f"([medium.com]({MEDIUM_URL}?utm_source=openai))"
OPENAI_TEXT = (
    f"Python 3.13's new REPL adds multi-line editing, colour prompts and paste mode "
    f"{DOCS_LINK}. A walkthrough is on Medium {MEDIUM_LINK}."
)


def url_citation(url: str, title: str, link: str) -> dict[str, Any]:
    """OpenAI's citation: the annotation spans the inline markdown link it also writes."""
    start = OPENAI_TEXT.index(link)
    return {
        "type": "url_citation",
        "url": f"{url}?utm_source=openai",
        "title": title,
        "start_index": start,
        "end_index": start + len(link),
    }


OPENAI_ANSWER: dict[str, Any] = {
    "id": "resp_0demo",
    "object": "response",
    "status": "completed",
    "model": "gpt-5.1-2025-11-13",
    "output": [
        {
            "type": "web_search_call",
            "id": "ws_0demo",
            "status": "completed",
            "action": {
                "type": "search",
                "query": "Python 3.13 REPL changes",
                "sources": [{"type": "url", "url": DOCS_URL}, {"type": "url", "url": MEDIUM_URL}],
            },
        },
        {
            "type": "message",
            "id": "msg_0demo",
            "role": "assistant",
            "status": "completed",
            "content": [
                {
                    "type": "output_text",
                    "text": OPENAI_TEXT,
                    "annotations": [
                        url_citation(DOCS_URL, "What's New In Python 3.13", DOCS_LINK),
                        url_citation(MEDIUM_URL, "A tour of the Python 3.13 REPL", MEDIUM_LINK),
                    ],
                }
            ],
        },
    ],
    "usage": {"input_tokens": 1893, "output_tokens": 96},
}

SCRIPT = {"anthropic": ANTHROPIC_ANSWER, "openai": OPENAI_ANSWER}


def scripted_client(provider: str) -> httpx.Client | httpx2.Client:
    """An HTTP client whose transport answers like the provider would, from SCRIPT."""
    body = json.dumps(SCRIPT[provider]).encode()
    headers = {"content-type": "application/json"}
    if provider == "anthropic":
        return httpx2.Client(
            transport=httpx2.MockTransport(
                lambda _: httpx2.Response(200, content=body, headers=headers)
            )
        )
    return httpx.Client(
        transport=httpx.MockTransport(lambda _: httpx.Response(200, content=body, headers=headers))
    )


def run(provider: str, *, record: bool) -> Transcript:
    cassette = CASSETTES / f"{provider}-web-search.yaml"
    recorder = vcr.VCR(
        record_mode="all" if record else "none",
        filter_headers=["authorization", "x-api-key", "cookie", "set-cookie"],
        match_on=["method", "scheme", "host", "path", "body"],
    )
    http = scripted_client(provider) if record else None
    with recorder.use_cassette(str(cassette)):
        tool = POLICIES[provider].native_web_search()
        with Agent.from_env(ENV[provider], [tool], http_client=http) as agent:
            transcript = Transcript()
            transcript.add_user_message(QUESTION)
            agent.converse(transcript)
    if http is not None:
        http.close()
    return transcript


def report(provider: str, transcript: Transcript) -> int:
    print(f"\n=== {provider}: {QUESTION}")
    print(f"answer: {final_text(transcript)}\n")
    # One page, one line, as the reports and `agentloop-tools evidence` show it: OpenAI's
    # ?utm_source=openai copy of a URL is the same page (sources() alone keeps each URL).
    print("sources consulted:")
    for source in sources(transcript, per_page=True):
        print(f"  - {source.url}  ({source.title or 'no title'})")
    print("citations:")
    for citation in citations(transcript):
        print(f"  - {citation.url}")
    policy = POLICIES[provider]
    print(f"hosted tool sent: {policy.native_web_search()!r}")
    violations = policy.audit(transcript)
    pages = per_page(violations)
    print(f"audit against {policy!r}: {len(violations)} violation(s) on {len(pages)} page(s)")
    for page in pages:
        print(f"  - {page}")
        if len(page.urls) > 1:
            print(f"    written as: {', '.join(page.urls)}")
    return len(violations)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--record", action="store_true", help="re-record from the script")
    args = parser.parse_args()
    for provider in ("anthropic", "openai"):
        report(provider, run(provider, record=args.record))
    print(
        "\nThe filters went to the providers, yet both answers still reached a domain the "
        "policy does not permit: the audit is what catches it. In a test, "
        "assert policy.audit(transcript) == [] fails the build."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
