"""web_fetch: a client-side tool that reads one web page for an agent, safely.

For the URL the model gives, and again for every redirect hop, in this order:

1. parse it as a browser does (the policy's own WHATWG parser) and refuse bad
   URLs, other schemes, userinfo, over-long URLs and single-label hosts;
2. ask the domain policy, before the cache, DNS, robots.txt or any request;
3. resolve the host once and refuse if ANY address is not public (with our
   transport, when its first connection is opened, so a replayed request never
   asks DNS; with the caller's ``http_client``, before the request);
4. connect to an address that was checked (``_fetch_transport``), never to the name;
5. follow at most five redirects by hand, each hop through 1-4 again.

The body is streamed under a byte cap and a total deadline, turned into text by
``_extract``, cached for ``cache_ttl`` seconds and served in pages of
``max_chars`` characters.

This module is the tool's face: its options, schema and description. The steps are
the engine's (``_fetcher.py`` and the modules it names), imported when a tool is
built, so ``import agentloop_tools.web`` loads no transport, cache or extraction
library.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentloop import ToolSpec, tool

from agentloop_tools import __version__
from agentloop_tools.web._fetch._settings import (
    DEFAULT_CACHE_TTL,
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_CHARS,
    DEFAULT_TIMEOUT,
    FetchSettings,
    Resolver,
)
from agentloop_tools.web._fetch._via import page_api
from agentloop_tools.web._policy._policy import DomainPolicy, robots_policy
from agentloop_tools.web._search._describe import fetch_description
from agentloop_tools.web._tool_options import non_negative_seconds, positive_int, positive_seconds

if TYPE_CHECKING:
    # httpx, cachetools and the extractors load when a tool is built (build_fetcher).
    import httpx

    from agentloop_tools.web._fetch._fetcher import Fetcher
    from agentloop_tools.web._search._backends_api import PageApi
    from agentloop_tools.web._search._backends_builtin import ExaBackend, TavilyBackend

DEFAULT_USER_AGENT = (
    f"agentloop-tools-web_fetch/{__version__} (+https://github.com/based-models/agentloop-tools)"
)

_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "url": {
            "type": "string",
            "description": "The full http(s) URL of the page to read.",
        },
        "start": {
            "type": ["integer", "null"],
            "description": (
                "Character offset to continue a truncated page from (the result says "
                "which); null for the beginning."
            ),
        },
    },
    "required": ["url", "start"],
    "additionalProperties": False,
}
_DESCRIPTION = (
    "Read one web page (HTML, plain text, JSON or PDF) and return its title, final URL "
    "and main text. Long pages come in parts: call again with the same url and the "
    "start offset the result gives. Errors start with a [code] and say what to do."
)


def web_fetch(
    *,
    policy: DomainPolicy | None = None,
    name: str = "web_fetch",
    max_chars: int = DEFAULT_MAX_CHARS,
    max_bytes: int = DEFAULT_MAX_BYTES,
    timeout: float = DEFAULT_TIMEOUT,
    cache_ttl: float = DEFAULT_CACHE_TTL,
    respect_robots: bool = False,
    user_agent: str = DEFAULT_USER_AGENT,
    allow_private_networks: bool = False,
    http_client: httpx.Client | None = None,
    resolver: Resolver | None = None,
    via: PageApi | TavilyBackend | ExaBackend | None = None,
) -> ToolSpec:
    """A local agentloop tool that reads a web page: policy first, SSRF-proof, bounded, cached.

    Args:
        policy: the domain policy every URL and redirect hop must pass; None for none.
        name: the tool's name as the model sees it.
        max_chars: characters of text per result; longer pages are served in parts.
        max_bytes: most bytes of body ever read (after decompression).
        timeout: seconds the whole fetch may take, redirects and robots.txt included.
        cache_ttl: seconds a fetched page is served again without a request (0: no cache).
        respect_robots: fetch the site's robots.txt and obey it for ``user_agent``.
        user_agent: the User-Agent header, and the name robots.txt rules are read for.
        allow_private_networks: connect to loopback, private and link-local addresses
            too (for intranet tools); never the default.
        http_client: an ``httpx.Client`` to send requests through (a test seam, or a
            proxy). The URL, policy, address and redirect checks still run here; only
            the connection is the client's.
        resolver: host name to IP address strings (default: the system resolver).
        via: read pages through a search API instead of directly: the same backend
            object ``web_search`` takes, ``backends.tavily(key)`` (Tavily extract) or
            ``backends.exa(key)`` (Exa contents), or your own :class:`PageApi`. The
            URL and policy checks run before any request, and the URL the provider
            read is checked as a redirect hop; ``http_client`` then sends to the
            provider's API. Not with ``respect_robots`` or ``resolver`` (the provider
            connects, not us).

    Returns:
        An ``agentloop.ToolSpec`` taking ``url`` and ``start``.

    Raises:
        ValueError: a limit that is not a positive number, an empty ``name`` or a
            ``user_agent`` that cannot be a header.
        TypeError: an option of the wrong type (``policy``, ``http_client``, ``resolver``).
    """
    fetcher = build_fetcher(
        policy=policy,
        name=name,
        max_chars=max_chars,
        max_bytes=max_bytes,
        timeout=timeout,
        cache_ttl=cache_ttl,
        respect_robots=respect_robots,
        user_agent=user_agent,
        allow_private_networks=allow_private_networks,
        http_client=http_client,
        resolver=resolver,
        via=via,
    )
    description = fetch_description(policy=policy, via=fetcher.via_name)

    def fetch(url: str, start: int | None = None) -> str:
        return fetcher.fetch(url, start)

    fetch.__doc__ = description
    # agentloop abandons a call past timeout_seconds but cannot stop its thread; the
    # fetch stops itself at ``timeout``, so the loop's bound is only a backstop.
    return tool(_PARAMETERS, name=name, description=description, timeout_seconds=timeout + 15)(
        fetch
    )


def build_fetcher(
    *,
    policy: DomainPolicy | None,
    name: str,
    max_chars: int,
    max_bytes: int,
    timeout: float,
    cache_ttl: float,
    respect_robots: bool,
    user_agent: str,
    allow_private_networks: bool,
    http_client: httpx.Client | None,
    resolver: Resolver | None,
    via: object,
) -> Fetcher:
    """Every option checked, and the engine ``web_fetch`` (and ``fetch()``) runs on."""
    _check_options(policy, name, user_agent, http_client, resolver)
    api = page_api(via) if via is not None else None
    if api is not None and respect_robots:
        raise ValueError(
            "web_fetch(via=..., respect_robots=True) cannot obey robots.txt: the provider "
            "reads the page, not us. Leave respect_robots out with via=, or fetch directly."
        )
    if api is not None and resolver is not None:
        raise ValueError(
            "web_fetch(via=..., resolver=...): the provider resolves and connects, so a "
            "resolver would never be asked. Leave resolver out with via=."
        )
    from agentloop_tools.web._fetch._fetcher import Fetcher

    return Fetcher(
        FetchSettings(
            policy=policy,
            robots_policy=robots_policy(policy) if policy is not None else None,
            max_chars=positive_int(max_chars, "max_chars"),
            max_bytes=positive_int(max_bytes, "max_bytes"),
            timeout=positive_seconds(timeout, "timeout"),
            respect_robots=respect_robots,
            user_agent=user_agent,
            allow_private=allow_private_networks,
            client=http_client,
            resolver=resolver,
            name=name,
        ),
        cache_ttl=non_negative_seconds(cache_ttl, "cache_ttl"),
        via=api,
    )


def _check_options(
    policy: object, name: object, user_agent: object, http_client: object, resolver: object
) -> None:
    if policy is not None and not isinstance(policy, DomainPolicy):
        raise TypeError(
            f"policy must be a DomainPolicy (DomainPolicy.allow([...]) or .block([...])) "
            f"or None, got {type(policy).__name__}."
        )
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"name must be a non-empty tool name, got {name!r}.")
    if (
        not isinstance(user_agent, str)
        or not user_agent.strip()
        or any(ch in user_agent for ch in "\r\n\x00")
    ):
        raise ValueError(
            f"user_agent must be a non-empty one-line header value, got {user_agent!r}."
        )
    import httpx

    if http_client is not None and not isinstance(http_client, httpx.Client):
        raise TypeError(
            "http_client must be an httpx.Client (a synchronous client: tools run in "
            f"threads), got {type(http_client).__name__}."
        )
    if resolver is not None and not callable(resolver):
        raise TypeError(
            "resolver must be a callable taking a host name and returning IP address "
            f"strings, got {type(resolver).__name__}."
        )
