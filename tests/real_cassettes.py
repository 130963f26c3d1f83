"""Where the real recordings are: one definition for every test that reads them.

33 cassettes other projects recorded against the real APIs live outside the repository:
``$AGENTLOOP_TOOLS_REAL_CASSETTES``, else ``../shared/real-cassettes`` beside the checkout
(see its PROVENANCE.md). Tests read them in place, never copy them into the repository,
and skip when they are absent. A test that needs the folder takes the ``real_cassettes``
fixture (tests/conftest.py); a test parametrized over the files uses ``FILES`` (an empty
list when the folder is absent, which pytest reports as a skip).
"""

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

VARIABLE = "AGENTLOOP_TOOLS_REAL_CASSETTES"
REAL_CASSETTES = Path(
    os.environ.get(VARIABLE) or Path(__file__).resolve().parents[2] / "shared" / "real-cassettes"
)
PRESENT = (REAL_CASSETTES / "PROVENANCE.md").is_file()
FILES = sorted(REAL_CASSETTES.glob("*.yaml")) if PRESENT else []
ABSENT = f"real cassettes not found at {REAL_CASSETTES} (set {VARIABLE} to their folder)"
needs_real_cassettes = pytest.mark.skipif(not PRESENT, reason=ABSENT)


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def body_strings() -> list[str]:
    """Every string over 8 characters in the recordings' JSON bodies (streamed events too):
    the answers, tool results and queries real providers sent, for differential tests."""
    texts: list[str] = []
    for path in FILES:
        for line in path.read_text(encoding="utf-8").splitlines():
            line = line.strip().strip("'\"")
            for candidate in (line, line.removeprefix("data: ")):
                if candidate.startswith("{"):
                    with contextlib.suppress(ValueError):
                        texts.extend(s for s in _strings(json.loads(candidate)) if len(s) > 8)
    return texts
