"""Where a blocklist's literals occur in a text: Hyperscan when installed, Aho-Corasick always.

The blocklist audit looks for every rule's text at once (``_prefilter.RuleFinder``).
ahocorasick-rs does it in one pass whatever the number of rules; Hyperscan (the
optional ``speed`` extra: Vectorscan or Intel Hyperscan) scans 5-6x faster but
compiles its database slowly (~80 us per literal: 8 s for 100,000 rules), so it is
compiled lazily, once the texts this search has read would have paid for it
(``PAYBACK_CHARS_PER_LITERAL``), and then shared by every search of the same
literals in the process. Its scratch space is allocated once and reused: a scan that
finds it busy (another thread) runs on Aho-Corasick instead. Pickling carries the
compiled database (``hyperscan.dumpb``), never a file: databases are CPU-specific, and
one that does not load here is compiled again.

``AGENTLOOP_TOOLS_BLOCKLIST_ENGINE`` chooses: ``auto`` (the default), ``hyperscan``
(compile at the first scan; an error if the package is missing) or ``aho-corasick``
(never Hyperscan). Either engine rules out exactly the same text: a property test
holds them to each other.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Sequence
from types import ModuleType
from typing import Any, Literal

from ahocorasick_rs import AhoCorasick

from agentloop_tools._errors import ConfigError

ENGINE_VARIABLE = "AGENTLOOP_TOOLS_BLOCKLIST_ENGINE"
type Engine = Literal["auto", "hyperscan", "aho-corasick"]
ENGINES: tuple[Engine, ...] = ("auto", "hyperscan", "aho-corasick")
# Compiling costs 25-80 us per literal and Hyperscan then saves 1.5-5 ns per character
# against the blocklist's Aho-Corasick search (_split_search; both grow with the number
# of literals; bench_rows.py --row engines measures them): the break-even lies between
# ~6,000 and ~24,000 characters read per literal. "auto" compiles at 12,000, so a
# compile costs at most about twice the scanning it saves, and a short audit of a huge
# list never waits for one.
PAYBACK_CHARS_PER_LITERAL = 12_000
# Databases compiled in this process, by their literals: a policy unpickled for each
# --jobs unit finds its database here instead of compiling it again.
_COMPILED: dict[tuple[str, ...], Any] = {}
_COMPILED_KEPT = 4
_COMPILED_LOCK = threading.Lock()
_imported: list[ModuleType | None] = []


def hyperscan_module() -> ModuleType | None:
    """The ``hyperscan`` package, or None when it is not installed (or does not load)."""
    if not _imported:
        try:
            import hyperscan
        except ImportError:
            _imported.append(None)
        else:
            _imported.append(hyperscan)
    return _imported[0]


def engine_setting() -> Engine:
    """The engine ``AGENTLOOP_TOOLS_BLOCKLIST_ENGINE`` asks for (``auto`` when unset).

    Raises:
        ConfigError: an unknown value, or ``hyperscan`` when the package is missing.
    """
    written = os.environ.get(ENGINE_VARIABLE, "")
    value = written.strip().lower() or "auto"
    for engine in ENGINES:
        if value == engine:
            if engine == "hyperscan" and hyperscan_module() is None:
                raise ConfigError(
                    f"{ENGINE_VARIABLE}=hyperscan, but the hyperscan package is not "
                    "installed (or does not load here). Install the speed extra "
                    "(pip install 'based-models-agentloop-tools[speed]') or set "
                    f"{ENGINE_VARIABLE}=auto."
                )
            return engine
    raise ConfigError(
        f"{ENGINE_VARIABLE}={written!r} is not an engine: use one of "
        f"{', '.join(ENGINES)} (auto: Hyperscan when installed and worth compiling)."
    )


class LiteralSearch:
    """The offsets where literals occur in texts, each text searched in one pass.

    ``starts(text)`` gives, in characters, the start of each occurrence of a literal or
    of one occurrence overlapping it (Aho-Corasick reports non-overlapping matches,
    Hyperscan all of them). ``engine`` overrides ``AGENTLOOP_TOOLS_BLOCKLIST_ENGINE``.
    ``seen``: characters and ranges (``"a-z"``, no escapes) of a character class; on
    Hyperscan, ``starts_and_unseen`` also reports every character outside it, in the
    same pass over the text. ``database``: a database ``serialized()`` by the search of
    the same literals in another process, loaded instead of compiled.
    """

    __slots__ = ("_automaton", "_class", "_compilable", "_database", "_engine", "_lengths",
                 "_literals", "_lock", "_scanned", "_scratch", "_seen")  # fmt: skip

    def __init__(
        self,
        literals: Sequence[str],
        *,
        engine: Engine | None = None,
        seen: str | None = None,
        database: bytes | None = None,
    ) -> None:
        self._literals = tuple(literals)
        self._seen = seen
        self._class: Any = None  # (database, scratch) of the characters outside ``seen``
        self._engine: Engine = engine if engine is not None else engine_setting()
        self._automaton: AhoCorasick | None = None
        self._database: Any = None
        self._scratch: Any = None
        self._lengths = [len(literal.encode("utf-8", "surrogatepass")) for literal in literals]
        # Hyperscan's literal API reads C strings: a NUL would cut a literal short.
        self._compilable = bool(literals) and not any("\x00" in item for item in literals)
        self._lock = threading.Lock()
        self._scanned = 0
        if self._engine != "aho-corasick":
            self._adopt(_COMPILED.get(self._literals))
            if self._database is None and database is not None:
                self._load(database)

    @property
    def engine(self) -> str:
        """``"hyperscan"`` once its database is compiled, else ``"aho-corasick"``."""
        return "hyperscan" if self._database is not None else "aho-corasick"

    def ready(self, size: int) -> bool:
        """Counts ``size`` characters read toward the compile's payback (compiling once it
        pays); whether this search is on Hyperscan."""
        if self._database is None and self._worth_compiling(size):
            self._compile()
        return self._database is not None

    def starts(self, text: str, *, counted: bool = False) -> list[int]:
        """Where literals start in ``text``, in characters, in no particular order.
        ``counted``: ``ready(len(text))`` was called for this text already.

        Raises:
            UnicodeEncodeError: ``text`` has a lone surrogate (no UTF-8 to search).
        """
        if not counted:
            self.ready(len(text))
        if self._database is not None and self._lock.acquire(blocking=False):
            try:
                # UnicodeEncodeError on a lone surrogate, as with Aho-Corasick
                return self._hyperscan_starts(text.encode(), len(text))
            finally:
                self._lock.release()
        if self._automaton is None:
            self._automaton = AhoCorasick(list(self._literals))
        return [start for _, start, _ in self._automaton.find_matches_as_indexes(text)]

    def starts_and_unseen(self, data: bytes, length: int) -> list[int] | None:
        """``starts`` of the text whose UTF-8 is ``data`` (``length`` characters), and the
        offset of each character outside ``seen``; None when this search is not on
        Hyperscan (the caller then finds those characters itself)."""
        # Compiling is starts()'s decision (it counts the text read); until then, None.
        if self._seen is None or self._database is None:
            return None
        if not self._lock.acquire(blocking=False):
            return None
        try:
            if self._class is None:
                database = _class_database(self._seen)
                self._class = (database, hyperscan_module().Scratch(database))  # type: ignore[union-attr]
            return self._hyperscan_starts(data, length, unseen=True)
        finally:
            self._lock.release()

    def serialized(self) -> bytes | None:
        """The compiled database as bytes (``hyperscan.dumpb``), or None when not compiled."""
        hyperscan = hyperscan_module()
        if self._database is None or hyperscan is None:
            return None
        return hyperscan.dumpb(self._database)  # type: ignore[no-any-return]

    def _load(self, serialized: bytes) -> None:
        hyperscan = hyperscan_module()
        if hyperscan is None:
            return
        # Scratch for a database built for another CPU fails: compiled again if it pays.
        with contextlib.suppress(hyperscan.error):
            self._adopt(hyperscan.loadb(serialized, hyperscan.HS_MODE_BLOCK))

    def _worth_compiling(self, size: int) -> bool:
        if self._engine == "aho-corasick" or not self._compilable:
            return False
        if self._engine == "hyperscan":
            return True
        self._scanned += size
        enough = self._scanned >= PAYBACK_CHARS_PER_LITERAL * len(self._literals)
        return enough and hyperscan_module() is not None

    def _compile(self) -> None:
        hyperscan = hyperscan_module()
        assert hyperscan is not None  # _worth_compiling and engine_setting checked
        database = _COMPILED.get(self._literals)
        if database is None:
            database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
            encoded = [literal.encode("utf-8", "surrogatepass") for literal in self._literals]
            database.compile(
                expressions=encoded,
                ids=list(range(len(encoded))),
                elements=len(encoded),
                literal=True,
            )
        self._adopt(database)

    def _adopt(self, database: Any) -> None:
        if database is None:
            return
        hyperscan = hyperscan_module()
        assert hyperscan is not None
        self._scratch = hyperscan.Scratch(database)
        self._database = database
        with _COMPILED_LOCK:  # two threads evicting at once must not drop one key twice
            _COMPILED.pop(self._literals, None)
            _COMPILED[self._literals] = database
            while len(_COMPILED) > _COMPILED_KEPT:
                _COMPILED.pop(next(iter(_COMPILED)), None)

    def _hyperscan_starts(self, data: bytes, length: int, *, unseen: bool = False) -> list[int]:
        lengths = self._lengths
        starts: list[int] = []
        add = starts.append

        def on_match(literal: int, _from: int, end: int, _flags: int, _context: object) -> None:
            add(end - lengths[literal])

        self._database.scan(data, match_event_handler=on_match, scratch=self._scratch)
        ends: list[int] = []
        if unseen:
            database, scratch = self._class
            database.scan(data, match_event_handler=_appender(ends), scratch=scratch)
        if len(data) == length:  # ASCII: bytes are characters
            return [*starts, *(end - 1 for end in ends)]
        where = character_offsets(data, [*starts, *ends])
        return [*(where[start] for start in starts), *(where[end] - 1 for end in ends)]

    def __reduce__(
        self,
    ) -> tuple[Any, tuple[tuple[str, ...], Engine, bytes | None, str | None]]:
        # The compiled database travels with the search (to --jobs workers); a file
        # cache would not do: a database is built for one CPU's instruction set.
        return (_restore, (self._literals, self._engine, self.serialized(), self._seen))


def _restore(
    literals: tuple[str, ...], engine: Engine, serialized: bytes | None, seen: str | None = None
) -> LiteralSearch:
    # A database built for another CPU or version does not load: compiled again when it pays.
    return LiteralSearch(literals, engine=engine, seen=seen, database=serialized)


def character_offsets(data: bytes, offsets: list[int]) -> dict[int, int]:
    """Byte offsets in UTF-8 ``data`` (each between two characters) as character offsets."""
    converted: dict[int, int] = {}
    at_byte = at_char = 0
    for offset in sorted(set(offsets)):
        at_char += len(data[at_byte:offset].decode())
        at_byte = offset
        converted[offset] = at_char
    return converted


def _appender(ends: list[int]) -> Any:
    add = ends.append

    def on_match(_id: int, _from: int, end: int, _flags: int, _context: object) -> None:
        add(end)

    return on_match


_CLASSES: dict[str, Any] = {}


def _class_database(seen: str) -> Any:
    """A database matching each character outside ``seen``, compiled once per process:
    the same class as Python's ``[^seen]`` (UTF-8 mode)."""
    if seen not in _CLASSES:
        hyperscan = hyperscan_module()
        assert hyperscan is not None
        body = []
        index = 0
        while index < len(seen):
            if index + 2 < len(seen) and seen[index + 1] == "-":
                body.append(f"\\x{{{ord(seen[index]):x}}}-\\x{{{ord(seen[index + 2]):x}}}")
                index += 3
            else:
                body.append(f"\\x{{{ord(seen[index]):x}}}")
                index += 1
        database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        pattern = ("[^" + "".join(body) + "]").encode()
        database.compile(expressions=[pattern], ids=[0], elements=1, flags=[hyperscan.HS_FLAG_UTF8])
        _CLASSES[seen] = database
    return _CLASSES[seen]
