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


# One request to a host no provider uses, in vcrpy's own format.
INTERACTION = """\
interactions:
- request:
    body: null
    headers: {}
    method: GET
    uri: https://example.test/
  response:
    body: {string: ok}
    headers: {}
    status: {code: 200, message: OK}
version: 1
"""


def test_a_replayed_test_reads_its_cassette_file_once_and_its_placeholders_stay_current(
    pytester: pytest.Pytester,
) -> None:
    # The cassette's bytes are read once, when it is loaded; the placeholders the
    # plugin honours come from those bytes, so a rewritten file is seen at once.
    pytester.makepyfile(
        test_replay=f"""
        import os, sys
        import httpx
        import pytest

        OPENS = []
        INTERACTION = {INTERACTION!r}

        def count(event, args):
            if event == "open" and str(args[0]).endswith("shared.yaml"):
                OPENS.append(os.environ.get("PYTEST_CURRENT_TEST", ""))

        sys.addaudithook(count)
        PLACEHOLDER = "agentloop-tools-placeholder-MY_SERVICE_TOKEN"

        @pytest.mark.default_cassette("shared.yaml")
        @pytest.mark.vcr
        def test_a(agentloop_env):
            assert agentloop_env.get("MY_SERVICE_TOKEN") == PLACEHOLDER
            assert httpx.get("https://example.test/").text == "ok"

        @pytest.mark.default_cassette("shared.yaml")
        @pytest.mark.vcr
        def test_b(agentloop_env, vcr):
            assert agentloop_env.get("MY_SERVICE_TOKEN") == PLACEHOLDER
            assert httpx.get("https://example.test/").text == "ok"
            with open(vcr._path, "w") as cassette:
                cassette.write(INTERACTION)  # the placeholder's line gone

        @pytest.mark.default_cassette("shared.yaml")
        @pytest.mark.vcr
        def test_c(agentloop_env):
            assert agentloop_env.get("MY_SERVICE_TOKEN") != PLACEHOLDER
            assert httpx.get("https://example.test/").text == "ok"

        def test_opens():
            by_test_b = [test for test in OPENS if "::test_b (setup)" in test]
            assert len(by_test_b) == 1, OPENS
        """
    )
    cassette = pytester.path / "cassettes" / "test_replay" / "shared.yaml"
    cassette.parent.mkdir(parents=True)
    cassette.write_text(INTERACTION + "# agentloop-tools-placeholder-MY_SERVICE_TOKEN\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=4)
