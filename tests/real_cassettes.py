"""Where the real recordings are: one definition for every test that reads them.

33 cassettes other projects recorded against the real APIs live outside the repository:
``$AGENTLOOP_TOOLS_REAL_CASSETTES``, else ``../shared/real-cassettes`` beside the checkout
(see its PROVENANCE.md). Tests read them in place, never copy them into the repository,
and skip when they are absent. A test that needs the folder takes the ``real_cassettes``
fixture (tests/conftest.py); a test parametrized over the files uses ``FILES`` (an empty
list when the folder is absent, which pytest reports as a skip).
"""

import os
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
