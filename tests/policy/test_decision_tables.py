"""The decision tables in docs/domain-policies.md are the specification: check every row."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from agentloop import Transcript
from agentloop.transcript import TextPart

from agentloop_tools.web import DomainPolicy

pytestmark = pytest.mark.core

DOC = Path(__file__).parents[2] / "docs" / "domain-policies.md"
RULES = ["example.com", "example.org/docs", "192.0.2.10", "[2001:db8::1]", "xn--mnchen-3ya.de"]
ALLOW = DomainPolicy.allow(RULES)
BARE = DomainPolicy.allow(RULES, bare_hosts=True)
BLOCK = DomainPolicy.block(RULES)


def table(heading: str) -> list[list[str]]:
    """The rows under a heading, each a list of cell texts."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split(heading, 1)[1].split("\n#", 1)[0]
    rows = []
    for line in section.splitlines():
        if line.startswith("| `"):
            cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
            rows.append(cells)
    assert rows, f"no rows under {heading!r} in {DOC}"
    return rows


def literal(cell: str) -> object:
    assert cell.startswith("`"), cell
    assert cell.endswith("`"), cell
    return ast.literal_eval(cell[1:-1])


URL_ROWS = table("### Decision table: URLs")
TEXT_ROWS = table("### Decision table: answer text")
BARE_ROWS = table("### Bare hosts")
COMMAND_ROWS = table("### Commands")
DECODED_ROWS = table("### Decoded text")


@pytest.mark.parametrize(("url", "allow", "block"), [row[:3] for row in URL_ROWS])
def test_url_verdicts_match_the_documented_table(url: str, allow: str, block: str) -> None:
    value = literal(url)
    assert isinstance(value, str)
    assert ALLOW.permits(value) is (allow == "admit"), f"allowlist on {value!r}"
    assert BLOCK.permits(value) is (block == "pass"), f"blocklist on {value!r}"
    # match() names the rule exactly when the list covers the input.
    assert (ALLOW.match(value) is not None) is (allow == "admit")
    assert (BLOCK.match(value) is not None) is (block == "block")


def audit_text(policy: DomainPolicy, text: str) -> list[str]:
    transcript = Transcript()
    transcript.add_user_message("question")
    transcript.add_assistant_message([TextPart(text=text)])
    violations = policy.audit(transcript)
    for violation in violations:
        assert violation.where == "text"
        assert violation.span is not None
        start, end = violation.span
        assert text[start:end] == violation.url, "span points at the text as written"
    return [violation.url for violation in violations]


@pytest.mark.parametrize(
    ("text", "allow", "block"), [row[:3] for row in TEXT_ROWS + COMMAND_ROWS + DECODED_ROWS]
)
def test_text_findings_match_the_documented_table(text: str, allow: str, block: str) -> None:
    value = literal(text)
    assert isinstance(value, str)
    assert audit_text(ALLOW, value) == literal(allow), f"allowlist on {value!r}"
    assert audit_text(BLOCK, value) == literal(block), f"blocklist on {value!r}"


@pytest.mark.parametrize(("text", "default", "bare"), [row[:3] for row in BARE_ROWS])
def test_bare_host_findings_match_the_documented_table(text: str, default: str, bare: str) -> None:
    value = literal(text)
    assert isinstance(value, str)
    assert audit_text(ALLOW, value) == literal(default), f"allowlist on {value!r}"
    assert audit_text(BARE, value) == literal(bare), f"bare_hosts=True on {value!r}"


def test_tables_cover_every_class_the_issue_names() -> None:
    inputs = " ".join(row[0] for row in URL_ROWS + TEXT_ROWS + DECODED_ROWS)
    for needle in [
        "\\\\",
        "@",
        "%65",
        "\\t",
        "\\n",
        "https:example",
        "//example",
        "0x",
        "0300",
        "[::ffff",
        "。",
        "\\u00ad",
        "\\u200b",
        "exаmple",
        ":99999",
        "?.",
        "#.",
        "%2e",
        "%64",
        "docs-internal",
        "[.]",
        "hxxps",
        "ｅｘａｍｐｌｅ",
        "を参照",
        "(bar)",
        "href",
        "www.",
        "config.py",
        "@gmail.com",
        "example.com.au",
        # Decoders (issue 16): JSON, YAML, JS/Python, RTF, rST, AsciiDoc.
        "\\\\/\\\\/",
        "\\\\u002e",
        "\\\\x2e",
        "\\\\\\n  ",
        "\\\\u{2e}",
        "\\\\'2e",
        "C:\\\\x2e",
        'r"',
        ". net/",
        ".. _guide:",
        "{host}",
    ]:
        assert needle in inputs, f"no documented case contains {needle!r}"
