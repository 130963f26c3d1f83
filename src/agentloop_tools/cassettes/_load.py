"""Read files that may be hostile: bounded size, nesting, and YAML alias expansion.

Every reader in this package (the plugin's cassettes, ``audit``, ``evidence``,
``scan``) goes through here, so a truncated, deep or bomb-shaped file becomes an
``InputError`` naming the limit and the file, never a crash, a hang or a gigabyte.

Limits (module constants, documented in docs/cli.md):

- ``MAX_FILE_BYTES``: larger files are not read.
- ``MAX_DEPTH``: YAML and JSON nested deeper are refused before they are built.
- ``MAX_NODES``, ``EXPANSION_FACTOR``: a YAML document whose aliases would expand to
  more nodes than ``MAX_NODES``, or to more text than ``EXPANSION_FACTOR`` times the
  file (an "alias bomb", or "billion laughs"), is refused before it is built.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import yaml

from agentloop_tools._errors import InputError

MAX_FILE_BYTES = 64 * 1024 * 1024
MAX_DEPTH = 100
MAX_NODES = 2_000_000
EXPANSION_FACTOR = 10

try:  # libyaml is several times faster; replay reads a cassette per test.
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]


def read_bytes(path: str | Path, *, limit: int = MAX_FILE_BYTES) -> bytes:
    """A regular file's bytes; anything else (FIFO, device, loop, over ``limit``) is an error.

    The one place a file someone else wrote is opened (cassettes, transcripts, the
    baseline, a policy file). A FIFO or device is refused before it is opened, and again
    on the open descriptor: opened without blocking (a FIFO with no writer would wait
    forever), so one swapped in after the first look is refused too. At most ``limit``
    bytes are read, so ``/dev/zero`` or a growing file is never read without end.
    """
    try:
        _require_regular(os.stat(path).st_mode)
        descriptor = os.open(path, _READ_FLAGS)
    except OSError as error:
        raise InputError(os_reason(error)) from None
    try:
        with os.fdopen(descriptor, "rb") as stream:
            info = os.fstat(stream.fileno())
            _require_regular(info.st_mode)
            if info.st_size > limit:
                raise InputError(
                    f"{info.st_size:,} bytes, over the {_mb(limit)} limit for one file; "
                    "split it or check it is really the file meant"
                )
            # Asked for what the file holds (and one byte more, to see it grow): a read
            # of limit + 1 makes a buffer of that size first, tens of microseconds per
            # call, paid by every replayed test.
            data = stream.read(min(info.st_size, limit) + 1)
            if len(data) > info.st_size:  # it grew since fstat: read on, to the limit
                data += stream.read(limit + 1 - len(data))
    except OSError as error:
        raise InputError(os_reason(error)) from None
    if len(data) > limit:
        raise InputError(f"grew past the {_mb(limit)} limit while read")
    return data


# Non-blocking: opening a FIFO must not wait for a writer. No controlling terminal.
_READ_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_BINARY", 0)
)


def _require_regular(mode: int) -> None:
    if not stat.S_ISREG(mode):
        raise InputError(f"not a regular file ({_kind(mode)}); it cannot be read whole")


def _mb(limit: int) -> str:
    return f"{limit // (1024 * 1024)} MB" if limit >= 1024 * 1024 else f"{limit:,}-byte"


def lines(text: str) -> list[str]:
    """The lines of a JSONL transcript or log: ended by ``\n``, one ``\r`` before it dropped.

    Never ``str.splitlines()``: it also ends a line at U+2028, U+2029, U+0085 and other
    characters JSON allows raw inside a string, which agentloop's ``to_jsonl`` writes as
    they are. A model's answer holding one would cut its own message in two, and make a
    transcript with a breach in it unreadable.
    """
    return [line.removesuffix("\r") for line in text.split("\n")]


def read_text(path: str | Path) -> str:
    """A regular file as UTF-8 text (a UTF-8 or UTF-16 byte order mark is honoured)."""
    data = read_bytes(path)
    try:
        return decode_text(data)
    except UnicodeDecodeError as error:
        raise InputError(
            f"not UTF-8 text (byte {error.start}: {data[error.start : error.start + 1]!r}); "
            "cassettes and transcripts are UTF-8"
        ) from None


def decode_text(data: bytes) -> str:
    """UTF-8 (with or without BOM), or UTF-16/32 when a BOM says so."""
    if data.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return data.decode("utf-32")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16")
    return data.decode("utf-8-sig")


def load_yaml(text: str) -> Any:
    """Parse YAML safely: refuse deep nesting and alias expansion past the budget first."""
    try:
        _check_yaml_shape(text)
        return yaml.load(text, Loader=_Loader)
    except RecursionError:
        raise InputError(f"nested deeper than {MAX_DEPTH} levels") from None
    except yaml.YAMLError as error:
        if "maximum nesting depth" in str(error):  # libyaml's own cap (1,000 levels)
            raise InputError(f"nested deeper than {MAX_DEPTH} levels") from None
        raise


def _check_yaml_shape(text: str) -> None:
    """One pass over the parser's events (no tree built): depth, and size with aliases."""
    depth = 0
    count = 0  # nodes, as if every alias were a copy
    chars = 0  # scalar characters, likewise
    char_budget = EXPANSION_FACTOR * len(text) + 1_000_000
    open_anchors: list[tuple[str | None, int, int]] = []
    sizes: dict[str, tuple[int, int]] = {}
    for event in yaml.parse(text, Loader=_Loader):
        if isinstance(event, yaml.AliasEvent):
            if any(anchor == event.anchor for anchor, _, _ in open_anchors):
                raise InputError(f"the alias *{event.anchor} refers to itself (a recursive node)")
            nodes, length = sizes.get(event.anchor or "", (1, 0))
            count += nodes
            chars += length
        elif isinstance(event, yaml.ScalarEvent):
            count += 1
            chars += len(event.value)
            if event.anchor:
                sizes[event.anchor] = (1, len(event.value))
        elif isinstance(event, yaml.CollectionStartEvent):
            count += 1
            depth += 1
            if depth > MAX_DEPTH:
                raise InputError(f"nested deeper than {MAX_DEPTH} levels")
            open_anchors.append((event.anchor, count, chars))
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
            anchor, started, started_chars = open_anchors.pop()
            if anchor:
                sizes[anchor] = (count - started + 1, chars - started_chars)
        if count > MAX_NODES or chars > char_budget:
            raise InputError(
                f"its aliases expand to more than {MAX_NODES:,} nodes or {EXPANSION_FACTOR}x "
                "the file's size (an alias bomb?); refused before it was built"
            )


def load_json(text: str) -> Any:
    """Parse JSON; refuse documents nested deeper than ``MAX_DEPTH``."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise InputError(f"nested deeper than {MAX_DEPTH} levels") from None
    check_depth(value)
    return value


def check_depth(value: Any, limit: int = MAX_DEPTH) -> None:
    """Raise ``InputError`` when ``value`` nests lists and dicts deeper than ``limit``."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    seen: set[int] = set()
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            raise InputError(f"nested deeper than {limit} levels")
        if isinstance(item, dict | list):
            if id(item) in seen:
                continue  # shared by YAML aliases: its depth below is the same
            seen.add(id(item))
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)


def os_reason(error: OSError) -> str:
    import errno

    if error.errno == errno.ELOOP:
        return "a symbolic link loop; it cannot be read"
    if error.errno == errno.EACCES:
        return "permission denied; it cannot be read"
    if error.errno == errno.ENOENT:
        return "no such file or directory"
    return f"cannot be read: {error.strerror or error}"


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"
