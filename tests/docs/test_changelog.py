"""The CHANGELOG is written for users, in Keep a Changelog's six kinds of change."""

import re
from pathlib import Path

CHANGELOG = Path(__file__).parents[2] / "CHANGELOG.md"
KINDS = {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}


def sections() -> dict[str, str]:
    text = CHANGELOG.read_text(encoding="utf-8")
    parts = re.split(r"^## ", text, flags=re.M)[1:]
    return {part.splitlines()[0]: part for part in parts}


def test_each_release_groups_its_entries_under_the_six_kinds_of_change_only() -> None:
    for release, body in sections().items():
        headings = re.findall(r"^#{3,} (.+)$", body, flags=re.M)
        assert set(headings) <= KINDS, f"{release}: {sorted(set(headings) - KINDS)}"
        assert len(headings) == len(set(headings)), f"{release}: a kind of change twice"


def test_entries_name_no_private_module_a_user_cannot_import() -> None:
    for release, body in sections().items():
        private = re.findall(r"`[\w/.]*\b_[a-z]\w*\.py`", body)
        assert not private, f"{release} names internal files: {private}"
