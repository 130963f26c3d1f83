"""Find credentials in what a file holds, on its decoded strings.

A cassette or report is walked as data (the strings YAML and JSON decode to, not
their escaped text). Bodies are decoded further: JSON inside a string is parsed (so
``\\u``-escaped keys are read as the key), each SSE ``data:`` line too, bytes are
decompressed when they start like gzip/zlib/zstd and otherwise read byte for byte
(every key shape is ASCII), and the strings of one body are also read joined, so a
key split across two JSON fields or two stream events is found whole.

Shared by the recording refusal (``_guard``), ``agentloop-tools scan`` and the
report writer. Iterative, with a depth cap: hostile nesting cannot crash it.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from agentloop_tools._errors import Undecodable
from agentloop_tools._secrets import PLACEHOLDER_PREFIX, Detector, Finding

MAX_DEPTH = 200
# Joined text of one body is read up to this size (a key split across fields).
_JOIN_LIMIT = 4_000_000
_DECOMPRESSED_LIMIT = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Leak:
    """A credential found in a file: where (a readable path), what kind, masked value."""

    where: str
    kind: str
    masked: str
    side: str = ""

    def __str__(self) -> str:
        return f"{self.where}: {self.kind} ({self.masked})"


def find_leaks(value: Any, detector: Detector, where: str = "") -> list[Leak]:
    """Credentials anywhere in ``value`` (a parsed YAML/JSON document, str or bytes)."""
    found: list[tuple[str, Finding, bool]] = []
    for path, text, name, joined in _strings(value, where):
        found += [(path, finding, joined) for finding in _check(text, name, detector)]
    whole = _by_head(finding.value for _, finding, joined in found if not joined)
    leaks: list[Leak] = []
    seen: set[tuple[str, str]] = set()
    for path, finding, joined in found:
        if joined and _glued(finding.value, whole):
            continue
        key = (finding.kind, finding.value)
        if key not in seen:
            seen.add(key)
            leaks.append(Leak(path or "(top level)", finding.kind, finding.masked, _side(path)))
    return leaks


_HEAD = 8
_CANDIDATES = 64


def _by_head(values: Iterator[str]) -> dict[str, set[str]]:
    heads: dict[str, set[str]] = {}
    for value in values:
        heads.setdefault(value[:_HEAD], set()).add(value)
    return heads


def _glued(value: str, whole: dict[str, set[str]]) -> bool:
    """Whether a key found in a body's joined strings is one found whole in a string,
    with the start of the next string glued on: the same secret, listed once, as it is.

    (A key split across strings is found only joined, so it is kept.) Bounded: a
    hostile body with thousands of keys sharing a prefix is checked against a few.
    """
    candidates = whole.get(value[:_HEAD], ())
    return any(
        key != value and value.startswith(key)
        for key, _ in zip(candidates, range(_CANDIDATES), strict=False)
    )


def cassette_leaks(data: dict[str, Any], detector: Detector) -> list[Leak]:
    """Credentials in a cassette (vcrpy's serialisable dict), each named by interaction."""
    interactions = data.get("interactions")
    if not isinstance(interactions, list):
        return find_leaks(data, detector)
    leaks = find_leaks({k: v for k, v in data.items() if k != "interactions"}, detector)
    for index, interaction in enumerate(interactions):
        leaks += find_leaks(interaction, detector, f"interaction {index}")
    return leaks


def _side(path: str) -> str:
    for side in ("request", "response"):
        if f" {side}" in path or path.startswith(side):
            return side
    return ""


def _check(text: str, name: str, detector: Detector) -> list[Finding]:
    found = detector.find(text)
    if name and not found and PLACEHOLDER_PREFIX not in text:
        labelled = detector.labelled(name, text)
        if labelled is not None:
            found.append(labelled)
    return found


def _strings(value: Any, where: str) -> Iterator[tuple[str, str, str, bool]]:
    """(path, decoded string, the name it was stored under, joined) for every string in
    ``value``.

    Each body-like string (JSON, SSE) is also yielded parsed, and the strings of each
    parsed body joined (``joined`` True).
    """
    stack: list[tuple[Any, str, str, int]] = [(value, where, "", 0)]
    # YAML aliases share objects: read each once. Values are kept so ids stay unique.
    seen: dict[int, Any] = {}
    while stack:
        item, path, name, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise Undecodable(f"{path}: nested deeper than {MAX_DEPTH} levels")
        if isinstance(item, dict | list | str | bytes) and len(item) > 64:
            if id(item) in seen:
                continue
            seen[id(item)] = item
        if isinstance(item, dict):
            for key, child in item.items():
                key_text = str(key)
                yield path, key_text, "", False
                stack.append((child, _join(path, key_text), key_text, depth + 1))
        elif isinstance(item, list | tuple | set | frozenset):
            for index, child in enumerate(item):
                stack.append((child, f"{path}[{index}]", name, depth + 1))
        elif isinstance(item, bytes | bytearray):
            text = decode_bytes(bytes(item), path)
            stack.append((text, path, name, depth + 1))
        elif isinstance(item, str):
            yield path, item, name, False
            for parsed in _parsed_forms(item):
                yield path, _joined(parsed), "", True
                stack.append((parsed, path, name, depth + 1))
        elif item is not None and not isinstance(item, bool | int | float):
            yield path, str(item), name, False


def _join(path: str, key: str) -> str:
    if not path:
        return key
    return f"{path} {key}" if " " not in key and "." not in key else f"{path} {key!r}"


def _parsed_forms(text: str) -> Iterator[Any]:
    """JSON documents inside ``text``: the whole string, or each SSE ``data:`` line."""
    stripped = text.strip()
    if not stripped:
        return
    if stripped[0] in "{[" and stripped[-1] in "}]":
        with contextlib.suppress(ValueError, RecursionError):
            yield json.loads(stripped)
        return
    if "data:" in text and "\n" in text:
        events = []
        from agentloop_tools.cassettes._reading._sse import stream_lines

        for line in stream_lines(text):
            if line.startswith("data:"):
                payload = line[5:].strip()
                if payload[:1] in ("{", "["):
                    try:
                        events.append(json.loads(payload))
                    except (ValueError, RecursionError):
                        continue
        if events:
            yield events


def _joined(value: Any) -> str:
    """Every string leaf of ``value`` in order, concatenated (up to a size limit)."""
    parts: list[str] = []
    size = 0
    stack: list[Any] = [value]
    seen: set[int] = set()
    while stack and size < _JOIN_LIMIT:
        item = stack.pop()
        if isinstance(item, dict | list):
            if id(item) in seen:
                continue
            seen.add(id(item))
        if isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))
        elif isinstance(item, str):
            parts.append(item)
            size += len(item)
    return "".join(parts)


