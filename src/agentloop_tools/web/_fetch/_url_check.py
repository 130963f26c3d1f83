"""Steps 1 and 2 of web_fetch for one URL: read it as a browser does, then ask the policy.

The reading is ada's (the WHATWG parser the domain policy uses), so every form a
browser accepts for a host (``0x7f.1``, ``2130706433``, ``[::ffff:127.0.0.1]``)
reaches the address check as the address it means.
"""

from __future__ import annotations

from ada_url import HostType, parse_url

from agentloop_tools.web._domains._url import MAX_URL_LENGTH
from agentloop_tools.web._fetch._codes import FetchRefusal, shown
from agentloop_tools.web._policy._policy import DomainPolicy

_ATTRIBUTES = ("href", "protocol", "username", "password", "hostname", "host_type")


def check_url(url: object, policy: DomainPolicy | None, *, hop: str | None) -> str:
    """Steps 1 and 2 for one URL: its normalised form, or a ``FetchRefusal``.

    Args:
        url: what the model gave, or a redirect target.
        policy: the domain policy, or None.
        hop: the redirect target when checking a hop (names it in the refusal).
    """
    what = f"the redirect to {shown(url)}" if hop is not None else shown(url)
    if not isinstance(url, str) or not url.strip():
        raise FetchRefusal(
            "invalid-url", f"{what} is not a URL", "pass a full http(s) URL as a string"
        )
    if len(url) > MAX_URL_LENGTH:
        raise FetchRefusal(
            "url-too-long",
            f"{shown(url, 80)} is {len(url)} characters long, over {MAX_URL_LENGTH}",
            "use a shorter URL (drop tracking parameters), or fetch the page it links from",
        )
    try:
        parts = parse_url(url, attributes=_ATTRIBUTES)
    except ValueError:
        raise FetchRefusal(
            "invalid-url",
            f"{what} is not a valid URL",
            "pass a full URL starting with https:// (or http://)",
        ) from None
    # A fragment is never sent to the server: drop it, so it cannot split the cache.
    href = str(parts["href"]).split("#", 1)[0]
    scheme = str(parts["protocol"]).rstrip(":")
    if scheme not in ("http", "https"):
        raise FetchRefusal(
            "unsupported-scheme",
            f"{what} uses the {scheme}: scheme",
            "only http:// and https:// pages can be fetched",
        )
    if parts["username"] or parts["password"] or _raw_userinfo(url):
        raise FetchRefusal(
            "userinfo-not-allowed",
            f"{what} carries a user name or password before the host",
            "remove the 'user:password@' part; credentials are never sent",
        )
    if len(href) > MAX_URL_LENGTH:
        raise FetchRefusal(
            "url-too-long",
            f"{shown(url, 80)} is {len(href)} characters long once normalised, "
            f"over {MAX_URL_LENGTH}",
            "use a shorter URL",
        )
    hostname = str(parts["hostname"])
    if parts["host_type"] == HostType.DEFAULT and "." not in hostname.strip("."):
        raise FetchRefusal(
            "hostname-too-shallow",
            f"{what} names the single-label host {hostname!r} (a local name, not a site)",
            "use the site's full domain name, such as example.com",
        )
    if policy is not None and not policy.permits(href):
        subject = f"the redirect to {href}" if hop is not None else href
        raise FetchRefusal(
            "blocked-by-policy",
            f"{subject} is not permitted by the domain policy ({policy!r})",
            "do not retry it; pick a source on a permitted domain",
        )
    return href


def _raw_userinfo(url: str) -> bool:
    """Whether the authority as typed holds an ``@`` (even an empty ``http://@host``)."""
    rest = url.strip().split(":", 1)[-1].lstrip("/\\")
    for stop in "/\\?#":
        rest = rest.split(stop, 1)[0]
    return "@" in rest
