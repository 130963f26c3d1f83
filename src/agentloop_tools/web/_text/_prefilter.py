"""Rule most of a text out before a blocklist reads it: only where a rule's text occurs.

Reading a token closely (``read_token``) costs microseconds, and answers hold a link or
a host-like word every hundred characters; a blocklist refuses few of them. A host a
rule names ends with the rule's text, so a token can only hold one where that text
occurs in it, lower-cased and with ideographic full stops read as dots (IDNA's
reading), unless the host is written in a form a substring cannot see: escapes,
backslashes, punycode (look-alikes), defanged dots, or characters other than printable
ASCII and CJK letters and punctuation (IDNA maps or deletes some of those). So one
Aho-Corasick pass finds every occurrence of every rule at once (ahocorasick-rs: its
time does not grow with the number of rules), one regex pass finds the characters a
substring cannot speak for, and only the tokens holding either are read. The result is
the part of ``tokens(text)`` that may hold a finding; a property test holds it to
reading every token.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ahocorasick_rs import AhoCorasick

from agentloop_tools.web._text._finder import ANCHOR_ANY, TOKEN_RUN, tokens

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
# One pattern per kind, each a single character class at its start: an alternation
# would be tried at every position of the text.
_UNSEEN_CJK_RULED = re.compile(rf"[^\s\x21-\x7e{_CJK_RULED}]")
_UNSEEN = re.compile(r"[^\s\x21-\x7e]")
# Found in the same Aho-Corasick pass as the rules (on the lower-cased text): escapes,
# backslashes, punycode and defanged dots ("[.]", "(dot)"), which hide a host from a
# substring. One pass instead of a regex scan of the text for each.
_HIDING = (
    "%",
    "\\",
    "xn--",
    *(opener + dot + closer for opener in "[({" for dot in (".", "dot") for closer in "])}"),
)


class RuleFinder:
    """Finds, in a text, the tokens where a blocklist's rules may name a host.

    ``hosts``: the hosts the domain rules name (not IP rules: numbers have too many
    spellings for a substring). ``cjk``: whether CJK letters can be ruled on, which
    they cannot when a rule has a punycode label a host of CJK letters could match.
    """

    __slots__ = ("_automaton", "_unseen")

    def __init__(self, hosts: Iterable[str], *, cjk: bool) -> None:
        self._automaton = AhoCorasick([*sorted(set(hosts) - set(_HIDING)), *_HIDING])
        self._unseen = _UNSEEN_CJK_RULED if cjk else _UNSEEN

    def tokens_to_read(self, text: str) -> list[tuple[int, str]]:
        """``(offset, token)`` of the tokens of ``text`` that may name a rule's host."""
        lowered = text.lower()
        if len(lowered) != len(text):
            return list(tokens(text))  # lower-casing moved the offsets: read everything
        for dot in _DOTS:
            if dot in lowered:
                lowered = lowered.replace(dot, ".")
        # Non-overlapping matches suffice: an occurrence hidden under another one is
        # in the same token, as rules hold no character that ends a token.
        try:
            matches = self._automaton.find_matches_as_indexes(lowered)
        except UnicodeEncodeError:
            return list(tokens(text))  # lone surrogates: no UTF-8 for the automaton
        positions = [start for _, start, _ in matches]
        positions.extend(match.start() for match in self._unseen.finditer(text))
        if not positions:
            return []
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
