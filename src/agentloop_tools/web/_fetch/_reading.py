"""Reading the body of a final response: capped, typed, extracted, noted.

The last step of a direct fetch: the body is streamed under the byte cap and the
deadline (``_body.py``), its kind recognised and its text extracted (``_extract.py``),
and a page without readable text refused with a code that says why.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentloop_tools._errors import ExtractionError
from agentloop_tools.web._fetch._body import declared_length, read_capped
from agentloop_tools.web._fetch._codes import FetchRefusal
from agentloop_tools.web._fetch._extract import EXTRA_HINT, Extracted, extract, kind_of
from agentloop_tools.web._fetch._settings import Page, needs_javascript

if TYPE_CHECKING:
    import httpx


def read_page(
    response: httpx.Response, chain: tuple[str, ...], deadline: float, max_bytes: int
) -> Page:
    """The page in a final (2xx) response, or a ``FetchRefusal`` saying why there is none."""
    final = chain[-1]
    content_type = response.headers.get("content-type")
    declared = declared_length(response)
    chunks = read_capped(response, max_bytes + 1, deadline)
    first = next(chunks, b"")
    kind = kind_of(content_type, first)
    if kind is None:
        raise FetchRefusal(
            "unsupported-content",
            f"{final} is {content_type or 'of an unknown type'}, not a page with text",
            "web_fetch reads HTML, text, JSON and PDF; use another source",
        )
    if kind == "pdf" and declared is not None and declared > max_bytes:
        raise FetchRefusal(
            "too-large",
            f"{final} is a {declared:,}-byte PDF, over the {max_bytes:,}-byte limit",
            "a cut PDF cannot be read: use another source or a smaller document",
        )
    body = bytearray(first)
    for chunk in chunks:
        body += chunk
    truncated = len(body) > max_bytes
    del body[max_bytes:]
    try:
        extracted = extract(kind, bytes(body), content_type, deadline=deadline)
    except ExtractionError as error:
        if truncated:
            raise FetchRefusal(
                "too-large",
                f"{final} is larger than {max_bytes:,} bytes and its first part "
                f"could not be read ({error})",
                "use another source or a smaller document",
            ) from None
        raise FetchRefusal(
            "unsupported-content",
            f"{final} could not be read: {error}",
            "use another source" if "pypdf" not in str(error) else EXTRA_HINT,
        ) from None
    return _page(extracted, chain, kind, truncated, max_bytes)


def _page(
    extracted: Extracted, chain: tuple[str, ...], kind: str, cut: bool, max_bytes: int
) -> Page:
    final = chain[-1]
    text = extracted.text
    if not text.strip() or needs_javascript(text):
        if cut:
            raise FetchRefusal(
                "too-large",
                f"{final} is larger than {max_bytes:,} bytes and its first part "
                "has no readable text",
                "use another source",
            )
        raise FetchRefusal(
            "no-text",
            f"{final} has no readable text; the page may need JavaScript to show it",
            "use another source, such as a static or text version of the page",
        )
    notes: list[str] = list(extracted.notes)
    if cut:
        notes.append(
            f"note: the page is larger than {max_bytes:,} bytes; only its beginning was read"
        )
    if kind == "html" and extracted.extractor == "basic":
        notes.append(f"note: plain HTML reading; {EXTRA_HINT} for main-text extraction and PDFs")
    return Page(chain, extracted.title, text, tuple(notes))
