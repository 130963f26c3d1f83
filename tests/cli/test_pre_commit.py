"""The documented pre-commit hooks: their environment can read every recording."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement

from tests.cli.helpers import ANTHROPIC_DEMO, OPENAI_DEMO, REPO, run


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


# --- the audit hook passes vcrpy's JSON cassettes, and skips other JSON (issue 26) ----


def _hook_run(folder: Path, *names: str) -> subprocess.CompletedProcess[str]:
    """The audit hook as pre-commit runs it: its entry, then the staged files it matches."""
    import re
    import shlex

    hook = hooks()["agentloop-tools-audit"]
    matched = [name for name in names if re.search(str(hook["files"]), name)]
    command, *arguments = shlex.split(str(hook["entry"]))
    assert command == "agentloop-tools"
    return run(*arguments, "--block", "medium.com", *matched, cwd=folder)


@pytest.fixture
def staged(tmp_path: Path) -> Path:
    from tests.cli.test_cli import as_vcrpy_json

    cassettes = tmp_path / "tests" / "cassettes"
    cassettes.mkdir(parents=True)
    as_vcrpy_json(OPENAI_DEMO, cassettes / "test_cites.json")
    (cassettes / "prompts.json").write_text('{"prompt": "Which pages?"}')
    (cassettes / "notes.json").write_text('[{"note": "no message here"}]')
    return tmp_path


def test_the_audit_hook_reports_a_breach_in_a_json_cassette(staged: Path) -> None:
    result = _hook_run(
        staged, "tests/cassettes/test_cites.json", "tests/cassettes/prompts.json", "src/a.json"
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "tests/cassettes/test_cites.json" in result.stdout
    assert "skipped tests/cassettes/prompts.json" in result.stderr
    assert "src/a.json" not in result.stdout + result.stderr  # not a cassette path


def test_the_audit_hook_passes_a_commit_of_other_json_only(staged: Path) -> None:
    result = _hook_run(staged, "tests/cassettes/prompts.json", "tests/cassettes/notes.json")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "skipped tests/cassettes/prompts.json" in result.stderr
    assert "skipped tests/cassettes/notes.json" in result.stderr


@pytest.mark.parametrize(
    "content",
    ["{not json", "null", "3", '{"interactions": 5}', '{"interactions": []}',
     '{"messages": []}'],
)  # fmt: skip
def test_what_is_broken_stays_a_problem_under_skip_unrecognized(
    tmp_path: Path, content: str
) -> None:
    broken = tmp_path / "cassettes" / "broken.json"
    broken.parent.mkdir()
    broken.write_text(content)
    result = run("audit", "--skip-unrecognized", "--block", "medium.com", broken)
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"could not read {broken}" in result.stdout


def test_without_the_flag_a_named_file_stays_strict(staged: Path) -> None:
    prompts = staged / "tests" / "cassettes" / "prompts.json"
    strict = run("audit", "--block", "medium.com", prompts)
    assert strict.returncode == 2
    assert f"could not read {prompts}" in strict.stdout
    notes = staged / "notes.txt"
    notes.write_text("not evidence")
    assert run("audit", "--block", "medium.com", notes).returncode == 2
    skipped = run("audit", "--skip-unrecognized", "--block", "medium.com", notes, prompts)
    assert skipped.returncode == 0, skipped.stdout + skipped.stderr
    assert f"skipped {notes}: not a cassette" in skipped.stderr
    assert "left out 2 file(s): 2 neither a cassette nor a transcript" in skipped.stderr


def test_evidence_takes_skip_unrecognized_too(staged: Path) -> None:
    cassettes = staged / "tests" / "cassettes"
    result = run(
        "evidence", "--skip-unrecognized", cassettes / "prompts.json", cassettes / "test_cites.json"
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"skipped {cassettes / 'prompts.json'}" in result.stderr


def test_contributors_hooks_lint_format_and_scan_as_the_published_hook_does() -> None:
    # .pre-commit-config.yaml is for working on this repository: ruff, ruff-format and
    # our own scan hook, defined as the hook other repositories use.
    config = yaml.safe_load((REPO / ".pre-commit-config.yaml").read_text())
    ids = [hook["id"] for repo in config["repos"] for hook in repo["hooks"]]
    assert {"ruff", "ruff-format", "agentloop-tools-scan"} <= set(ids)
    [local] = [repo for repo in config["repos"] if repo["repo"] == "local"]
    [scan] = local["hooks"]
    published = hooks()["agentloop-tools-scan"]
    assert (scan["entry"], scan["files"]) == (published["entry"], published["files"])
