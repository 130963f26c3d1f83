"""Cost of the pytest plugin: replayed agent tests vs FakeClient tests, and import time.

Run by hand (numbers go in the issue's closing note):

    .venv/bin/python benchmarks/bench_plugin.py
    .venv/bin/python benchmarks/bench_plugin.py --profile   # where a replayed test's time goes
    .venv/bin/python benchmarks/bench_plugin.py --startup   # start-up cost alone

On a loaded machine the wall-clock figures swell with the load (both suites alike, but
not evenly): compare runs interleaved, or count instructions (``valgrind --tool=callgrind``
on pytest with 5 and with 25 replayed tests; the difference over 20 is one test's cost).

Targets: a replayed single-request agent test adds at most 5 ms over the same test on
agentloop's FakeClient, measured over 200 tests in one pytest run, both on a one-line
answer and on a real-size one (issue #11: a recorded Anthropic web-search response of
22 KB, read from ../shared/real-cassettes when it is there); the plugin adds under
2 ms to the start-up of a pytest run that does not use it (issue 31; CPU time of the
whole process, median of interleaved runs, with and without ``-p no:agentloop_tools``).
"""

from __future__ import annotations

import json
import os
import pstats
import resource
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
REAL_CASSETTES = Path(
    os.environ.get(
        "AGENTLOOP_TOOLS_REAL_CASSETTES",
        Path(__file__).resolve().parents[2] / "shared" / "real-cassettes",
    )
)
REAL_SIZE = REAL_CASSETTES / "ellmer__anthropic-web-search.yaml"

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
import os
import pytest
{common}
RECORDING = bool(os.environ.get("RECORDING"))

@pytest.mark.default_cassette("one.yaml")
@pytest.mark.vcr
@pytest.mark.parametrize("n", range({tests}))
def test_replay(n, agentloop_agent, agentloop_evidence):
    # Recorded from the script once; replayed as users replay, on the plugin's client.
    scripted = ScriptedProvider("anthropic", SCRIPT).http_client() if RECORDING else None
    agent = agentloop_agent([native_web_search()], provider="anthropic", http_client=scripted)
    assert agent.run("What is the answer?")
"""


TIMER = """
import json, time

durations = {}


def pytest_runtest_logreport(report):
    durations.setdefault(report.nodeid, 0.0)
    durations[report.nodeid] += report.duration


def pytest_sessionfinish(session):
    with open("durations.json", "w") as out:
        json.dump(durations, out)
"""


def tree_path(directory: Path) -> str:
    """``directory``, then the source tree PYTHONPATH names (bench_rows.py's --tree)."""
    return os.pathsep.join(filter(None, [str(directory), os.environ.get("PYTHONPATH")]))


def run(directory: Path, *args: str, recording: bool = False) -> float:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(directory), "PYTHONPATH": tree_path(directory)}
    if recording:
        env["RECORDING"] = "1"
    wall, _ = cpu_run(directory, *args, env=env)
    return wall


def per_test(directory: Path) -> tuple[list[float], list[float]]:
    """Setup + call + teardown of each test, both suites in one pytest run."""
    run(directory, "test_fake.py", "test_replay.py", "-p", "timer")
    durations = json.loads((directory / "durations.json").read_text())
    fake = [t for node, t in durations.items() if node.startswith("test_fake.py")]
    replay = [t for node, t in durations.items() if node.startswith("test_replay.py")]
    # The first test of each suite pays one-time imports; the target is per test.
    return fake[1:], replay[1:]


def real_size_script() -> str | None:
    """A real recorded web-search answer (search results, citations), as the script."""
    if not REAL_SIZE.is_file():
        return None
    import yaml

    cassette = yaml.safe_load(REAL_SIZE.read_text(encoding="utf-8"))
    body = cassette["interactions"][0]["response"]["body"]["string"]
    return f"\nimport json\nSCRIPT = [json.loads({body!r})]\n"


