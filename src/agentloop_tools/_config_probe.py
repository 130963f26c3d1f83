"""Whether a configuration file's bytes may hold our table: the probe before any parse.

The pytest plugin asks it at every start-up, and the policy reader before it parses a
``pyproject.toml``: a file that answers no (a template, a file that is not TOML or not
UTF-8, a project that never heard of us) is never parsed. Standard library only.
"""

from __future__ import annotations

import re

# A table or dotted key under ``tool.``: its name, bare or quoted.
_TOOL_NAME = re.compile(rb"""tool\s*\.\s*(?:"([^"\n]*)"|'([^'\n]*)'|([A-Za-z0-9_-]+))""")
_NEAR_CUTOFF = 0.8  # as the policy reader's "did you mean" for a table name


def mentions_us(data: bytes) -> bool:
    """``agentloop`` anywhere, or a ``tool.`` name that escapes or nearly spells ours."""
    if b"agentloop" in data.lower():
        return True
    if b"tool" not in data:
        return False
    for match in _TOOL_NAME.finditer(data):
        name = next(group for group in match.groups() if group is not None)
        if b"\\" in name:
            return True  # an escaped name: only a parser can say what it spells
        # 2 * 15 / (15 + n) >= 0.8 needs 10 <= n <= 22: most names stop here.
        if 10 <= len(name) <= 22 and _near(name.decode("ascii", "replace").lower()):
            return True
    return False


def _near(name: str) -> bool:
    import difflib

    return difflib.SequenceMatcher(None, name, "agentloop-tools").ratio() >= _NEAR_CUTOFF
