"""docs/tool-errors.md and the code's table of tool error codes are the same table."""

from __future__ import annotations

import re
from pathlib import Path

from agentloop_tools.web._tool_errors import FATAL_CODES, TOOL_ERROR_CODES

TABLE = Path(__file__).resolve().parents[2] / "docs" / "tool-errors.md"
_ROW = re.compile(r"^\| `(?P<code>[a-z-]+)`(?P<fatal> \(fatal\))? \| `(?P<tool>\w+)` \|", re.M)


def test_every_code_has_one_row_naming_its_tool_and_nothing_else_has_one() -> None:
    rows = [(m["code"], m["tool"], bool(m["fatal"])) for m in _ROW.finditer(TABLE.read_text())]
    documented = {(code, tool) for code, tool, _ in rows}
    coded = {(code, tool) for tool, codes in TOOL_ERROR_CODES.items() for code in codes}
    assert documented == coded
    assert len(rows) == len(documented)
    assert {code for code, _, fatal in rows if fatal} == FATAL_CODES
