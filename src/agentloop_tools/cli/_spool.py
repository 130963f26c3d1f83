"""What ``audit`` found, kept on disk until it is written: memory flat in the log's size.

A huge log can hold millions of violations and problems. Each file's are a ``Spooled``
collection: counted in memory, kept in one temporary file shared by the run (a batch of
``BATCH`` entries at a time) and read back, in order, as often as a format needs them
(JUnit counts before it lists; SARIF lists problems before results). ``dump_json`` writes
a JSON document whose lists are spooled, one entry at a time, in the very bytes
``json.dump(document, indent=2)`` writes for the lists held whole.
"""

from __future__ import annotations

import json
import pickle
import tempfile
import uuid
from collections.abc import Collection, Iterable, Iterator, Mapping
from typing import IO, Any, TextIO

# Entries held in memory before a batch goes to disk.
BATCH = 1024


class _File:
    """One temporary file for the run, created when the first batch is written."""

    def __init__(self) -> None:
        self.file: IO[bytes] | None = None
        self.end = 0

    def put(self, batch: list[Any]) -> int:
        if self.file is None:
            # Lives as long as the audits that read it; the system deletes it once closed.
            self.file = tempfile.TemporaryFile(prefix="agentloop-tools-audit-")  # noqa: SIM115
        at = self.end
        self.file.seek(at)
        pickle.dump(batch, self.file, protocol=pickle.HIGHEST_PROTOCOL)
        self.end = self.file.tell()
        return at

    def get(self, at: int) -> list[Any]:
        assert self.file is not None
        self.file.seek(at)
        batch: list[Any] = pickle.load(self.file)
        return batch


class Spooled(Collection[dict[str, Any]]):
    """Entries in the order added; on disk past ``BATCH``, counted without reading."""

    def __init__(self, store: _File) -> None:
        self._store = store
        self._batches: list[int] = []  # where each batch on disk starts
        self._tail: list[dict[str, Any]] = []
        self._count = 0

    def extend(self, entries: Iterable[dict[str, Any]]) -> None:
        for entry in entries:
            self._tail.append(entry)
            self._count += 1
            if len(self._tail) >= BATCH:
                self._batches.append(self._store.put(self._tail))
                self._tail = []

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for at in self._batches:
            yield from self._store.get(at)
        yield from list(self._tail)

    def __contains__(self, entry: object) -> bool:
        return any(found == entry for found in self)


class Spools:
    """Makes ``Spooled`` collections that share one temporary file; ``close`` deletes it."""

    def __init__(self) -> None:
        self._store = _File()

    def __call__(self) -> Spooled:
        return Spooled(self._store)

    def close(self) -> None:
        if self._store.file is not None:
            self._store.file.close()

    def __enter__(self) -> Spools:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def marker() -> str:
    """A string no recorded text holds: where a spooled list goes in a document."""
    return f"\x01spooled-{uuid.uuid4().hex}\x01"


def dump_json(document: Any, out: TextIO, lists: Mapping[str, Iterable[Any]]) -> None:
    """``json.dump(document, out, indent=2)`` and a newline, where each list ``[marker]``
    in ``document`` is written as the entries of ``lists[marker]``, one at a time."""
    shown = {json.dumps(key): entries for key, entries in lists.items()}
    lines = json.dumps(document, indent=2).split("\n")
    number = 0
    while number < len(lines):
        line = lines[number]
        following = lines[number + 1].strip() if number + 1 < len(lines) else ""
        if following not in shown:
            out.write(line + "\n")
            number += 1
            continue
        indent = lines[number + 1][: len(lines[number + 1]) - len(following)]
        close = lines[number + 2]  # "]" or "]," at the list's indent
        written = False
        for entry in shown[following]:
            out.write(",\n" if written else line + "\n")
            out.write(indent + _indented(entry, indent))
            written = True
        out.write(f"\n{close}\n" if written else f"{line}{close.strip()}\n")
        number += 3


_SCALARS = (str, int, float, bool, type(None))


def _indented(entry: Any, indent: str) -> str:
    """``json.dumps(entry, indent=2)`` with each line after the first indented by
    ``indent``. A flat object (every entry's usual shape) goes through the C encoder,
    which Python's ``indent`` does not use: its separators carry the indentation."""
    if not (
        type(entry) is dict and entry and all(type(value) in _SCALARS for value in entry.values())
    ):
        return json.dumps(entry, indent=2).replace("\n", "\n" + indent)
    inner = "\n" + indent + "  "
    body = json.dumps(entry, separators=("," + inner, ": "))
    return "{" + inner + body[1:-1] + "\n" + indent + "}"
