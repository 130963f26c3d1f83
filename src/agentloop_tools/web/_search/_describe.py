"""What the model is told about ``web_search``: guidance that follows the configuration.

Ranking is the provider's opinion; snippets are for choosing, never for quoting;
fetching is mentioned only when the agent has a fetch tool; the point-in-time
sentence is written only when the backend can keep it.
"""

from __future__ import annotations

from datetime import date

from agentloop_tools.web._policy._policy import DomainPolicy


def search_description(
    *,
    policy: DomainPolicy | None,
    fetch_tool: str | None,
    as_of: date | None,
    exact_as_of: bool,
) -> str:
    """The tool description for one configuration (stable text: cassettes record it)."""
    sentences = [
        "Search the web and get a list of result links with short extracts.",
        "Use it for facts you do not know or that may have changed.",
        "The ranking is the search provider's opinion, not the truth: judge each result "
        "by its source.",
        "Snippets are for choosing what to read, never for quoting: do not quote or cite "
        "a snippet as what a page says.",
    ]
    if fetch_tool is not None:
        sentences.append(
            f"To read a page, call {fetch_tool} with its URL: fetch the one or two most "
            "promising results, never all of them."
        )
    sentences.append(
        "Pass allowed_domains or blocked_domains (one list, or neither) to narrow a search "
        "to or away from sites; they can only narrow what is permitted, never widen it."
    )
    if policy is not None:
        sentences.append("Results from sites outside the domain policy are withheld.")
    if as_of is not None and exact_as_of:
        sentences.append(
            f"Results are limited to pages published on or before {as_of.isoformat()}."
        )
    sentences.append(
        "An error that says to stop (retries exhausted, a quota, a rejected key) means: "
        "do not call this tool again this turn."
    )
    sentences.append("Cite the URLs of the results you use.")
    return " ".join(sentences)


def fetch_description(*, policy: DomainPolicy | None, via: str | None) -> str:
    """The web_fetch description for one configuration."""
    sentences = [
        "Read one web page (HTML, plain text, JSON or PDF) and return its title, final URL "
        "and main text.",
        "Long pages come in parts: call again with the same url and the start offset the "
        "result gives.",
    ]
    if via is not None:
        sentences.append(f"Pages are read through the {via} API, not directly.")
    if policy is not None:
        sentences.append("URLs outside the domain policy are refused without a request.")
    sentences.append("Errors start with a [code] and say what to do.")
    return " ".join(sentences)
