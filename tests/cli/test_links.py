"""Symbolic links under the paths given: a link inside them is read once, under its real
name; one leading outside them, and a loop, are not followed, named and counted; the exit
code follows what was read (``audit``, ``evidence`` and ``scan`` alike)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.cli.helpers import ANTHROPIC_DEMO, OPENAI_DEMO, run

CLEAN = ("--allow", "python.org,realpython.com,wikipedia.org")
KEY = "sk-ant-api03-" + "K" * 40
FORGED = "::error file=README.md::forged"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project root: ``cassettes/`` and ``b -> cassettes``, as ``mkdir a; ln -s a b``."""
    root = tmp_path / "project"
    (root / "cassettes").mkdir(parents=True)
    shutil.copy(ANTHROPIC_DEMO, root / "cassettes" / "anthropic.yaml")
    (root / "b").symlink_to("cassettes")
    (root / "also.yaml").symlink_to(Path("cassettes") / "anthropic.yaml")
    return root


@pytest.mark.parametrize("command", ["audit", "evidence"])
def test_a_link_inside_the_folder_is_read_once_under_its_real_name(
    project: Path, command: str
) -> None:
    result = run(command, ".", *(CLEAN if command == "audit" else ()), "--format", "json",
                 cwd=project)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "symbolic link" not in result.stderr
    assert [file["path"] for file in json.loads(result.stdout)["files"]] == [
        "cassettes/anthropic.yaml"
    ]


def test_a_violation_behind_a_link_is_reported_once(project: Path) -> None:
    result = run("audit", ".", "--allow", "python.org", "--format", "json", cwd=project)
    assert result.returncode == 1, result.stderr
    document = json.loads(result.stdout)
    assert document["summary"]["violations"] == 3, "not once per name the file has"
    assert document["summary"]["problems"] == 0


def test_scan_of_a_project_root_skips_the_environment_and_its_lib64_link(tmp_path: Path) -> None:
    lib = tmp_path / ".venv" / "lib" / "python3.12" / "pkg"
    lib.mkdir(parents=True)
    (lib / "fixture.py").write_text(f'EXAMPLE = "{KEY}"\n')
    (tmp_path / ".venv" / "lib64").symlink_to("lib")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text("def test(): pass\n")
    result = run("scan", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines() == [
        "scanned 1 file(s) under . (0 parsed as YAML/JSON; skipped 1 folder(s): .venv): "
        "no secrets found."
    ]
    # Named, the environment is read, and lib64 (inside it) is read once, as lib.
    named = run("scan", ".venv", cwd=tmp_path)
    assert named.returncode == 1
    assert [line.split(": ")[0] for line in named.stdout.splitlines()[:-1]] == [
        ".venv/lib/python3.12/pkg/fixture.py"
    ]
    assert "symbolic link" not in named.stderr


@pytest.mark.parametrize("command", ["audit", "evidence", "scan"])
def test_a_link_to_outside_is_not_followed_and_counted(tmp_path: Path, command: str) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(OPENAI_DEMO, elsewhere / "openai.yaml")  # violates the allowlist below
    (elsewhere / "leak.txt").write_text(KEY)
    root = tmp_path / "project"
    root.mkdir()
    shutil.copy(ANTHROPIC_DEMO, root / "anthropic.yaml")
    (root / "shared").symlink_to(elsewhere)
    (root / "one.yaml").symlink_to(elsewhere / "openai.yaml")
    policy = CLEAN if command == "audit" else ()
    result = run(command, root, *policy)
    assert result.returncode == 0, result.stdout + result.stderr
    for link, target in (("shared", elsewhere), ("one.yaml", elsewhere / "openai.yaml")):
        assert (
            f"not followed: {root / link} -> {target}: a symbolic link to outside the paths given"
        ) in result.stderr
    if command == "scan":
        assert "2 symbolic link(s) not followed: 2 to outside the paths given" in result.stdout
    else:
        assert "2 symbolic link(s) not followed: 2 to outside the paths given" in result.stderr
    if command == "audit":
        document = json.loads(run(command, root, *policy, "--format", "json").stdout)
        assert document["left_out"]["outside_links"] == 2
        # Named as a path, the target is read.
        assert run(command, root, elsewhere, *policy).returncode == 1


@pytest.mark.parametrize("command", ["audit", "scan"])
def test_a_true_loop_is_named_and_counted_and_the_exit_follows_what_was_read(
    tmp_path: Path, command: str
) -> None:
    (tmp_path / "cassettes" / "sub").mkdir(parents=True)
    shutil.copy(ANTHROPIC_DEMO, tmp_path / "cassettes" / "sub" / "a.yaml")
    (tmp_path / "cassettes" / "sub" / "up").symlink_to("..")
    (tmp_path / "cassettes" / "self").symlink_to("self")
    policy = CLEAN if command == "audit" else ()
    result = run(command, tmp_path / "cassettes", *policy)
    assert result.returncode == 0, result.stdout + result.stderr
    up, self_ = tmp_path / "cassettes" / "sub" / "up", tmp_path / "cassettes" / "self"
    assert (
        f"not followed: {up}: a symbolic link loop (to {tmp_path / 'cassettes'}, a folder it is in)"
    ) in result.stderr
    assert f"not followed: {self_}: a symbolic link loop (it never resolves)" in result.stderr
    assert "2 symbolic link(s) not followed: 2 loop(s)" in result.stderr
    violating = run(command, tmp_path / "cassettes", "--allow", "python.org") if (
        command == "audit") else None  # fmt: skip
    assert violating is None or violating.returncode == 1


def test_a_hostile_link_name_stays_on_one_line(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    shutil.copy(ANTHROPIC_DEMO, root / "a.yaml")
    (root / f"x\n{FORGED}\x1b]0;t\x07").symlink_to(tmp_path)
    result = run("audit", root, *CLEAN, "--format", "github")
    assert result.returncode == 0, result.stderr
    assert "x\\x0a::error file=README.md::forged\\x1b]0;t\\x07" in result.stderr
    assert not any(line.startswith("::") for line in result.stderr.splitlines())
    assert "\x1b" not in result.stderr + result.stdout


def test_a_folder_of_only_outside_links_says_why_it_found_nothing(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(ANTHROPIC_DEMO, elsewhere / "a.yaml")
    root = tmp_path / "cassettes"
    root.mkdir()
    (root / "a.yaml").symlink_to(elsewhere / "a.yaml")
    for command in ("audit", "evidence"):
        result = run(command, root, *(CLEAN if command == "audit" else ()))
        assert result.returncode == 2, "nothing read is never a pass"
        assert "1 symbolic link(s) not followed (each named on stderr" in result.stdout
        assert f"not followed: {root / 'a.yaml'} -> {elsewhere / 'a.yaml'}" in result.stderr
    html = run("evidence", root, "--format", "html", "-o", tmp_path / "page.html")
    assert f"not followed: {root / 'a.yaml'} -> {elsewhere / 'a.yaml'}" in html.stderr
