"""The documented pre-commit hooks: their environment can read every recording."""

from __future__ import annotations

import subprocess
import sys
import tomllib

import yaml
from packaging.requirements import Requirement

from tests.cli.helpers import ANTHROPIC_DEMO, REPO


def hooks() -> dict[str, dict[str, object]]:
    listed = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    return {hook["id"]: hook for hook in listed}


def test_the_audit_hook_installs_the_sdks_our_extras_bring() -> None:
    # pre-commit installs the hook repository without extras: the hook must add them.
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    wanted = {
        Requirement(line).name: Requirement(line)
        for name in ("anthropic", "openai-compat", "testing")
        for line in extras[name]
        if Requirement(line).name == "based-models-agentloop"
    }
    added = [Requirement(str(line)) for line in hooks()["agentloop-tools-audit"].get(
        "additional_dependencies", [])]  # type: ignore[attr-defined]  # fmt: skip
    [agentloop] = [req for req in added if req.name == "based-models-agentloop"]
    assert {"anthropic", "openai-compat"} <= agentloop.extras
    # The CLI reads recordings only on agentloop 0.6+: the hook pins that floor too.
    assert not agentloop.specifier.contains("0.5.9")
    assert agentloop.specifier.contains("0.6.0")
    assert wanted  # the extras still name agentloop


def test_a_missing_sdk_names_the_extra_that_brings_it() -> None:
    code = (
        "import sys; sys.modules['httpx2'] = None\n"
        "from agentloop_tools.cli import main\n"
        f"sys.exit(main(['audit', {str(ANTHROPIC_DEMO)!r}, '--block', 'example.org']))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert result.returncode == 2
    assert "httpx2" in result.stdout
    assert "pip install 'based-models-agentloop-tools[anthropic]'" in result.stdout


def test_the_documented_rev_is_a_commit_with_both_hooks() -> None:
    import re
    import shutil

    import pytest

    text = (REPO / "docs" / "cli.md").read_text()
    [rev] = re.findall(r"^\s+rev: (\S+)", text, re.MULTILINE)
    assert re.fullmatch(r"[0-9a-f]{40}", rev), "pin a full commit: no release is tagged yet"
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout: the commit cannot be looked up here")
    shown = subprocess.run(
        ["git", "-C", str(REPO), "show", f"{rev}:.pre-commit-hooks.yaml"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if shown.returncode != 0 and (REPO / ".git" / "shallow").exists():
        pytest.skip("a shallow clone: the pinned commit may be outside it")
    assert shown.returncode == 0, shown.stderr
    ids = {hook["id"] for hook in yaml.safe_load(shown.stdout)}
    assert {"agentloop-tools-scan", "agentloop-tools-audit"} <= ids


def test_the_pypi_description_links_only_absolute_addresses() -> None:
    import re

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["readme"] == "PYPI.md"
    text = (REPO / "PYPI.md").read_text()
    links = re.findall(r"\]\(([^)]+)\)", text) + re.findall(r"<([^>]+)>", text)
    assert links
    assert all(link.startswith("https://") for link in links), links
