"""Which URLs web_fetch refused before requesting them: attempts the policy held.

Read from the transcript alone, as the audit reads everything: an error result's code
and its first line (``Error: [code] <message> — <remedy>``, the message naming the URL
it refused) and its ``redirect:``/``robots:`` trailer (every URL requested, in order).
A URL counts as refused only when the text shows nothing of it was sent:

- the URL asked for, when the tool refused that URL itself with a code it answers
  before any request (``blocked-by-policy``, ``blocked-address``,
  ``disallowed-by-robots``, the URL checks), and followed no redirect from it;
- a redirect hop or robots.txt, when it is the last URL requested and the address
  check refused it as the connection opened (``blocked-address`` naming it).

Anything else (a refused later hop, ``invalid-start`` after the page was read, a
message in another shape) is not a refusal here: it stays a violation, never a quiet
pass. The tool's own output is not changed for this: recorded cassettes replay as they
were recorded.
"""

from __future__ import annotations

from collections.abc import Sequence

from ada_url import parse_url

from agentloop_tools.web._domains._url import MAX_URL_LENGTH
from agentloop_tools.web._transcript._tool_codes import FETCH_REFUSALS

# Answered before the URL asked for is requested. (invalid-start is answered after the
# page was read; it is never a refusal of the URL.)
REFUSAL_CODES = FETCH_REFUSALS - {"invalid-start"}
# The URL checks of step 1: they quote the URL (``repr``), and a hop's says "the redirect to".
_URL_CHECKS = frozenset(
    {"invalid-url", "unsupported-scheme", "userinfo-not-allowed", "url-too-long",
     "hostname-too-shallow"}
)  # fmt: skip
_HOP = "the redirect to "
_SEPARATOR = " — "


def refusal(content: str) -> tuple[str, str] | None:
    """``(code, message)`` of a web_fetch error result whose code is a refusal, or None."""
    if not content.startswith("Error: ["):
        return None
    first = content.split("\n", 1)[0][len("Error: [") :]
    code, bracket, rest = first.partition("] ")
    if not bracket or code not in REFUSAL_CODES:
        return None
    return code, rest.split(_SEPARATOR, 1)[0]


def asked_was_refused(asked: object, content: str, hops: Sequence[tuple[str, str]]) -> bool:
    """Whether web_fetch refused the URL it was asked for before requesting anything of it.

    Args:
        asked: the ``url`` argument of the call.
        content: the text of its result.
        hops: the ``(kind, url)`` of its trailer (``redirect``/``robots``), in order.
    """
    found = refusal(content)
    if found is None or not isinstance(asked, str):
        return False
    code, message = found
    if message.startswith(_HOP) or any(kind == "redirect" for kind, _ in hops):
        return False  # the URL asked for answered with a redirect: it was requested
    href = _href(asked)
    if code == "url-too-long" and max(len(asked), len(href or "")) <= MAX_URL_LENGTH:
        return False  # the URL asked for is not too long: a hop was
    if code in _URL_CHECKS:
        return message.startswith((f"{_shown(asked)} ", f"{_shown(asked, 80)} "))
    if href is None:
        return False
    if code == "blocked-by-policy":
        return message.startswith(f"{href} is not permitted by the domain policy")
    robots = _robots_url(href)
    if code == "blocked-address":
        # The URL itself (before a request, or as the connection opened), or the
        # robots.txt read before it, refused as its connection opened.
        subjects = [f"{url} {verb} " for url in (href, robots) for verb in ("is", "resolves to")]
        return message.startswith((*subjects, f"{href} names "))
    # disallowed-by-robots: the rules of the asked URL's own robots.txt.
    return message.startswith(f"{robots} ") and (
        message.endswith(f" fetch {href}") or message.startswith(f"{robots} could not be read (")
    )


def hop_was_refused(url: str, content: str, hops: Sequence[tuple[str, str]]) -> bool:
    """Whether a ``redirect:``/``robots:`` URL of an error result was refused as its
    connection opened: the last URL requested, and the address check's refusal names it."""
    found = refusal(content)
    if found is None or found[0] != "blocked-address" or not hops or hops[-1][1] != url:
        return False
    return found[1].startswith((f"{url} is ", f"{url} resolves to "))


def _href(url: str) -> str | None:
    """The URL as web_fetch normalises it (the WHATWG reading, without its fragment)."""
    try:
        return str(parse_url(url, attributes=("href",))["href"]).split("#", 1)[0]
    except ValueError:
        return None


def _robots_url(href: str) -> str:
    parts = parse_url(href, attributes=("protocol", "host"))
    return f"{parts['protocol']}//{parts['host']}/robots.txt"


def _shown(value: object, limit: int = 200) -> str:
    """A value as web_fetch quotes it in a refusal (``repr``, cut to ``limit``)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 4] + "...'"
