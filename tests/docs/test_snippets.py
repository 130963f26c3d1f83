"""Every Python block in README.md and docs/ runs as written.

Blocks that define tests run as a pytest module in a pytester project (recorded once,
then replayed); other blocks run as scripts. Neither has a provider key: any agent
they build answers from a scripted Anthropic response, through the real SDK, that
searched and cited the Python docs. A block that cannot run offline says so in the
Markdown with ``<!-- snippet: not run: <reason> -->`` on the line before it.
"""

from __future__ import annotations

import re
import runpy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agentloop import Agent

from agentloop_tools.testing import (
    ScriptedProvider,
)

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_NOT_RUN = re.compile(r"<!-- snippet: not run: (?P<reason>.+?) -->\s*$")
ANSWER_URL = "https://docs.python.org/3/whatsnew/3.13.html"


def _blocks() -> Iterator[Any]:
    for page in PAGES:
        lines = page.read_text(encoding="utf-8").splitlines()
        index = 0
        while index < len(lines):
            if lines[index].strip() != "```python":
                index += 1
                continue
            start = index + 1
            end = next(i for i in range(start, len(lines)) if lines[i].strip() == "```")
            skip = _NOT_RUN.search(lines[index - 1]) if index else None
            marks = [pytest.mark.skip(reason=skip.group("reason"))] if skip else []
            code = "\n".join(lines[start:end]) + "\n"
            yield pytest.param(code, id=f"{page.relative_to(ROOT)}:{start + 1}", marks=marks)
            index = end + 1


BLOCKS = list(_blocks())
SCRIPT_SOURCE = f"""
from agentloop_tools.testing import anthropic_message, anthropic_search, anthropic_text

SCRIPT = [
    anthropic_message([
        anthropic_search("python 3.13 repl", [{ANSWER_URL!r}]),
        anthropic_text("Python 3.13 has a new interactive REPL.", cite=[{ANSWER_URL!r}]),
    ])
]
"""


def script() -> list[dict[str, Any]]:
    namespace: dict[str, Any] = {}
    exec(SCRIPT_SOURCE, namespace)
    return list(namespace["SCRIPT"])


def test_the_pages_have_python_blocks() -> None:
    assert len(BLOCKS) >= 7, [block.id for block in BLOCKS]


@pytest.mark.parametrize("code", BLOCKS)
def test_block_runs_as_written(
    code: str, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    if re.search(r"^def test_", code, re.MULTILINE):
        _run_as_test_module(code, pytester, monkeypatch)
    else:
        _run_as_script(code, pytester.path, monkeypatch)


def _run_as_script(code: str, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    original = Agent.from_env.__func__  # type: ignore[attr-defined]

    def scripted_from_env(cls: type[Agent], env: Any, *args: Any, **kwargs: Any) -> Agent:
        if "http_client" not in kwargs:  # a snippet that scripts its own model keeps its env
            env = {"LLM_PROVIDER": "anthropic", "ANTHROPIC_API_KEY": "placeholder"}
            kwargs["http_client"] = ScriptedProvider("anthropic", script()).http_client()
        agent: Agent = original(cls, env, *args, **kwargs)
        return agent

    monkeypatch.setattr(Agent, "from_env", classmethod(scripted_from_env))
    # The environment a reader of the docs has: one search backend configured.
    for name in ("TAVILY_API_KEY", "EXA_API_KEY", "SEARXNG_URL", "WEB_SEARCH_BACKEND"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("BRAVE_API_KEY", "BSA-docs-snippet-placeholder")
    path = folder / "snippet.py"
    path.write_text(code, encoding="utf-8")
    monkeypatch.chdir(folder)
    runpy.run_path(str(path), run_name="__main__")


CONFTEST = """
import pytest
from agentloop_tools.testing import ScriptedProvider
from scripted_answer import SCRIPT


@pytest.fixture
def agentloop_agent(agentloop_agent):
    def build(tools=(), **options):
        provider = options.get("provider", "anthropic")
        options.setdefault("http_client", ScriptedProvider(provider, SCRIPT).http_client())
        return agentloop_agent(tools, **options)

    return build
"""


def _run_as_test_module(
    code: str, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("CI", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "LLM_PROVIDER"):
        monkeypatch.delenv(name, raising=False)
    pytester.makepyfile(scripted_answer=SCRIPT_SOURCE, test_snippet=code)
    pytester.makeconftest(CONFTEST)
    pytester.syspathinsert()
    tests = len(re.findall(r"^def test_", code, re.MULTILINE))
    pytester.runpytest("--record-mode=once").assert_outcomes(passed=tests)
    pytester.runpytest().assert_outcomes(passed=tests)
