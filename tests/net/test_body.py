"""The one body reader (web/_net/_body.py): a cap, a deadline and two modes, on real zlib."""

from __future__ import annotations

import time
import zlib
from collections.abc import Iterator

import httpx
import pytest

from agentloop_tools._errors import ResponseTooLarge
from agentloop_tools.web._net._body import (
    ACCEPT_ENCODING,
    ENCODINGS,
    MAX_RATIO,
    Overtime,
    read_body,
    read_capped,
)

LATER = time.monotonic() + 3600


class _Pieces(httpx.SyncByteStream):
    """A body that arrives in the pieces given, not yet read (as from a socket)."""

    def __init__(self, pieces: list[bytes]) -> None:
        self._pieces = pieces

    def __iter__(self) -> Iterator[bytes]:
        yield from self._pieces


def _streamed(pieces: list[bytes], encoding: str | None = None) -> httpx.Response:
    headers = {"content-encoding": encoding} if encoding else {}
    return httpx.Response(200, headers=headers, stream=_Pieces(pieces))


def _gzip(data: bytes) -> bytes:
    return zlib.compress(data, 9, wbits=16 + zlib.MAX_WBITS)


def test_truncate_hands_out_the_first_limit_bytes_of_a_bomb_and_stops() -> None:
    bomb = _gzip(b"a" * 20_000_000)
    pieces = [bomb[i : i + 1000] for i in range(0, len(bomb), 1000)]
    read = b"".join(read_capped(_streamed(pieces, "gzip"), 50_000, LATER, mode="truncate"))
    assert read == b"a" * 50_000


def test_truncate_never_refuses_for_the_expansion_ratio() -> None:
    squeezed = _gzip(b"0" * 500_000)
    assert len(squeezed) * MAX_RATIO < 500_000
    read = b"".join(read_capped(_streamed([squeezed], "gzip"), 1_000_000, LATER))
    assert read == b"0" * 500_000


def test_refuse_refuses_a_body_over_the_cap_whether_streamed_or_in_memory() -> None:
    with pytest.raises(ResponseTooLarge, match=r"^a response over 1,000 bytes$"):
        read_body(_streamed([b"x" * 600, b"x" * 600]), 1_000, LATER)
    with pytest.raises(ResponseTooLarge, match=r"^a response over 1,000 bytes$"):
        read_body(httpx.Response(200, content=b"x" * 1_001), 1_000, LATER)
    assert read_body(_streamed([b"x" * 600, b"x" * 400]), 1_000, LATER) == b"x" * 1_000


def test_refuse_refuses_a_body_that_expands_over_the_ratio_within_the_cap() -> None:
    squeezed = _gzip(b"0" * 500_000)
    with pytest.raises(ResponseTooLarge, match=f"^a gzip response that expands over {MAX_RATIO} "):
        read_body(_streamed([squeezed], "gzip"), 1_000_000, LATER)


def test_a_small_ratio_body_is_read_whole_in_both_modes() -> None:
    text = b"".join(b"line %d of a text that compresses a little\n" % n for n in range(5_000))
    for mode in ("truncate", "refuse"):
        response = _streamed([_gzip(text)], "gzip")
        assert b"".join(read_capped(response, 1_000_000, LATER, mode=mode)) == text


@pytest.mark.parametrize("encoding", ["deflate", "gzip", "x-gzip"])
def test_every_encoding_asked_for_is_decoded(encoding: str) -> None:
    assert set(ACCEPT_ENCODING.split(", ")) <= set(ENCODINGS)
    squeeze = zlib.compressobj(wbits=zlib.MAX_WBITS if encoding == "deflate" else 31)
    body = squeeze.compress(b"hello") + squeeze.flush()
    assert read_body(_streamed([body], encoding), 1_000, LATER) == b"hello"


def test_a_broken_stream_is_refused_in_refuse_mode_and_raised_as_is_in_truncate_mode() -> None:
    with pytest.raises(ResponseTooLarge, match=r"^a gzip response that does not decompress$"):
        read_body(_streamed([b"not gzip at all"], "gzip"), 1_000, LATER)
    with pytest.raises(zlib.error):
        list(read_capped(_streamed([b"not gzip at all"], "gzip"), 1_000, LATER))


@pytest.mark.parametrize("mode", ["truncate", "refuse"])
def test_an_encoding_that_is_not_decoded_is_refused_before_a_byte_is_read(mode: str) -> None:
    read: list[bytes] = []

    class Watched(_Pieces):
        def __iter__(self) -> Iterator[bytes]:
            read.append(b"")
            yield b"x"

    response = httpx.Response(200, headers={"content-encoding": "br"}, stream=Watched([]))
    with pytest.raises(ResponseTooLarge, match=r"content-encoding 'br', which is not read"):
        list(read_capped(response, 1_000, LATER, mode=mode))  # type: ignore[arg-type]
    assert read == []


@pytest.mark.parametrize("mode", ["truncate", "refuse"])
def test_a_body_httpx_holds_decoded_is_read_as_is(mode: str) -> None:
    # httpx decoded it already: its content-encoding header no longer applies.
    response = httpx.Response(200, content=b"plain")
    response.headers["content-encoding"] = "gzip"
    assert b"".join(read_capped(response, 1_000, LATER, mode=mode)) == b"plain"  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", ["truncate", "refuse"])
def test_the_deadline_is_checked_before_each_piece(mode: str) -> None:
    ends = time.monotonic() + 0.2

    class Slow(_Pieces):
        def __iter__(self) -> Iterator[bytes]:
            yield b"x" * 20_000
            time.sleep(0.3)
            yield b"y"

    pieces = read_capped(httpx.Response(200, stream=Slow([])), 100_000, ends, mode=mode)  # type: ignore[arg-type]
    assert next(pieces)
    with pytest.raises(Overtime) as raised:
        next(pieces)
    # An httpx timeout: the retry logic and each tool's wording catch it as one.
    assert isinstance(raised.value, httpx.TimeoutException)


def test_truncate_reads_pieces_of_16_kb_and_refuse_as_they_arrive() -> None:
    """fetch tells a page's type by its first piece; search checks the time at every read."""
    trickle = [b"%PDF"] + [b"x"] * 20_000
    truncated = list(read_capped(_streamed(trickle), 1_000_000, LATER, mode="truncate"))
    assert [len(piece) for piece in truncated] == [16_384, 20_004 - 16_384]
    refused = list(read_capped(_streamed(trickle), 1_000_000, LATER, mode="refuse"))
    assert len(refused) == len(trickle)
