"""Messages link the published documentation: the root from the metadata, real sections."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from agentloop_tools._docs import FALLBACK_ROOT, TOPICS, docs_root, docs_url

ROOT = Path(__file__).parents[2]


def declared_documentation_url() -> str:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return str(project["urls"]["Documentation"])


def anchors(page: Path) -> set[str]:
    """The section anchors GitHub renders for a Markdown page's headings."""
    found = set()
    for line in page.read_text().splitlines():
        heading = re.match(r"#{1,6} (.+)", line)
        if heading:
            text = heading.group(1).strip().lower()
            text = re.sub(r"[^\w\- ]", "", text)
            found.add(text.replace(" ", "-"))
    return found


def test_the_root_is_the_documentation_url_the_package_declares() -> None:
    assert docs_root() == declared_documentation_url()
    assert declared_documentation_url() == FALLBACK_ROOT


@pytest.mark.parametrize("topic", sorted(TOPICS))
def test_every_topic_links_a_section_that_exists(topic: str) -> None:
    page, anchor = TOPICS[topic]
    assert (ROOT / "docs" / page).is_file()
    if anchor:
        assert anchor in anchors(ROOT / "docs" / page), f"no heading for #{anchor} in {page}"
    assert docs_url(topic).startswith(declared_documentation_url() + "/" + page)


def test_no_message_points_to_a_local_docs_folder() -> None:
    # A wheel user has no docs/ folder: every message links the published pages instead.
    source = ROOT / "src" / "agentloop_tools"
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in source.rglob("*.py")
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"""["'][^"']*\bdocs/[a-z-]+\.md""", line)
    ]
    assert offenders == []
