"""Turn a fetched body into text a model can read: HTML, plain text, JSON and PDF.

HTML goes through trafilatura (the page's main text, without navigation,
scripts, styles or boilerplate), then selectolax when trafilatura finds nothing,
then a small standard-library reader when neither is installed (or one fails to
import: the next is used, and a warning says so once). PDFs go through pypdf
under a budget of pages, content bytes, operations and time that stops the work
itself (a thread cannot be killed). The heavy libraries come with the ``[fetch]``
extra and are imported only when a page needs them.
"""

from __future__ import annotations

import codecs
import html
import importlib
import importlib.util
import io
import logging
import re
import threading
import time
import warnings
from dataclasses import dataclass
from html.parser import HTMLParser
from types import ModuleType
from typing import Any, Literal

from agentloop_tools._errors import ExtractionError, PdfOverBudget

type Kind = Literal["html", "text", "json", "pdf"]

EXTRA_HINT = "install based-models-agentloop-tools[fetch]"
MAX_PDF_PAGES = 200
MAX_TEXT_CHARS = 5_000_000
# The PDF budget. pypdf parses a page's whole content stream before it reads a
# single operator (about a second per 300 KB of "() Tj"), so a page over
# MAX_PDF_PAGE_BYTES decoded is skipped unparsed; the operators read, across
# pages, stop at MAX_PDF_OPERATIONS; and the whole reading stops at
# MAX_PDF_SECONDS (or the fetch's deadline, if sooner), checked between pages and
# every 256 operators. A stream several pages share is parsed once.
MAX_PDF_PAGE_BYTES = 512_000
MAX_PDF_OPERATIONS = 1_000_000
MAX_PDF_SECONDS = 10.0

logger = logging.getLogger("agentloop_tools.web.fetch")

_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_JSON_TYPES = frozenset({"application/json", "application/ld+json", "text/json"})
_TEXT_APPLICATION = frozenset(
    {"application/xml", "application/javascript", "application/x-ndjson", "application/yaml"}
)
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
_TITLE_START = re.compile(r"<title(?=[\s/>])", re.I)
_TITLE_END = re.compile(r"</title\s*>", re.I)
# Codecs Python can name that are not a page's character set: they raise on any
# error handler (idna, punycode, undefined) or turn bytes into escapes.
_NOT_CHARSETS = frozenset(
    {"idna", "punycode", "undefined", "unicode-escape", "raw-unicode-escape", "utf-7"}
)
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


@dataclass(frozen=True, slots=True)
class Extracted:
    """What a body says.

    Attributes:
        title: the document's title, when it has one.
        text: the readable text (may be empty: the caller decides what that means).
        extractor: which reader produced it (``trafilatura``, ``selectolax``,
            ``basic``, ``pypdf``, ``text``).
        notes: what the reader left out (a PDF's pages past its budget).
    """

    title: str | None
    text: str
    extractor: str
    notes: tuple[str, ...] = ()


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
    if charset and _is_charset(charset):
        try:
            return body.decode(charset, errors="replace")
        except (LookupError, UnicodeError, ValueError, TypeError):
            pass  # an unknown or unusable charset name: UTF-8 rather than fail
    return body.decode("utf-8", errors="replace")


def _is_charset(name: str) -> bool:
    try:
        info = codecs.lookup(name)
    except (LookupError, ValueError, TypeError):
        return False
    return info.name not in _NOT_CHARSETS and getattr(info, "_is_text_encoding", True)


def extract(
    kind: Kind, body: bytes, content_type: str | None, *, deadline: float | None = None
) -> Extracted:
    """The title and text of ``body`` read as ``kind``.

    Args:
        deadline: a ``time.monotonic()`` value a PDF's reading stops at, if sooner
            than its own ``MAX_PDF_SECONDS``.

    Raises:
        ExtractionError: when a PDF cannot be read, or PDFs are not supported here.
    """
    if kind == "pdf":
        return extract_pdf(body, deadline=deadline)
    text = decode(body, charset_of(content_type), sniff_meta=kind == "html")
    if kind == "html":
        return extract_html(text)
    return Extracted(None, tidy(text), "text")


def extract_html(markup: str) -> Extracted:
    """The main text and title of an HTML page, by the best reader installed."""
    title = _title(markup)
    trafilatura = _module("trafilatura")
    if trafilatura is not None:
        text = _trafilatura(trafilatura, markup)
        if text:
            return Extracted(title, text, "trafilatura")
    lexbor = _module("selectolax.lexbor")
    if lexbor is not None:
        return Extracted(title, _selectolax(lexbor, markup), "selectolax")
    reader = _BasicReader()
    reader.feed(markup)
    reader.close()
    return Extracted(title, tidy("".join(reader.parts)), "basic")


