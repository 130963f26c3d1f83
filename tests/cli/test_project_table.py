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


def test_the_command_line_reads_the_policy_pytest_would_from_here(tmp_path: Path) -> None:
    from agentloop_tools._config import locate_config, policy_at

    (tmp_path / "pyproject.toml").write_text('[tool.agentloop-tools]\nblock = ["medium.com"]\n')
    package = tmp_path / "pkg"
    (package / "deep").mkdir(parents=True)
    # No configuration file in pkg/: pytest's rootdir is the repository, and so is ours.
    assert locate_config(package / "deep") == (tmp_path / "pyproject.toml", tmp_path)
    assert policy_at(package / "deep").origin == "pyproject.toml [tool.agentloop-tools]"
    # pkg/ has its own pytest.ini: the repository's pyproject.toml is not pytest's, nor ours.
    (package / "pytest.ini").write_text("[pytest]\n")
    assert locate_config(package / "deep") == (package / "pytest.ini", package)
    assert policy_at(package / "deep").policy is None
    (package / "pytest.ini").write_text("[pytest]\nagentloop_policy_file = ../policy.toml\n")
    (tmp_path / "policy.toml").write_text('allow = ["python.org"]\n')
    found = policy_at(package)
    assert found.policy is not None
    assert found.policy.mode == "allow"
    assert found.path == package / "../policy.toml"


def test_the_command_line_refuses_two_sources_as_the_plugin_does(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\nagentloop_block_domains = wikipedia.org\n")
    (tmp_path / "pyproject.toml").write_text('[tool.agentloop-tools]\nblock = ["medium.com"]\n')
    result = run("audit", OPENAI_DEMO, cwd=tmp_path)
    assert result.returncode == 2
    assert "a project-wide domain policy is set in 2 places" in result.stderr
