"""Cost of the pytest plugin: replayed agent tests vs FakeClient tests, and import time.

Run by hand (numbers go in the issue's closing note):

    .venv/bin/python benchmarks/bench_plugin.py

Targets (issue #3): a replayed single-request agent test adds at most 5 ms over the
same test on agentloop's FakeClient, measured over 200 tests in one pytest run; the
plugin adds under 30 ms to pytest start-up when no test uses it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median
from textwrap import dedent

TESTS = 200
PYTHON = sys.executable

# Both suites import the provider SDK up front, as a real agent test module does
# through the code under test: the comparison is per test, not one-time imports.
COMMON = """
import anthropic
from agentloop import Agent
from agentloop.providers.fake import FakeClient
from agentloop.provider import ModelResponse, StopReason, Usage
from agentloop.transcript import TextPart
from agentloop_tools.testing import ScriptedProvider, anthropic_message, anthropic_text
from agentloop_tools.web import native_web_search

SCRIPT = [anthropic_message([anthropic_text("The answer.", cite=["https://docs.python.org/3/"])])]
"""

FAKE_TESTS = """
import pytest
{common}

@pytest.mark.parametrize("n", range({tests}))
def test_fake(n):
    response = ModelResponse(content=(TextPart(text="The answer."),),
                             stop_reason=StopReason.END_TURN,
                             usage=Usage(), model="fake-1", provider="fake")
    with Agent([], client=FakeClient(response)) as agent:
        assert agent.run("What is the answer?") == "The answer."
"""

REPLAY_TESTS = """
import pytest
{common}

@pytest.mark.default_cassette("one.yaml")
@pytest.mark.vcr
@pytest.mark.parametrize("n", range({tests}))
def test_replay(n, agentloop_agent, agentloop_evidence):
    agent = agentloop_agent([native_web_search()], provider="anthropic",
                            http_client=ScriptedProvider("anthropic", SCRIPT).http_client())
    assert agent.run("What is the answer?") == "The answer."
"""


def run(directory: Path, *args: str) -> float:
    started = time.perf_counter()
    subprocess.run(
        [PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=directory,
        check=True,
        capture_output=True,
        env={"PATH": "/usr/bin:/bin", "HOME": str(directory)},
    )
    return time.perf_counter() - started


def main() -> None:
    directory = Path(tempfile.mkdtemp(prefix="bench-plugin-"))
    try:
        common = dedent(COMMON)
        (directory / "test_fake.py").write_text(
            dedent(FAKE_TESTS).format(common=common, tests=TESTS)
        )
        (directory / "test_replay.py").write_text(
            dedent(REPLAY_TESTS).format(common=common, tests=1)
        )
        run(directory, "test_replay.py", "--record-mode=once")  # one cassette, one request
        (directory / "test_replay.py").write_text(
            dedent(REPLAY_TESTS).format(common=common, tests=TESTS)
        )
        fakes, replays = [], []
        for _ in range(7):  # interleaved, so machine noise hits both alike
            fakes.append(run(directory, "test_fake.py"))
            replays.append(run(directory, "test_replay.py"))
        fake, replay = median(fakes), median(replays)
        extra = (replay - fake) / TESTS * 1000
        print(f"{TESTS} FakeClient tests (median of 7):     {fake:.2f} s")
        print(f"{TESTS} replayed agent tests (median of 7): {replay:.2f} s")
        print(
            f"added per replayed test: {extra:.2f} ms (best runs: "
            f"{(min(replays) - min(fakes)) / TESTS * 1000:.2f} ms)"
        )

        (directory / "test_nothing.py").write_text("def test_nothing():\n    pass\n")
        on, off = [], []
        for _ in range(15):  # interleaved, so machine noise hits both alike
            on.append(run(directory, "test_nothing.py"))
            off.append(run(directory, "test_nothing.py", "-p", "no:agentloop_tools"))
        print(
            f"pytest start-up, plugin on/off (median of 15): {median(on) * 1000:.0f} / "
            f"{median(off) * 1000:.0f} ms (plugin adds {(median(on) - median(off)) * 1000:.0f} ms)"
        )
    finally:
        shutil.rmtree(directory)


if __name__ == "__main__":
    main()
