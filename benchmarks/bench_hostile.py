"""What hostile bytes cost web_fetch's extractors now that they are bounded (issue 17).

Run by hand (numbers go in the issue's closing note, not in unit tests; the unit tests
in tests/{fetch,search,net,text}/test_hostile_*.py only catch hangs and blow-ups):

    .venv/bin/python benchmarks/bench_hostile.py

Before the fixes: 200 KB of repeated ``<title>`` held the GIL 15-26 s; 40 pages sharing
one 1 MB ``() Tj`` stream took ~50 s of CPU.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable
from pathlib import Path

from agentloop_tools._errors import ExtractionError
from agentloop_tools.web._fetch._extract import _title, extract_pdf

# The hostile PDFs are built by the tests' own builders.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
pdfs = __import__("tests.fetch.pdfs", fromlist=["pdf_of"])


def cpu(function: Callable[[], object]) -> float:
    began = time.thread_time()
    with contextlib.suppress(ExtractionError):
        function()
    return time.thread_time() - began


def distinct_pages(pages: int, operators: int) -> bytes:
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    kids = []
    for number in range(pages):
        content = b"BT /F1 12 Tf " + b"(w%d) Tj " % number * operators + b"ET"
        objects.append(pdfs.stream(content, compress=True))
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 3 0 R >> >> "
            b"/Contents %d 0 R >>" % len(objects)
        )
        kids.append(b"%d 0 R" % len(objects))
    objects[1] = b"<< /Type /Pages /Kids [" + b" ".join(kids) + b"] /Count %d >>" % pages
    return bytes(pdfs.pdf_of(objects))


def main() -> None:
    titles = "<title>" * 30_000
    print(
        f"title scan, 210 KB of unclosed <title>: {cpu(lambda: _title(titles)) * 1000:.2f} ms CPU"
    )
    shared = pdfs.shared_stream_pdf(40, b"BT /F1 12 Tf " + b"() Tj " * 170_000 + b" ET")
    print(f"PDF, 40 pages sharing a 1 MB stream: {cpu(lambda: extract_pdf(shared)):.2f} s CPU")
    nested = pdfs.one_page_pdf(b"BT " + b"[" * 5_000 + b"]" * 5_000 + b" TJ ET")
    print(f"PDF, nested arrays: {cpu(lambda: extract_pdf(nested)):.2f} s CPU")
    many = distinct_pages(40, 60_000)
    print(
        f"PDF, 40 distinct pages of 60,000 operators (operation and time budget): "
        f"{cpu(lambda: extract_pdf(many)):.2f} s CPU"
    )


if __name__ == "__main__":
    main()