def main() -> None:
    real = real_size_script()
    if "--profile" in sys.argv[1:]:
        profile(real or "")
        return
    if "--startup" in sys.argv[1:]:
        startup()
        return
    measure("a one-line answer", "")
    if real is None:
        print(f"real-size answer skipped: {REAL_SIZE} not found")
    else:
        measure(f"a real-size answer ({REAL_SIZE.name}, 22 KB)", real)
    startup()


def prepare(directory: Path, script: str) -> None:
    """Both suites, and the replayed suite's one cassette recorded from the script."""
    common = dedent(COMMON) + script
    (directory / "timer.py").write_text(dedent(TIMER))
    (directory / "test_fake.py").write_text(dedent(FAKE_TESTS).format(common=common, tests=TESTS))
    (directory / "test_replay.py").write_text(dedent(REPLAY_TESTS).format(common=common, tests=1))
    run(directory, "test_replay.py", "--record-mode=once", recording=True)  # one request
    (directory / "test_replay.py").write_text(
        dedent(REPLAY_TESTS).format(common=common, tests=TESTS)
    )


def profile(script: str) -> None:
    """cProfile of the replayed suite (real-size answer when found), per test."""
    directory = Path(tempfile.mkdtemp(prefix="bench-plugin-"))
    try:
        prepare(directory, script)
        out = directory / "replay.prof"
        env = {"PATH": "/usr/bin:/bin", "HOME": str(directory), "PYTHONPATH": str(directory)}
        pytest_args = ["-q", "-p", "no:cacheprovider", "test_replay.py"]
        subprocess.run(
            [PYTHON, "-m", "cProfile", "-o", str(out), "-m", "pytest", *pytest_args],
            cwd=directory,
            check=True,
            capture_output=True,
            env=env,
        )
        stats = pstats.Stats(str(out))
        print(f"cProfile of {TESTS} replayed tests (cumulative seconds include one-time imports)")
        stats.sort_stats("cumulative").print_stats(r"vcr|pytest_recording|agentloop|anthropic", 40)
    finally:
        shutil.rmtree(directory)


def measure(label: str, script: str) -> None:
    print(f"== {label}")
    directory = Path(tempfile.mkdtemp(prefix="bench-plugin-"))
    try:
        prepare(directory, script)
        extras = []
        for _ in range(5):
            fake, replay = per_test(directory)
            extras.append((median(replay) - median(fake)) * 1000)
            print(
                f"one run of {TESTS} + {TESTS} tests: FakeClient {median(fake) * 1000:.2f} ms, "
                f"replayed {median(replay) * 1000:.2f} ms per test (medians)"
            )
        print(
            f"added per replayed test: {median(extras):.2f} ms (median of 5 runs; "
            f"range {min(extras):.2f}-{max(extras):.2f})"
        )
    finally:
        shutil.rmtree(directory)


def cpu_run(directory: Path, *args: str, env: dict[str, str]) -> tuple[float, float]:
    """One pytest process: its wall-clock and CPU (user + system) seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(
        [PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=directory,
        check=True,
        capture_output=True,
        env=env,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def startup(rounds: int = 31) -> None:
    """A run that does not use the plugin, with it and without it (``-p no:...``)."""
    directory = Path(tempfile.mkdtemp(prefix="bench-plugin-"))
    try:
        (directory / "pytest.ini").write_text("[pytest]\nmarkers =\n    slow: slow tests\n")
        (directory / "test_nothing.py").write_text("def test_nothing():\n    pass\n")
        base = {"PATH": "/usr/bin:/bin", "HOME": str(directory)}
        if os.environ.get("PYTHONPATH"):  # another checkout's src, for a before/after pair
            base["PYTHONPATH"] = os.environ["PYTHONPATH"]
        for label, env in (
            ("bytecode cached", base),
            ("PYTHONDONTWRITEBYTECODE=1", {**base, "PYTHONDONTWRITEBYTECODE": "1"}),
        ):
            cpu_run(directory, env=env)  # warm the bytecode cache and the page cache
            on: list[tuple[float, float]] = []
            off: list[tuple[float, float]] = []
            for _ in range(rounds):  # interleaved, so machine noise hits both alike
                on.append(cpu_run(directory, env=env))
                off.append(cpu_run(directory, "-p", "no:agentloop_tools", env=env))
            for index, what in ((1, "CPU"), (0, "wall")):
                with_us = median(run[index] for run in on) * 1000
                without = median(run[index] for run in off) * 1000
                print(
                    f"pytest start-up, no test uses the plugin, {label}, {what} "
                    f"(median of {rounds}): {with_us:.1f} ms with it, {without:.1f} ms "
                    f"without (-p no:agentloop_tools): +{with_us - without:.1f} ms, "
                    f"{with_us / without:.3f}x"
                )
    finally:
        shutil.rmtree(directory)


# --- issue 30's rows (bench_rows.py): CPU time, each against a reference of the same run
# Collection CPU time (pytest_collection, start to end) and each test's CPU time.
CPU_TIMER = """
import json, time
import pytest

