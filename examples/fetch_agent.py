"""An agent that searches, then reads the page it picked with web_fetch.

The search here is a plain local tool over a fixed index, standing in for any search
tool (a client-side web search, or your own); it is not part of this package. The
fetch is the real ``web_fetch``: every URL the model picks goes through the domain
policy, the address checks and the byte and time caps before anything is read.
"""

from __future__ import annotations

import httpx
from agentloop import ToolSpec, tool

from agentloop_tools.web import DomainPolicy, Resolver, web_fetch

# The one list the agent may read from; the same policy audits the transcript.
POLICY = DomainPolicy.allow(["python.org"])

INDEX = {
    "tutorial": [
        ("https://docs.python.org/3/tutorial/controlflow.html", "More Control Flow Tools"),
        ("https://evil.example/python-tutorial", "Python tutorial (mirror)"),
    ],
}


@tool(
    {
        "type": "object",
        "properties": {"query": {"type": "string", "description": "What to look for."}},
        "required": ["query"],
        "additionalProperties": False,
    }
)
def search_docs(query: str) -> str:
    """Find pages about a topic: one 'title — url' line per result."""
    hits = [hit for word, found in INDEX.items() if word in query.lower() for hit in found]
    return "\n".join(f"{title} — {url}" for url, title in hits) or "No results."


def fetch_tools(
    *, resolver: Resolver | None = None, http_client: httpx.Client | None = None
) -> list[ToolSpec]:
    """The agent's tools: the stand-in search, and web_fetch under the policy."""
    fetch = web_fetch(policy=POLICY, max_chars=2_000, resolver=resolver, http_client=http_client)
    return [search_docs, fetch]
