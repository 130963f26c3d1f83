"""On a pytest older than the plugin supports, installed alongside: inert unless asked for.

The core install does not pin pytest, yet the entry point loads in every run. These
tests run a real pytest 7.4 (with pluggy 1.0, which predates the hook wrappers the
plugin uses) installed from the package registry into a folder of its own.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

OLD = ("pytest==7.4.4", "pluggy==1.0.0")


@pytest.fixture(scope="module")
def old_pytest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("pytest7")
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         "--no-input", "--target", str(target), *OLD],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    if install.returncode != 0:
        pytest.skip(f"could not install {' '.join(OLD)} from the registry: {install.stderr[-500:]}")
    return target


def run(old_pytest: Path, project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(old_pytest))
    env.pop("CI", None)
    # Only our plugin is loaded: the environment's other plugins may need a newer pytest.
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "agentloop_tools.pytest_plugin", *args],
        cwd=project, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_a.py").write_text("def test_ok():\n    pass\n")
    return tmp_path


def test_a_project_that_does_not_use_the_plugin_runs_as_without_it(
    old_pytest: Path, project: Path
) -> None:
    result = run(old_pytest, project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "pytest-7.4.4" in result.stdout
    assert "agentloop" not in result.stdout + result.stderr
    verbose = run(old_pytest, project, "-v")
    assert verbose.returncode == 0
    lines = [line for line in verbose.stdout.splitlines() if "agentloop" in line]
    # Not even under -v (whose header names the interpreter's path, which may hold the word).
    headers = ("plugins:", "platform ", "rootdir:", "cachedir:", "configfile:")
    assert [line for line in lines if not line.startswith(headers)] == []


def test_a_test_that_uses_the_plugin_stops_the_run_with_the_version_needed(
    old_pytest: Path, project: Path
) -> None:
    (project / "test_b.py").write_text("def test_agent(agentloop_agent):\n    pass\n")
    result = run(old_pytest, project)
    assert result.returncode == 4, result.stdout + result.stderr
    assert "agentloop-tools needs pytest>=8.3.3; this is pytest 7.4.4" in result.stderr
    assert "(used by test_b.py::test_agent)" in result.stderr


@pytest.mark.parametrize(
    "setting",
    [
        "[pytest]\nagentloop_block_domains = wikipedia.org\n",
        "[pytest]\nagentloop_allowed_domains = python.org\n",
    ],
)
def test_a_configured_policy_stops_the_run_with_the_version_needed(
    old_pytest: Path, project: Path, setting: str
) -> None:
    (project / "pytest.ini").write_text(setting)
    result = run(old_pytest, project)
    assert result.returncode == 4, result.stdout + result.stderr
    assert "agentloop-tools needs pytest>=8.3.3" in result.stderr
    assert "(the run asks for it: ini key agentloop_" in result.stderr


def test_a_pyproject_table_stops_the_run_with_the_version_needed(
    old_pytest: Path, project: Path
) -> None:
    (project / "pytest.ini").unlink()
    (project / "pyproject.toml").write_text('[tool.agentloop-tools]\nblock = ["x.org"]\n')
    result = run(old_pytest, project)
    assert result.returncode == 4, result.stdout + result.stderr
    assert "[tool.agentloop-tools])" in result.stderr
