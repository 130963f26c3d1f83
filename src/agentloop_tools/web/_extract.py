"""Turn a fetched body into text a model can read: HTML, plain text, JSON and PDF.

HTML goes through trafilatura (the page's main text, without navigation,
scripts, styles or boilerplate), then selectolax when trafilatura finds nothing,
then a small standard-library reader when neither is installed. PDFs go through
pypdf with a page and a character cap. The heavy libraries come with the
``[fetch]`` extra and are imported only when a page needs them.
"""

from __future__ import annotations

import html
import importlib.util
import io
import logging
import re
import warnings
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Literal

type Kind = Literal["html", "text", "json", "pdf"]

EXTRA_HINT = "install based-models-agentloop-tools[fetch]"
MAX_PDF_PAGES = 200
MAX_TEXT_CHARS = 5_000_000

_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_JSON_TYPES = frozenset({"application/json", "application/ld+json", "text/json"})
_TEXT_APPLICATION = frozenset(
    {"application/xml", "application/javascript", "application/x-ndjson", "application/yaml"}
)
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
_TITLE = re.compile(r"<title[^>]*>(.*?)</title\s*>", re.I | re.S)
_BLANK_RUNS = re.compile(r"\n[ \t\r\f\v]*(?:\n[ \t\r\f\v]*)+")
_SPACE_RUNS = re.compile(r"[ \t\r\f\v\u00a0]+")
# Tags whose content is never page text, or is the page's chrome rather than its body.
_SKIP = ("script", "style", "noscript", "template", "svg", "nav", "header", "footer", "aside")
_SKIP_MORE = (*_SKIP, "form", "iframe", "button", "select", "canvas", "object", "title")
# What trafilatura is told to drop before it looks for the main text: on a short
# page it would otherwise keep the navigation. Headers and footers inside an
# article are its own (title, byline, notes).
_PRUNE = [
    "//nav",
    "//aside",
    "//*[@role='navigation']",
    "//header[not(ancestor::article)]",
    "//footer[not(ancestor::article)]",
    "//noscript",
    "//template",
    "//svg",
    "//form",
]
_BLOCK = frozenset(
    {"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "section", "article"}
    | {"pre", "blockquote", "table", "ul", "ol", "dd", "dt", "hr", "main", "td", "th"}
)


class ExtractionError(Exception):
    """The body could not be read as its type (a broken or encrypted PDF)."""


@dataclass(frozen=True, slots=True)
class Extracted:
    """What a body says.

    Attributes:
        title: the document's title, when it has one.
        text: the readable text (may be empty: the caller decides what that means).
        extractor: which reader produced it (``trafilatura``, ``selectolax``,
            ``basic``, ``pypdf``, ``text``).
    """

    title: str | None
    text: str
    extractor: str


def kind_of(content_type: str | None, head: bytes) -> Kind | None:
    """The reader for a response, from its media type, else from its first bytes.

    Returns None for anything we do not read (images, archives, video, ...).
    """
    media = (content_type or "").split(";", 1)[0].strip().lower()
    if media in _HTML_TYPES:
        return "html"
    if media == "application/pdf":
        return "pdf"
    if media in _JSON_TYPES or media.endswith("+json"):
        return "json"
    if media.startswith("text/") or media in _TEXT_APPLICATION or media.endswith("+xml"):
        return "text"
    if media and media not in ("application/octet-stream", "binary/octet-stream"):
        return None
    # No type, or a generic one: look at the bytes, as a browser sniffs.
    start = head.lstrip()[:512].lower()
    if start.startswith(b"%pdf-"):
        return "pdf"
    if start.startswith((b"<!doctype html", b"<html", b"<head", b"<body")):
        return "html"
    if b"\x00" in head[:1024]:
        return None
    try:
        head[:1024].decode("utf-8")
    except UnicodeDecodeError as error:
        # A multi-byte character cut by the 1024-byte slice is still text.
        if error.start < 1020:
            return None
    return "text"


def charset_of(content_type: str | None) -> str | None:
    """The ``charset`` parameter of a Content-Type header, if any."""
    for parameter in (content_type or "").split(";")[1:]:
        key, _, value = parameter.partition("=")
        if key.strip().lower() == "charset":
            return value.strip().strip("\"'") or None
    return None


def decode(body: bytes, charset: str | None, *, sniff_meta: bool = False) -> str:
    """Bytes to text: the declared charset, a ``<meta charset>``, a BOM, else UTF-8."""
    if body.startswith(b"\xef\xbb\xbf"):
        return body[3:].decode("utf-8", errors="replace")
    if charset is None and sniff_meta:
        match = _META_CHARSET.search(body[:4096])
        if match is not None:
            charset = match.group(1).decode("ascii")
    if charset:
        try:
            return body.decode(charset, errors="replace")
        except LookupError:
            pass  # an unknown charset name: fall back to UTF-8 rather than fail
    return body.decode("utf-8", errors="replace")


def extract(kind: Kind, body: bytes, content_type: str | None) -> Extracted:
    """The title and text of ``body`` read as ``kind``.

    Raises:
        ExtractionError: when a PDF cannot be read, or PDFs are not supported here.
    """
    if kind == "pdf":
        return extract_pdf(body)
    text = decode(body, charset_of(content_type), sniff_meta=kind == "html")
    if kind == "html":
        return extract_html(text)
    return Extracted(None, tidy(text), "text")


def extract_html(markup: str) -> Extracted:
    """The main text and title of an HTML page, by the best reader installed."""
    title = _title(markup)
    if _has("trafilatura"):
        text = _trafilatura(markup)
        if text:
            return Extracted(title, text, "trafilatura")
    if _has("selectolax"):
        return Extracted(title, _selectolax(markup), "selectolax")
    reader = _BasicReader()
    reader.feed(markup)
    reader.close()
    return Extracted(title, tidy("".join(reader.parts)), "basic")


def extract_pdf(body: bytes) -> Extracted:
    """Text of a PDF's first ``MAX_PDF_PAGES`` pages, capped at ``MAX_TEXT_CHARS``.

    Raises:
        ExtractionError: pypdf is not installed, or the file is broken or encrypted.
    """
    if not _has("pypdf"):
        raise ExtractionError(f"reading PDFs needs pypdf: {EXTRA_HINT}")
    import pypdf
    from pypdf.errors import PdfReadError

    # pypdf reports recoverable damage through logging and warnings; a damaged
    # file still yields what text it has, and the caller sees the outcome.
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reader = pypdf.PdfReader(io.BytesIO(body))
            if reader.is_encrypted and not reader.decrypt(""):
                raise ExtractionError("the PDF is encrypted with a password")
            pages: list[str] = []
            total = 0
            for page in reader.pages[:MAX_PDF_PAGES]:
                page_text = page.extract_text() or ""
                pages.append(page_text)
                total += len(page_text)
                if total >= MAX_TEXT_CHARS:
                    break
            metadata = reader.metadata
            title = metadata.title if metadata is not None else None
    except (PdfReadError, ValueError, KeyError, TypeError, IndexError, OSError) as error:
        raise ExtractionError(f"the PDF could not be read ({type(error).__name__})") from error
    text = tidy("\n\n".join(pages))[:MAX_TEXT_CHARS]
    return Extracted(title if isinstance(title, str) and title.strip() else None, text, "pypdf")


def tidy(text: str) -> str:
    """Collapse runs of spaces and blank lines; strip each line's ends."""
    text = _SPACE_RUNS.sub(" ", text)
    text = "\n".join(line.strip() for line in text.split("\n"))
    return _BLANK_RUNS.sub("\n\n", text).strip()


def _has(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def _title(markup: str) -> str | None:
    match = _TITLE.search(markup, 0, 200_000)
    if match is None:
        return None
    title = " ".join(html.unescape(re.sub(r"<[^>]*>", "", match.group(1))).split())
    return title or None


def _trafilatura(markup: str) -> str:
    import trafilatura

    # fast=True skips trafilatura's second-opinion extractors: the selectolax
    # fallback below takes that role at a fraction of the cost.
    text = trafilatura.extract(
        markup,
        fast=True,
        include_comments=False,
        include_tables=True,
        output_format="txt",
        prune_xpath=_PRUNE,
    )
    # trafilatura already joins and trims lines: tidying again would cost ~10 ms a page.
    return text.strip() if text else ""


def _selectolax(markup: str) -> str:
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(markup)
    tree.strip_tags(list(_SKIP_MORE))
    for node in tree.css("[role=navigation]"):
        node.decompose()
    root = tree.body or tree.root
    if root is None:
        return ""
    return tidy(root.text(separator="\n"))


class _BasicReader(HTMLParser):
    """Text outside scripts, styles and page chrome, with line breaks at blocks."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        # The element being skipped and how deep its own tag is nested inside itself.
        self._skipping: str | None = None
        self._depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._skipping is not None:
            if tag == self._skipping:
                self._depth += 1
        elif tag in _SKIP_MORE or ("role", "navigation") in attrs:
            self._skipping, self._depth = tag, 1
        elif tag in _BLOCK:
            self.parts.append("\n")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._skipping is None and tag in _BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if self._skipping is not None:
            if tag == self._skipping:
                self._depth -= 1
                if self._depth == 0:
                    self._skipping = None
        elif tag in _BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._skipping is None:
            self.parts.append(data)
