"""Which hits of one response the model sees: the URL shown, the policies, the date.

In order, per hit: a URL that can be shown as a link (``shown_url``), once; the
tool's policy; the model's narrowing; the host shown is the host given; ``as_of``.
The policies judge the URL as the backend gave it, and the URL shown when it
differs: a hit passes only if both pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from agentloop_tools.web._policy._policy import DomainPolicy
from agentloop_tools.web._search._dates import published_on
from agentloop_tools.web._search._options import Undated
from agentloop_tools.web._search._render import SearchHit, shown_url
from agentloop_tools.web._text._destinations import same_host


@dataclass(frozen=True, slots=True)
class Filtered:
    """The hits shown, and how many of each kind were not.

    Attributes:
        shown: the hits the model reads, their URLs as shown (and checked).
        withheld: refused by the tool's domain policy.
        unusable: no URL that can be shown as a link (not http(s), a host no DNS
            name can have, a link that would open another host than the one given).
        narrowed_out: permitted by the policy, outside the model's narrowing.
        after: published after ``as_of``.
        undated: without a readable date, dropped under ``as_of`` with ``undated="drop"``.
    """

    shown: tuple[SearchHit, ...]
    withheld: int = 0
    unusable: int = 0
    narrowed_out: int = 0
    after: int = 0
    undated: int = 0


def filter_hits(
    hits: Sequence[object],
    wanted: int,
    policy: DomainPolicy | None,
    *,
    narrowing: DomainPolicy | None = None,
    as_of: date | None = None,
    undated: Undated = "drop",
) -> Filtered:
    shown: list[SearchHit] = []
    seen: set[str] = set()
    withheld = unusable = narrowed_out = after = undated_out = 0
    for hit in hits:
        if len(shown) >= wanted:
            break
        if not isinstance(hit, SearchHit):
            unusable += 1
            continue
        url = shown_url(hit.url)
        if url is None:
            unusable += 1
            continue
        if url in seen:
            continue
        if policy is not None and not _permits(policy, hit.url, url):
            withheld += 1
            continue
        if narrowing is not None and not _permits(narrowing, hit.url, url):
            narrowed_out += 1
            continue
        if not same_host(hit.url, url):
            # Encoded as one link, it would open another site than the one judged.
            unusable += 1
            continue
        if as_of is not None:
            published = published_on(hit.published)
            if published is None:
                if undated == "drop":
                    undated_out += 1
                    continue
            elif published > as_of:
                after += 1
                continue
        seen.add(url)
        shown.append(
            hit if url == hit.url else SearchHit(hit.title, url, hit.snippet, hit.published)
        )
    return Filtered(tuple(shown), withheld, unusable, narrowed_out, after, undated_out)


def _permits(policy: DomainPolicy, given: str, shown: str) -> bool:
    # The given URL is what a reader of the backend's answer opens; the shown one
    # is what the model opens. Neither may be refused.
    return policy.permits(given) and (shown == given or policy.permits(shown))
