"""Rule most of a text out before a blocklist reads it: only where a rule's text occurs.

Reading a token closely (``read_token``) costs microseconds, and answers hold a link or
a host-like word every hundred characters; a blocklist refuses few of them. A host a
rule names ends with the rule's text, so a token can only hold one where that text
occurs in it, lower-cased and with ideographic full stops read as dots (IDNA's
reading), unless the host is written in a form a substring cannot see: escapes,
backslashes, punycode (look-alikes), defanged dots, or characters other than printable
ASCII and CJK letters and punctuation (IDNA maps or deletes some of those). So one
pass finds every occurrence of every rule at once (Hyperscan when installed and worth
compiling, ``_literal_search``; else Aho-Corasick, ``_split_search``; its time does not
grow with the number of rules), the characters a substring cannot speak for are found
(in the same Hyperscan pass, or by a byte table and, where it finds one, a regex), and
only the tokens holding either are read. The result is the part of ``tokens(text)`` that may hold a
finding; a property test holds it to reading every token.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from agentloop_tools.web._text._finder import ANCHOR_ANY, TOKEN_RUN, tokens
from agentloop_tools.web._text._literal_search import LiteralSearch
from agentloop_tools.web._text._split_search import SplitSearch, char_offsets, split_search

# Besides printable ASCII, the characters substrings speak for: CJK letters (never part
# of an ASCII host, never an ASCII look-alike), ideographic full stops (read as dots)
# and CJK punctuation that no normalisation makes ASCII. The Hangul fillers UTS #46
# deletes are left out: a deleted character joins its neighbours into one label.
_CJK_RULED = (
    "\u1100-\u115e\u1161-\u11ff\u2e80-\u2fff\u3001-\u3029\u3030-\u303f"
    "\u3040-\u30ff\u3130-\u3163\u3165-\u318f\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff"
    "\uff01-\uff0c\uff0e\uff0f\uff1a-\uff20\uff3b-\uff3e\uff40\uff5b-\uff65"
)
_DOTS = "\u3002\uff0e\uff61"
# What \s is in a str pattern (str.isspace()), written out for Hyperscan, which reads
# the same class in one pass with the rules (a test holds the two to each other).
_WHITESPACE = "\t-\r\x1c- \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
_SEEN_CJK_RULED = _WHITESPACE + "\x21-\x7e" + _CJK_RULED
# The two characters str.lower() does more to than case: "İ" becomes two characters,
# the Kelvin sign an ASCII "k".
_LOWER_CHANGES = ("\u0130", "\u212a")
_DOT_BYTES = tuple(dot.encode() for dot in _DOTS)
# One pattern per kind, each a single character class at its start: an alternation
# would be tried at every position of the text.
_UNSEEN_CJK_RULED = re.compile(rf"[^\s\x21-\x7e{_CJK_RULED}]")
_UNSEEN = re.compile(r"[^\s\x21-\x7e]")
# The ASCII characters both classes leave out: deleted by bytes.translate, a text of
# them only has nothing left (a test holds this to the regexes).
_ASCII_SEEN = bytes(code for code in range(128) if not _UNSEEN.match(chr(code)))
# Found with the rules (on the lower-cased text): escapes, backslashes, punycode and
# defanged dots ("[.]", "(dot)"), which hide a host from a substring. In the rules'
# pass or in small automatons of their own, not a regex scan of the text for each.
_HIDING = (
    "%",
    "\\",
    "xn--",
    *(opener + dot + closer for opener in "[({" for dot in (".", "dot") for closer in "])}"),
)
# The same list for the log audit's line prefilter (agentloop_tools._logs), which
# rules out whole lines before they are read: one list, so the two never disagree.
HIDING = _HIDING


class RuleFinder:
    """Finds, in a text, the tokens where a blocklist's rules may name a host.

    ``hosts``: the hosts the domain rules name (not IP rules: numbers have too many
    spellings for a substring). ``cjk``: whether CJK letters can be ruled on, which
    they cannot when a rule has a punycode label a host of CJK letters could match.
    ``compiled``: what ``compiled()`` gave for the same hosts in another process.
    """

    __slots__ = ("_ascii_rules", "_hosts", "_search", "_split", "_unseen")

    def __init__(self, hosts: Iterable[str], *, cjk: bool, compiled: bytes | None = None) -> None:
        self._hosts = sorted(set(hosts) - set(_HIDING))
        # Aho-Corasick's hosts and marks apart, built when first read (never on Hyperscan).
        self._split: SplitSearch | bool | None = False
        literals = [*self._hosts, *_HIDING]
        # Rules of ASCII only match ASCII, which bytes.lower() folds as str.lower() does
        # (but for _LOWER_CHANGES): the text's UTF-8 is lower-cased, not the text.
        self._ascii_rules = all(literal.isascii() for literal in literals)
        # On Hyperscan, the characters outside the CJK class are found in the same pass
        # as the rules (see _bytes_positions).
        seen = _SEEN_CJK_RULED if cjk and self._ascii_rules else None
        self._search = LiteralSearch(literals, seen=seen, database=compiled)
        self._unseen = _UNSEEN_CJK_RULED if cjk else _UNSEEN

    def compiled(self) -> bytes | None:
        """The search's compiled Hyperscan database, serialized, or None."""
        return self._search.serialized()

    def ready(self, size: int) -> bool:
        """Counts ``size`` characters about to be read toward the compile's payback
        (compiling now if it pays); whether the search is on Hyperscan."""
        return self._search.ready(size)

    def tokens_to_read(self, text: str) -> list[tuple[int, str]]:
        """``(offset, token)`` of the tokens of ``text`` that may name a rule's host."""
        positions = self._bytes_positions(text)
        if positions is None:
            positions = self._text_positions(text)
        if positions is None:
            return list(tokens(text))
        if not positions:
            return []
        return _tokens_at(text, positions)

    def _bytes_positions(self, text: str) -> list[int] | None:
        """Where rules and unseen characters are, in one Hyperscan pass over the UTF-8
        with ASCII letters lower-cased, or None (off Hyperscan; ASCII text, which
        _text_positions rules on faster).

        Other characters keep their place in or out of the CJK class, and ideographic
        dots become dots as below (both in the class): the same positions.
        """
        if self._search.engine != "hyperscan" or text.isascii() or not self._bytes_fold(text):
            return None
        try:
            data = _folded(text, text.encode())
        except UnicodeEncodeError:
            return None
        return self._search.starts_and_unseen(data, len(text))

    def _text_positions(self, text: str) -> list[int] | None:
        """Where rules and unseen characters are, or None to read every token."""
        try:
            data = text.encode()
        except UnicodeEncodeError:
            return None  # lone surrogates: no UTF-8 for the automaton
        positions = self._rule_starts(text, data)
        if positions is None:
            return None  # lower-casing moved the offsets: read everything
        # What is left once the seen ASCII is deleted holds every unseen character
        # (as UTF-8, whole): usually nothing, or a few CJK letters.
        left = data.translate(None, _ASCII_SEEN)
        if left and self._unseen.search(left.decode()):
            positions.extend(match.start() for match in self._unseen.finditer(text))
        return positions

    def _rule_starts(self, text: str, data: bytes) -> list[int] | None:
        """Where rules start in the text lower-cased with dots as ``.`` (``data``: its
        UTF-8), or None when lower-casing changes its length.

        Non-overlapping matches suffice: an occurrence hidden under another one is in
        the same token, as rules hold no character that ends a token. On Aho-Corasick
        hosts and hiding marks are searched apart (``_split_search``: faster).
        """
        size = len(text)
        if not self._search.ready(size):  # counts toward the compile's payback
            split = self._split_search()
            if split is not None and self._bytes_fold(text):
                folded = _folded(text, data)
                found = split.starts(folded)
                return found if len(folded) == size else char_offsets(folded, found)
        lowered = text.lower()
        if len(lowered) != size:
            return None
        for dot in _DOTS:
            if dot in lowered:
                lowered = lowered.replace(dot, ".")
        return self._search.starts(lowered, counted=True)

    def _split_search(self) -> SplitSearch | None:
        if self._split is False:
            self._split = split_search(self._hosts, _HIDING)
        return self._split if isinstance(self._split, SplitSearch) else None

    def _bytes_fold(self, text: str) -> bool:
        """Whether bytes.lower() of the UTF-8 finds the rules str.lower() would."""
        return self._ascii_rules and (text.isascii() or not any(c in text for c in _LOWER_CHANGES))


