"""The text our ``web_search`` shows the model, read back: a fixed marker line, then links.

The renderer (``_search/_render.py``) writes it; the transcript readers and the audit
read the pages it showed from it, whatever name the tool was given::

    Web search results (agentloop-tools)
    2 results; 1 result withheld by the domain policy.

    Links:
    1. [What's New In Python 3.13](https://docs.python.org/3/whatsnew/3.13.html)

The format is documented in docs/client-search.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

MARKER = "Web search results (agentloop-tools)"
_LINK_LINE = re.compile(r"\d+\. \[(?P<title>(?:\\.|[^\\\]])*)\]\((?P<url>\S+)\)")
_UNESCAPE = re.compile(r"\\(.)")


def read_rendered(content: str) -> Iterator[tuple[str, str]]:
    """``(url, title)`` of every link in text the renderer wrote; nothing otherwise."""
    if not content.startswith(MARKER + "\n"):
        return
    for line in content.splitlines():
        match = _LINK_LINE.fullmatch(line)
        if match is not None:
            yield match["url"], _UNESCAPE.sub(r"\1", match["title"])
