"""Page identity: which URLs name the same page.

OpenAI appends ``?utm_source=openai`` to the URLs it cites, so one page shows up with
and without it. Reports, evidence and the link readers all count pages this way.
"""

from __future__ import annotations

from agentloop_tools.web._domains._url import locate


def page_key(url: str) -> str:
    """What identifies the page ``url`` names: host, path and query without tracking.

    Scheme, case of the host, ``www.``, the fragment and ``utm_*`` parameters do not
    change the page. A URL that names no host is its own key.
    """
    location = locate(url) if isinstance(url, str) else None
    if location is None:
        return url
    query = _query(url)
    return f"{location.host}{location.path}{'?' + query if query else ''}"


def without_tracking(url: str) -> str:
    """``url`` without ``utm_*`` query parameters (and without a ``?`` left empty)."""
    head, hash_mark, fragment = url.partition("#")
    base, question, query = head.partition("?")
    if not question:
        return url
    kept = [pair for pair in query.split("&") if pair and not _tracking(pair)]
    rebuilt = base + ("?" + "&".join(kept) if kept else "")
    return rebuilt + hash_mark + fragment


def _query(url: str) -> str:
    head = url.partition("#")[0]
    query = head.partition("?")[2]
    return "&".join(pair for pair in query.split("&") if pair and not _tracking(pair))


def _tracking(pair: str) -> bool:
    return pair.lower().startswith("utm_")
