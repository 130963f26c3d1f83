"""The shortcuts the cassette engine takes to replay fast never change what vcrpy patches."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from agentloop_tools._plugin.replay_speed import absent_modules


def test_a_library_counts_as_absent_only_until_a_folder_on_sys_path_provides_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if importlib.util.find_spec("tornado") is not None:
        pytest.skip("tornado is installed here")
    assert "tornado" in absent_modules()
    (tmp_path / "tornado").mkdir()
    (tmp_path / "tornado" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    # vcrpy patches tornado again as soon as it can be imported.
    assert "tornado" not in absent_modules()


def test_entering_a_cassette_leaves_no_trace_in_sys_modules(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_replay="""
        import pytest, sys, vcr.patch

        @pytest.mark.vcr
        def test_agent(agentloop_env):
            # Inside the cassette: nothing planted, vcrpy's httpx patch is on.
            assert sys.modules.get("httpx_curl_cffi", 0) is not None
            assert sys.modules.get("pyreqwest", 0) is not None
        """
    )
    cassette = pytester.path / "cassettes" / "test_replay" / "test_agent.yaml"
    cassette.parent.mkdir(parents=True)
    cassette.write_text("interactions: []\nversion: 1\n")
    pytester.runpytest_inprocess().assert_outcomes(passed=1)
    assert sys.modules.get("httpx_curl_cffi", 0) is not None
    assert sys.modules.get("pyreqwest", 0) is not None