spent = {}


@pytest.hookimpl(wrapper=True)
def pytest_collection(session):
    started = time.process_time()
    try:
        return (yield)
    finally:
        spent["collection"] = time.process_time() - started


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    started = time.process_time()
    try:
        return (yield)
    finally:
        spent[item.nodeid] = time.process_time() - started


def pytest_sessionfinish(session):
    with open("cpu.json", "w") as out:
        json.dump(spent, out)
"""
MARKED = """
import pytest
{tests}
"""


def collection_cpu(directory: Path, name: str) -> float:
    run(directory, "--collect-only", name, "-p", "cpu_timer")
    spent: dict[str, float] = json.loads((directory / "cpu.json").read_text())
    return spent["collection"]


def row_collection() -> dict[str, object]:
    """Collecting 200 tests marked domain_policy against 200 unmarked ones."""
    directory = Path(tempfile.mkdtemp(prefix="bench-plugin-"))
    try:
        (directory / "cpu_timer.py").write_text(dedent(CPU_TIMER))
        marked = "\n".join(
            f"@pytest.mark.domain_policy(block=['evil{n}.example'])\ndef test_{n}():\n    pass\n"
            for n in range(TESTS)
        )
        plain = "\n".join(f"def test_{n}():\n    pass\n" for n in range(TESTS))
        (directory / "test_marked.py").write_text(MARKED.format(tests=marked))
        (directory / "test_plain.py").write_text(MARKED.format(tests=plain))
        pairs = [
            (
                collection_cpu(directory, "test_marked.py"),
                collection_cpu(directory, "test_plain.py"),
            )
            for _ in range(7)  # interleaved; 3 left the ratio to the machine's load
        ]
    finally:
        shutil.rmtree(directory)
    marked_cpu = median(pair[0] for pair in pairs)
    plain_cpu = median(pair[1] for pair in pairs)
    return {
        "ms": marked_cpu * 1000,
        "reference_ms": plain_cpu * 1000,
        "ratio": marked_cpu / plain_cpu,
        "note": f"{TESTS} marked vs {TESTS} unmarked tests, median of {len(pairs)}",
    }


def row_replay() -> dict[str, object]:
    """A replayed one-request agent test against the same test on FakeClient."""
    directory = Path(tempfile.mkdtemp(prefix="bench-plugin-"))
    try:
        prepare(directory, "")
        (directory / "cpu_timer.py").write_text(dedent(CPU_TIMER))
        run(directory, "test_fake.py", "test_replay.py", "-p", "cpu_timer")
        spent: dict[str, float] = json.loads((directory / "cpu.json").read_text())
    finally:
        shutil.rmtree(directory)
    # Medians: the first test of each suite pays one-time imports.
    fake = median(t for node, t in spent.items() if node.startswith("test_fake.py"))
    replay = median(t for node, t in spent.items() if node.startswith("test_replay.py"))
    return {
        "ms": replay * 1000,
        "reference_ms": fake * 1000,
        "ratio": replay / fake,
        "note": f"CPU per test, medians of {TESTS}; +{(replay - fake) * 1000:.2f} ms replayed",
    }


ROWS = {
    "collection, 200 marked tests (vs unmarked)": row_collection,
    "replayed test, plugin's cassette guard (vs FakeClient)": row_replay,
}


if __name__ == "__main__":
    main()
