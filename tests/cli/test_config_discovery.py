"""The command line finds the configuration file and rootdir pytest itself would find.

``agentloop-tools audit`` reads the project's policy where a pytest run started in the
same folder reads it. pytest is the oracle: Hypothesis lays out folders of
configuration files, pytest parses its configuration from the innermost one, and
``locate_config`` must name the same file and rootdir. Then the files pytest takes but
cannot be read as a policy source, one by one, each with its message.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentloop_tools._config import locate_config, policy_at, pytest_settings, read_table
from agentloop_tools._errors import ConfigError
from agentloop_tools._plugin.scope import pytest_version

# Each file pytest looks for, with and without its pytest section.
FILES: dict[str, tuple[str, str]] = {
    "pytest.ini": ("[pytest]\n", "# pytest takes it even empty\n"),
    ".pytest.ini": ("[pytest]\n", ""),
    "pyproject.toml": ("[tool.pytest.ini_options]\n", '[project]\nname = "x"\n'),
    "tox.ini": ("[pytest]\n", "[tox]\n"),
    "setup.cfg": ("[tool:pytest]\n", "[metadata]\nname = x\n"),
    "setup.py": ("", ""),
}
if pytest_version() >= (9,):  # pytest.toml is read from pytest 9 on
    FILES["pytest.toml"] = ("[pytest]\n", "")
    FILES[".pytest.toml"] = ("[pytest]\n", "")
LEVELS = 3  # root/a/b: the run starts in b
_fresh = itertools.count()

layouts = st.lists(
    st.tuples(st.integers(0, LEVELS - 1), st.sampled_from(sorted(FILES)), st.booleans()),
    max_size=5,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(layout=layouts)
def test_the_file_and_rootdir_are_the_ones_pytest_finds(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, layout: list[tuple[int, str, bool]]
) -> None:
    root = pytester.path / f"case{next(_fresh)}"
    folders = [root, root / "a", root / "a" / "b"]
    folders[-1].mkdir(parents=True)
    for level, name, with_section in layout:
        (folders[level] / name).write_text(FILES[name][0 if with_section else 1])
    monkeypatch.chdir(folders[-1])
    config = pytester.parseconfig()
    assert locate_config(folders[-1]) == (config.inipath, config.rootpath), layout


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("tox.ini", "[pytest\n", "tox.ini: not an ini file"),
        ("pyproject.toml", "[tool\n", "pyproject.toml: not TOML"),
        ("pyproject.toml", '[tool]\nagentloop-tools = "x"\n', "must be a table holding allow"),
        ("pyproject.toml", "[tool.agentloop-tools]\n", "no allow = [...] or block = [...] list"),
    ],
)
def test_a_file_that_cannot_be_read_as_configuration_says_which_and_why(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    (tmp_path / name).write_text(text)
    with pytest.raises(ConfigError, match=re.escape(message)):
        policy_at(tmp_path)


def test_a_tool_key_that_is_no_table_holds_no_policy(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('tool = "none"\n')
    assert read_table(tmp_path / "pyproject.toml") is None
    assert policy_at(tmp_path).policy is None


def test_the_policy_is_read_from_setup_cfg_and_pytest_toml(tmp_path: Path) -> None:
    (tmp_path / "setup.cfg").write_text("[tool:pytest]\nagentloop_block_domains =\n  x.org\n")
    found = policy_at(tmp_path)
    assert found.policy is not None
    assert found.policy.domains == ("x.org",)
    assert found.source == "ini"
    (tmp_path / "pytest.toml").write_text('[pytest]\nagentloop_allow_domains = ["python.org"]\n')
    assert pytest_settings(tmp_path / "pytest.toml") == {"agentloop_allow_domains": ["python.org"]}


def test_an_unreadable_configuration_file_says_so(tmp_path: Path) -> None:
    (tmp_path / "tox.ini").mkdir()  # is_file() is False: pytest skips it, and so do we
    assert policy_at(tmp_path).policy is None
    with pytest.raises(ConfigError, match=r"tox\.ini: cannot be read"):
        pytest_settings(tmp_path / "tox.ini")
