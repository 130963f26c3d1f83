"""What web_search writes into a transcript, and how to read its links back.

The renderer (``_search/_render.py``) writes the results under ``MARKER``, one
numbered markdown link per hit (``N. [title](url)``, backslashes and brackets escaped
in the title); the transcript readers take the links back from that text alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

MARKER = "Web search results (agentloop-tools)"
_LINK_LINE = re.compile(r"\d+\. \[(?P<title>(?:\\.|[^\\\]])*)\]\((?P<url>\S+)\)")
_UNESCAPE = re.compile(r"\\(.)")


def read_rendered(content: str) -> Iterator[tuple[str, str]]:
    """``(url, title)`` of every link in text :func:`render_results` wrote; nothing otherwise."""
    if not content.startswith(MARKER + "\n"):
        return
    for line in content.splitlines():
        match = _LINK_LINE.fullmatch(line)
        if match is not None:
            yield match["url"], _UNESCAPE.sub(r"\1", match["title"])
