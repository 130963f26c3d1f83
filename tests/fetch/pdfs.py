"""A real, small PDF written by hand (text in a content stream, a correct xref table)."""

from __future__ import annotations


def tiny_pdf(lines: list[str], title: str = "A tiny report") -> bytes:
    """A one-page PDF whose text layer holds ``lines`` (ASCII, no parentheses)."""
    text = " ".join(f"({line}) Tj 0 -16 Td" for line in lines)
    stream = f"BT /F1 12 Tf 72 720 Td {text} ET".encode("ascii")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream",
        b"<< /Title (" + title.encode("ascii") + b") >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for offset in offsets:
        out += f"{offset:010d} 00000 n \n".encode()
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R /Info 6 0 R >>\n"
        f"startxref\n{xref}\n%%EOF\n"
    ).encode()
    return bytes(out)


def pdf_of(objects: list[bytes], *, root: int = 1) -> bytes:
    """A PDF of ``objects`` (numbered from 1) with a correct xref table."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for offset in offsets:
        out += f"{offset:010d} 00000 n \n".encode()
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root {root} 0 R >>\nstartxref\n{xref}\n%%EOF\n"
    ).encode()
    return bytes(out)


def stream(data: bytes, *, compress: bool = False) -> bytes:
    """A stream object's body (FlateDecode when ``compress``)."""
    import zlib

    if compress:
        data = zlib.compress(data, 9)
        return (
            b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(data) + data + b"\nendstream"
        )
    return b"<< /Length %d >>\nstream\n" % len(data) + data + b"\nendstream"


_PAGE = (
    b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] "
    b"/Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>"
)
_FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def shared_stream_pdf(pages: int, content: bytes) -> bytes:
    """``pages`` pages whose /Contents are one and the same (compressed) stream."""
    # 1 catalog, 2 pages, 3 font, 4 stream, 5.. pages
    kids = " ".join(f"{5 + n} 0 R" for n in range(pages)).encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % pages,
        _FONT,
        stream(content, compress=True),
    ]
    objects += [_PAGE % (2, 3, 4) for _ in range(pages)]
    return pdf_of(objects)


def deep_tree_pdf(depth: int) -> bytes:
    """One page under ``depth`` nested /Pages nodes."""
    # 1 catalog, 2 font, 3 stream, 4..4+depth-1 pages nodes, then the page
    first = 4
    objects = [
        b"<< /Type /Catalog /Pages 4 0 R >>",
        _FONT,
        stream(b"BT /F1 12 Tf 72 720 Td (Deep text) Tj ET"),
    ]
    for level in range(depth):
        number = first + level
        parent = b"" if level == 0 else b" /Parent %d 0 R" % (number - 1)
        objects.append(b"<< /Type /Pages /Kids [%d 0 R] /Count 1%s >>" % (number + 1, parent))
    objects.append(_PAGE % (first + depth - 1, 2, 3))
    return pdf_of(objects)


def one_page_pdf(content: bytes) -> bytes:
    """One page whose content stream is ``content``."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [5 0 R] /Count 1 >>",
        _FONT,
        stream(content, compress=True),
        _PAGE % (2, 3, 4),
    ]
    return pdf_of(objects)