def _folded(text: str, data: bytes) -> bytes:
    """``data``, the UTF-8 of ``text``, with ASCII letters lower-cased and dots as ``.``."""
    data = data.lower()
    if len(data) != len(text):  # ASCII has no ideographic dot
        for dot, encoded in zip(_DOTS, _DOT_BYTES, strict=True):
            if dot in text:  # one character: found faster in the str than in the bytes
                data = b".".join(data.split(encoded))  # faster than replace() here
    return data


def _tokens_at(text: str, positions: list[int]) -> list[tuple[int, str]]:
    """The tokens (as ``tokens(text)`` yields them) holding any of ``positions``."""
    reversed_text = text[::-1]
    length = len(text)
    found: list[tuple[int, str]] = []
    end = -1
    for position in sorted(positions):
        if position < end:
            continue  # in the token just taken: each token is measured once
        back = TOKEN_RUN.match(reversed_text, length - position)
        start = length - back.end() if back is not None else position
        forward = TOKEN_RUN.match(text, position)
        end = max(forward.end() if forward is not None else position, position + 1)
        # tokens() yields the tokens holding an anchor; ANCHOR_ANY finds one
        # exactly where the pattern tokens() chose for the whole text does.
        if ANCHOR_ANY.search(text, start, end) is not None:
            found.append((start, text[start:end]))
    return found
