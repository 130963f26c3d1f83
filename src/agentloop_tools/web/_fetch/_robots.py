"""robots.txt for web_fetch: where it lives and what it permits, read by protego.

Fetching it is the tool's job (through the same checks as any page); this
module only names the file and reads it.
"""

from __future__ import annotations

from ada_url import URL
from protego import Protego


def robots_url(href: str) -> str:
    """The robots.txt that governs ``href`` (its origin's ``/robots.txt``)."""
    url = URL(href)
    return f"{url.protocol}//{url.host}/robots.txt"


def product_token(user_agent: str) -> str:
    """The part of a User-Agent a robots.txt group names (``MyBot`` of ``MyBot/1.0 (+url)``)."""
    token = user_agent.strip().split("/", 1)[0].split(" ", 1)[0]
    return token or user_agent


class RobotsRules:
    """The rules of one robots.txt, or the absence of one (everything permitted)."""

    __slots__ = ("_parsed",)

    def __init__(self, text: str | None) -> None:
        self._parsed = Protego.parse(text) if text else None

    def permits(self, href: str, user_agent: str) -> bool:
        """Whether ``user_agent`` may fetch ``href`` under these rules."""
        if self._parsed is None:
            return True
        return bool(self._parsed.can_fetch(href, product_token(user_agent)))
