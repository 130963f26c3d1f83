"""The command line cannot be turned against its host or its CI (issue 26, section D).

Files it writes follow no planted link; what it prints cannot forge a GitHub Actions
workflow command; what it reads besides the evidence (a baseline, a policy file) is a
regular file read within a cap, never a FIFO that blocks or a device without end.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from tests.cli.helpers import OPENAI_DEMO, run, run_process

# The demo cassette's violations under this policy: a baseline with entries.
POLICY = ("--block", "medium.com")


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    shutil.copy(OPENAI_DEMO, folder / "a.yaml")
    return folder


# --- item 7: --write-baseline follows no link ------------------------------------


def test_a_planted_partial_link_is_not_followed(suite: Path) -> None:
    victim = suite.parent / "victim.txt"
    victim.write_text("precious\n")
    # The name the old writer always used, planted as a link out of the tree.
    (suite / ".audit-baseline.json.partial").symlink_to("../victim.txt")
    baseline = suite / "audit-baseline.json"
    result = run("audit", suite / "a.yaml", *POLICY, "--write-baseline", baseline)
    assert result.returncode == 0, result.stderr
    assert victim.read_text() == "precious\n"
    assert not baseline.is_symlink()
    assert json.loads(baseline.read_text())["violations"]
    # Nothing of ours left beside it: only the planted link and the baseline.
    assert sorted(p.name for p in suite.iterdir()) == [
        ".audit-baseline.json.partial",
        "a.yaml",
        "audit-baseline.json",
    ]


def test_a_baseline_that_is_a_link_is_replaced_not_its_target(suite: Path) -> None:
    victim = suite.parent / "victim.txt"
    victim.write_text("precious\n")
    baseline = suite / "audit-baseline.json"
    baseline.symlink_to("../victim.txt")
    result = run("audit", suite / "a.yaml", *POLICY, "--write-baseline", baseline)
    assert result.returncode == 0, result.stderr
    assert victim.read_text() == "precious\n"
    assert not baseline.is_symlink()
    assert json.loads(baseline.read_text())["format"] == "agentloop-tools-baseline"


def test_the_baseline_is_an_ordinary_file_for_the_umask(suite: Path) -> None:
    baseline = suite / "audit-baseline.json"
    mask = os.umask(0o022)
    try:
        run("audit", suite / "a.yaml", *POLICY, "--write-baseline", baseline)
    finally:
        os.umask(mask)
    assert stat.S_IMODE(baseline.stat().st_mode) == 0o644


# --- item 8: no field can start a workflow command --------------------------------

FORGED = "::error file=README.md::forged"


def _commands(text: str) -> list[str]:
    """Lines GitHub Actions would read as workflow commands."""
    return [line for line in text.splitlines() if line.lstrip().startswith("::")]


def _baseline_with(folder: Path, **fields: object) -> Path:
    entry = {"file": "a.yaml", "interaction": 0, "where": "link", "url": "https://x.example/",
             "rule": "medium.com", **fields}  # fmt: skip
    policy = {"mode": "block", "domains": ["medium.com"]}
    document = {"format": "agentloop-tools-baseline", "version": 1, "policy": policy,
                "violations": [entry]}  # fmt: skip
    baseline = folder / "audit-baseline.json"
    baseline.write_text(json.dumps(document))
    return baseline


@pytest.mark.parametrize(
    "fields",
    [
        {"file": f"gone.yaml\n{FORGED}"},
        {"file": "gone.yaml", "url": f"https://x.example/\n{FORGED}"},
        {"file": "gone.yaml", "url": f"https://x.example/\r{FORGED}"},
        {"file": "gone.yaml", "where": f"link\n{FORGED}"},
        {"file": "gone.yaml", "rule": f"medium.com\n{FORGED}"},
    ],
)
@pytest.mark.parametrize("format", ["table", "github", "json"])
def test_a_stale_baseline_entry_cannot_forge_a_workflow_command(
    suite: Path, fields: dict[str, object], format: str
) -> None:
    baseline = _baseline_with(suite, **fields)
    result = run(
        "audit", suite / "a.yaml", *POLICY, "--baseline", baseline, "--format", format,
        "--strict-baseline",
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    assert "stale" in result.stderr
    assert _commands(result.stderr) == []
    assert not any(line.startswith("::error file=README.md") for line in result.stdout.splitlines())


def test_a_skipped_file_name_cannot_forge_a_workflow_command(suite: Path) -> None:
    (suite / f"prompts\n{FORGED}\n.json").write_text('{"prompt": "hi"}')
    result = run("audit", suite, *POLICY, "--format", "github")
    assert result.returncode == 1, result.stderr
    assert "skipped" in result.stderr
    assert "prompts\\x0a::error" in result.stderr
    assert _commands(result.stderr) == []


def test_a_file_name_argparse_quotes_cannot_forge_a_workflow_command(suite: Path) -> None:
    # pre-commit passes file names; one starting with "-" (and no space) is an option.
    result = run("audit", suite / "a.yaml", *POLICY, "--x\n::error::forged")
    assert result.returncode == 2
    assert "unrecognized arguments" in result.stderr
    assert _commands(result.stderr) == []


@pytest.mark.parametrize("option", ["--policy", "--baseline"])
def test_a_usage_problem_quoting_a_path_stays_one_line(suite: Path, option: str) -> None:
    policy = () if option == "--policy" else POLICY
    result = run("audit", suite / "a.yaml", *policy, option, suite / f"missing\n{FORGED}")
    assert result.returncode == 2
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert _commands(result.stderr) == []


@pytest.mark.parametrize("format", ["table", "github"])
def test_the_policy_file_name_in_the_summary_stays_one_line(suite: Path, format: str) -> None:
    policy = suite / f"policy\n{FORGED}\n.toml"
    policy.write_text('block = ["medium.com"]\n')
    result = run("audit", suite / "a.yaml", "--policy", policy, "--format", format)
    assert result.returncode == 1, result.stderr
    assert not any(line.startswith("::error file=README.md") for line in result.stdout.splitlines())
    assert _commands(result.stderr) == []


def test_explain_names_its_policy_file_on_one_line(suite: Path) -> None:
    policy = suite / f"policy\n{FORGED}\n.toml"
    policy.write_text('block = ["medium.com"]\n')
    result = run("explain", "--policy", policy, "https://medium.com/")
    assert result.returncode == 1, result.stderr
    assert _commands(result.stdout + result.stderr) == []


# --- item 9: a baseline or a policy file is a regular file, read within a cap -----

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this OS")
needs_dev_zero = pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")


def _policy_args(option: str, path: Path) -> tuple[str | Path, ...]:
    return (option, path) if option == "--policy" else (*POLICY, option, path)


@needs_fifo
@pytest.mark.parametrize("option", ["--baseline", "--policy"])
def test_a_fifo_is_refused_without_blocking(suite: Path, option: str) -> None:
    fifo = suite / "named.fifo"
    os.mkfifo(fifo)  # no writer: opening it to read would wait forever
    result = run_process("audit", suite / "a.yaml", *_policy_args(option, fifo), timeout=60)
    assert result.returncode == 2, result.stderr
    assert str(fifo) in result.stderr
    assert "a FIFO" in result.stderr


@needs_dev_zero
@pytest.mark.parametrize("option", ["--baseline", "--policy"])
def test_a_link_to_a_device_is_refused_not_read_without_end(suite: Path, option: str) -> None:
    link = suite / "endless.json"
    link.symlink_to("/dev/zero")
    result = run("audit", suite / "a.yaml", *_policy_args(option, link))
    assert result.returncode == 2, result.stderr
    assert str(link) in result.stderr
    assert "not a regular file (a device)" in result.stderr


def test_a_policy_file_over_its_cap_is_refused(suite: Path) -> None:
    policy = suite / "policy.toml"
    policy.write_text('block = ["medium.com"]\n' + "#" * (1024 * 1024) + "\n")
    result = run("audit", suite / "a.yaml", "--policy", policy)
    assert result.returncode == 2
    assert f"{policy}: " in result.stderr
    assert "over the 1 MB limit" in result.stderr


def test_a_baseline_over_its_cap_is_refused(suite: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentloop_tools.cli import _baseline

    baseline = suite / "audit-baseline.json"
    assert run("audit", suite / "a.yaml", *POLICY, "--write-baseline", baseline).returncode == 0
    monkeypatch.setattr(_baseline, "MAX_BYTES", baseline.stat().st_size - 1)
    result = run("audit", suite / "a.yaml", *POLICY, "--baseline", baseline)
    assert result.returncode == 2
    assert f"--baseline {baseline}: " in result.stderr
    assert "over the" in result.stderr
