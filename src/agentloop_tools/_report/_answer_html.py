"""An answer as its reader sees it, for the HTML report: markdown rendered, then sanitized.

markdown-it-py renders the answer (CommonMark with GFM tables, strikethrough and
linkify, raw HTML passed on as a chat UI would); nh3 (the Ammonia sanitizer) then
keeps only inert formatting tags: no script, no style, no event handler, no image or
frame, no URL scheme but http(s) and mailto, so opening the report loads nothing from
anywhere. Images become links to their source, labelled ``[image: alt]``.

Each link left is then marked with what the evidence says of it (consulted,
violating, not consulted), in words as well as colour. A rendered link the audit does
not read as a link (a bare host a fuzzy linkifier picked up, a relative link) is shown
as plain text: the report marks only what the audit judged.

Both libraries come with the ``testing`` extra; without them the report shows the raw
text alone.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from functools import cache
from typing import Any

from agentloop_tools.web._domains._identity import page_key

_ANCHOR = re.compile(r"<a\s([^<>]*)>(.*?)</a>", re.DOTALL)
_HREF = re.compile(r'href="([^"]*)"')
_TAGS = frozenset(
    [
        "a",
        "b",
        "blockquote",
        "br",
        "code",
        "del",
        "em",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "hr",
        "i",
        "li",
        "ol",
        "p",
        "pre",
        "s",
        "strong",
        "sub",
        "sup",
        "table",
        "tbody",
        "td",
        "th",
        "thead",
        "tr",
        "ul",
    ]
)


def unavailable() -> str | None:
    """Why answers cannot be rendered here, for the page to say; None when they can."""
    import importlib

    for name in ("markdown_it", "nh3"):
        try:
            importlib.import_module(name)
        except ModuleNotFoundError:
            return (
                "Install the testing extra (markdown-it-py, nh3) to see answers rendered "
                "as markdown."
            )
        except ImportError as error:  # installed, but it would not load (a broken build)
            reason = " ".join(str(error).split())[:200]
            return (
                f"Answers are shown as raw text: {name} is installed but did not load ({reason})."
            )
    return None


@cache
def _renderer() -> Any:
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": True, "linkify": True, "typographer": False})
    md.enable(["table", "strikethrough", "linkify"])

    def image(renderer: Any, tokens: Any, index: int, options: Any, env: Any) -> str:
        token = tokens[index]
        source = str(token.attrGet("src") or "")
        alt = "".join(child.content for child in token.children or ())
        label = html.escape(f"[image: {alt}]" if alt else "[image]")
        return f'<a href="{html.escape(source, quote=True)}">{label}</a>'

    md.add_render_rule("image", image)
    return md


def render(text: str, links: Sequence[dict[str, Any]]) -> str:
    """``text`` rendered and sanitized, each link marked from ``links`` (the turn's
    entries: ``url``, ``consulted``, ``violation``, ``verdict``)."""
    import nh3

    rendered = _renderer().render(text)
    clean: str = nh3.clean(
        rendered,
        tags=set(_TAGS),
        attributes={"a": {"href"}, "td": {"align"}, "th": {"align"}},
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
        strip_comments=True,
    )
    unused = list(links)
    by_key: dict[str, list[dict[str, Any]]] = {}
    for link in links:
        by_key.setdefault(page_key(link["url"]), []).append(link)

    def mark(match: re.Match[str]) -> str:
        href = _HREF.search(match.group(1))
        inner = match.group(2)
        url = html.unescape(href.group(1)) if href else ""
        candidates = by_key.get(page_key(url), []) if url else []
        if not candidates:
            return f"<span class='link-unjudged'>{inner}</span>"
        link = next((item for item in candidates if item in unused), candidates[0])
        if link in unused:
            unused.remove(link)
        title = html.escape(link["url"], quote=True)
        attributes = f'href="{href.group(1)}" rel="noopener noreferrer nofollow"' if href else ""
        if link.get("violation"):
            kind, label = "link-violating", f"[VIOLATION: {html.escape(link['verdict'] or '')}]"
            flag = f"<span class='flag'>{label}</span>"
        elif link.get("consulted"):
            flag = "<sup class='ok'>[consulted]</sup>"
            kind = "link-consulted"
        else:
            flag = "<sup class='unconsulted'>[not consulted]</sup>"
            kind = "link-unconsulted"
        return f"<a {attributes} class='{kind}' title='{title}'>{inner}</a>{flag}"

    return _ANCHOR.sub(mark, clean)