def decode_bytes(data: bytes, where: str = "") -> str:
    """Bytes as text that can be checked: UTF-8, else decompressed, else byte for byte.

    Raises ``Undecodable`` for bytes that start like a compressed stream but do not
    decompress: what they hold cannot be checked.
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    if data[:2] == b"\x1f\x8b" or (data[:1] == b"\x78" and int.from_bytes(data[:2]) % 31 == 0):
        try:
            inflated = _inflate(data)
        except (OSError, zlib.error, EOFError) as error:
            raise Undecodable(
                f"{where}: the body looks compressed but does not decompress ({error})"
            ) from None
        return decode_bytes(inflated, where)
    if data[:4] == b"\x28\xb5\x2f\xfd":
        raise Undecodable(f"{where}: the body is zstd-compressed and cannot be checked")
    # Latin-1 maps every byte to one character: ASCII key shapes read as they are. With
    # NUL bytes (UTF-16/32 text, binary formats), also read without them.
    text = data.decode("latin-1")
    if b"\0" in data:
        text += "\n" + data.replace(b"\0", b"").decode("latin-1")
    return text


def _inflate(data: bytes) -> bytes:
    if data[:2] == b"\x1f\x8b":
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
            out = stream.read(_DECOMPRESSED_LIMIT + 1)
    else:
        decompressor = zlib.decompressobj()
        out = decompressor.decompress(data, _DECOMPRESSED_LIMIT + 1)
    if len(out) > _DECOMPRESSED_LIMIT:
        raise OSError(f"more than {_DECOMPRESSED_LIMIT // (1024 * 1024)} MB once decompressed")
    return out
