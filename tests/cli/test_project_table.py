"""The command line refuses a pyproject table that the plugin refuses, with the same words."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.helpers import OPENAI_DEMO, run


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            '[tool.agentloop-tools]\nblocked = ["medium.com"]\n',
            "[tool.agentloop-tools]: unknown key(s) blocked; the table takes allow = [...] or "
            "block = [...].",
        ),
        ("[tool.agentloop-tools]\n", "[tool.agentloop-tools]: no allow = [...] or block = [...]"),
        (
            '[tool.agentloop_tools]\nblock = ["medium.com"]\n',
            "[tool.agentloop_tools] is not read; the domain list goes in "
            "[tool.agentloop-tools] (with a hyphen). Rename the table.",
        ),
    ],
)
def test_a_table_that_would_read_as_no_policy_exits_2(
    tmp_path: Path, table: str, message: str
) -> None:
    (tmp_path / "pyproject.toml").write_text(f'[project]\nname = "x"\n\n{table}')
    result = run("audit", OPENAI_DEMO, cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert message in result.stderr