def extract_pdf(body: bytes, *, deadline: float | None = None) -> Extracted:
    """Text of a PDF's first ``MAX_PDF_PAGES`` pages, capped at ``MAX_TEXT_CHARS``,
    read under the budget above (pages past it are left out, and a note says so).

    Raises:
        ExtractionError: pypdf is not installed, the file is broken or encrypted, or
            the budget ran out before any text was read.
    """
    pypdf = _module("pypdf")
    if pypdf is None:
        raise ExtractionError(f"reading PDFs needs pypdf: {EXTRA_HINT}")
    budget = _PdfBudget(deadline)
    # pypdf reports recoverable damage through logging and warnings; a damaged
    # file still yields what text it has, and the caller sees the outcome.
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    pages: list[str] = []
    skipped: list[int] = []
    stopped: str | None = None
    title: object = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reader = pypdf.PdfReader(io.BytesIO(body))
            if reader.is_encrypted and not reader.decrypt(""):
                raise ExtractionError("the PDF is encrypted with a password")
            stopped = _read_pages(reader, budget, pages, skipped)
            metadata = reader.metadata
            title = metadata.title if metadata is not None else None
    except ExtractionError:
        raise
    # Hostile bytes make pypdf raise anything: its own errors (a page tree deeper
    # than 100 is LimitReachedError), RecursionError on nested arrays, and more.
    except Exception as error:
        if not any(pages):
            raise ExtractionError(f"the PDF could not be read ({type(error).__name__})") from None
        stopped = f"the rest could not be read ({type(error).__name__})"
    text = tidy("\n\n".join(pages))[:MAX_TEXT_CHARS]
    if stopped is not None and not text:
        raise ExtractionError(f"no text was read before {stopped}")
    if skipped and not text:
        raise ExtractionError(
            f"no text was read: {len(skipped)} page(s) hold over {MAX_PDF_PAGE_BYTES:,} "
            "bytes of content each, more than is parsed"
        )
    notes = [f"note: PDF pages 1-{len(pages)} were read; {stopped}"] if stopped else []
    if skipped:
        notes.append(
            f"note: {len(skipped)} PDF page(s) skipped (first: page {skipped[0]}): over "
            f"{MAX_PDF_PAGE_BYTES:,} bytes of content each"
        )
    shown_title = title if isinstance(title, str) and title.strip() else None
    return Extracted(shown_title, text, "pypdf", tuple(notes))


class _PdfBudget:
    def __init__(self, deadline: float | None) -> None:
        own = time.monotonic() + MAX_PDF_SECONDS
        self.deadline = own if deadline is None else min(own, deadline)
        self.operations = 0

    def over(self) -> str | None:
        if self.operations >= MAX_PDF_OPERATIONS:
            return f"the budget of {MAX_PDF_OPERATIONS:,} operations was spent"
        if time.monotonic() > self.deadline:
            return "the time for reading it ran out"
        return None

    def visit(self, operator: Any, operands: Any, cm: Any, tm: Any) -> None:
        self.operations += 1
        if self.operations % 256 == 0 and self.over() is not None:
            raise PdfOverBudget


def _read_pages(
    reader: Any, budget: _PdfBudget, pages: list[str], skipped: list[int]
) -> str | None:
    """Fill ``pages`` (and ``skipped``, page numbers); why the reading stopped early, or None."""
    total = 0
    done: dict[object, str] = {}  # content stream reference -> its text
    for number, page in enumerate(reader.pages):
        if number >= MAX_PDF_PAGES:
            return f"the cap is {MAX_PDF_PAGES} pages"
        if (why := budget.over()) is not None:
            return why
        key = _contents_key(page)
        if key is not None and key in done:
            pages.append(done[key])
            continue
        contents = page.get_contents()
        size = len(contents.get_data()) if contents is not None else 0
        if size > MAX_PDF_PAGE_BYTES:
            page_text = ""
            skipped.append(number + 1)
        else:
            try:
                page_text = page.extract_text(visitor_operand_before=budget.visit) or ""
            except PdfOverBudget:
                return budget.over() or "the budget was spent"
        if key is not None:
            done[key] = page_text
        pages.append(page_text)
        total += len(page_text)
        if total >= MAX_TEXT_CHARS:
            return f"the cap is {MAX_TEXT_CHARS:,} characters"
    return None


def _contents_key(page: Any) -> object:
    """The indirect reference(s) of a page's content: equal for pages sharing a stream."""
    raw = page.get("/Contents")
    refs = raw if isinstance(raw, list) else [raw]
    key = []
    for ref in refs:
        number = getattr(ref, "idnum", None)
        if number is None:
            return None
        key.append((number, getattr(ref, "generation", 0)))
    return tuple(key) or None


def tidy(text: str) -> str:
    """Collapse runs of spaces and blank lines; strip each line's ends."""
    text = _SPACE_RUNS.sub(" ", text)
    text = "\n".join(line.strip() for line in text.split("\n"))
    return _BLANK_RUNS.sub("\n\n", text).strip()


def _has(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


_unusable: dict[str, str] = {}  # module -> why it failed to import (warned once)
_unusable_lock = threading.Lock()


def _module(name: str) -> ModuleType | None:
    """The reader module, or None when it is absent or fails to import.

    Installed but broken (trafilatura needs lxml.html.clean, which lxml 5.2 moved to
    lxml_html_clean) is reported once, then the next reader is used.
    """
    if name in _unusable:
        return None
    try:
        if not _has(name.split(".", 1)[0]):
            return None
        return importlib.import_module(name)
    except Exception as error:
        with _unusable_lock:
            first = name not in _unusable
            _unusable[name] = f"{type(error).__name__}: {error}"
        if first:
            logger.warning(
                "web_fetch: %s is installed but fails to import (%s); using the next reader. "
                "Reinstall it: pip install 'based-models-agentloop-tools[fetch]'",
                name,
                _unusable[name],
            )
        return None


def _title(markup: str) -> str | None:
    """The first ``<title>``'s text: one forward scan (a regex with a lazy group was
    quadratic on 200 KB of unclosed ``<title>`` tags)."""
    head = markup[:200_000]
    start = _TITLE_START.search(head)
    if start is None:
        return None
    opened = head.find(">", start.end())
    if opened < 0:
        return None
    end = _TITLE_END.search(head, opened + 1)
    if end is None:
        return None
    inner = head[opened + 1 : end.start()]
    title = " ".join(html.unescape(re.sub(r"<[^>]*>", "", inner)).split())
    return title or None


def _trafilatura(trafilatura: Any, markup: str) -> str:
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


def _selectolax(lexbor: Any, markup: str) -> str:
    tree = lexbor.LexborHTMLParser(markup)
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
