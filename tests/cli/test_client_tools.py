"""The command line sees what client-side tools did, exactly as the live run did.

A real agent (the plugin's ``agentloop_agent``) calls our ``web_search`` (answered
by ``ScriptedSearch``) and ``web_fetch`` (answered by a mock site) while the plugin
records a cassette, over each API the reader knows: Anthropic Messages, OpenAI
Responses and Chat Completions (OpenRouter). Then ``agentloop-tools audit`` and
``evidence`` on that cassette must give what ``policy.audit()`` and ``sources()``
give on the live transcripts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Literal

import pytest
from agentloop.transcript import from_jsonl

from agentloop_tools.web import DomainPolicy, sources
from tests.cli.helpers import run as cli_run

REPO = Path(__file__).parents[2]
AUDITED = DomainPolicy.allow(["python.org"])

AGENT_TEST = """
import json
import os
from pathlib import Path

import httpx
import pytest
from agentloop.transcript import to_jsonl

from agentloop_tools.testing import (
    ScriptedProvider,
    ScriptedSearch,
    anthropic_message,
    anthropic_text,
    brave_results,
    chat_completion,
    openai_message,
    openai_response,
)
from agentloop_tools.web import web_fetch, web_search
from agentloop_tools.web.backends import brave

SEARCH = {"query": "python 3.13 repl site:realpython.com", "count": 5}
FETCHES = [
    {"url": "https://docs.python.org/3/old-tutorial.html", "start": None},
    {"url": "https://evil.example/python", "start": None},
]
HITS = [
    ("https://docs.python.org/3/whatsnew/3.13.html", "What's New In Python 3.13", "New REPL."),
    ("https://realpython.com/python313-repl/", "A Modern REPL", "Paste mode."),
    ("https://medium.com/@someone/repl", "The REPL, explained", "A blog post."),
]
FIRST = "Python 3.13 has a new REPL ([docs](https://docs.python.org/3/whatsnew/3.13.html))."
SECOND = "Read the [tutorial](https://docs.python.org/3/tutorial/), not [this](https://stackoverflow.com/q/1)."


def calls(provider, turn):
    wanted = [("s1", "web_search", SEARCH)] if turn == 0 else [
        (f"f{number}", "web_fetch", arguments) for number, arguments in enumerate(FETCHES)
    ]
    if provider == "anthropic":
        return anthropic_message(
            [{"type": "tool_use", "id": f"toolu_{i}", "name": n, "input": a} for i, n, a in wanted],
            stop_reason="tool_use",
        )
    if provider == "openai":
        return openai_response(
            [
                {"type": "function_call", "id": f"fc_{i}", "call_id": f"call_{i}", "name": n,
                 "arguments": json.dumps(a), "status": "completed"}
                for i, n, a in wanted
            ]
        )
    return chat_completion(calls=[(f"call_{i}", n, a) for i, n, a in wanted])


def answer(provider, text):
    if provider == "anthropic":
        return anthropic_message([anthropic_text(text)])
    if provider == "openai":
        return openai_response([openai_message(text)])
    return chat_completion(text)


def site(request):
    if request.url.path == "/3/old-tutorial.html":
        return httpx.Response(301, headers={"location": "https://mirror.example/moved"})
    if request.url.path == "/moved":
        return httpx.Response(301, headers={"location": "https://docs.python.org/3/tutorial/"})
    html = "<html><head><title>Tutorial</title></head><body><p>" + "Text. " * 30 + "</p></body>"
    return httpx.Response(200, headers={"content-type": "text/html"}, content=html.encode())


@pytest.mark.vcr
@pytest.mark.parametrize("provider", ["anthropic", "openai", "openrouter"])
def test_agent(provider, agentloop_agent, agentloop_evidence):
    script = [
        calls(provider, 0), answer(provider, FIRST), calls(provider, 1), answer(provider, SECOND)
    ]
    searching = ScriptedSearch("brave", [brave_results(HITS)])
    tools = [
        web_search(brave("placeholder-brave-key"), http_client=searching.http_client()),
        web_fetch(
            http_client=httpx.Client(transport=httpx.MockTransport(site)),
            resolver=lambda host: ["93.184.215.14"],
        ),
    ]
    agent = agentloop_agent(
        tools, provider=provider, http_client=ScriptedProvider(provider, script).http_client()
    )
    agent.run("What changed in the Python 3.13 REPL?")
    agent.run("Where is the tutorial?")
    out = Path(os.environ["LIVE_TRANSCRIPTS"]) / provider
    out.mkdir(parents=True, exist_ok=True)
    for number, transcript in enumerate(agentloop_evidence.transcripts):
        (out / f"run-{number}.jsonl").write_text(to_jsonl(transcript.messages))
"""


def run(*args: Any) -> subprocess.CompletedProcess[str]:
    return cli_run(*args, cwd=REPO)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Path]]:
    """Records the cassettes once (a pytest run in a subprocess, like a user's)."""
    root = tmp_path_factory.mktemp("recording")
    (root / "test_agent.py").write_text(AGENT_TEST)
    (root / "pytest.ini").write_text("[pytest]\n")
    live = root / "live"
    env = {key: value for key, value in os.environ.items() if key != "CI"}
    env["LIVE_TRANSCRIPTS"] = str(live)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "--record-mode=once"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    cassettes = {
        provider: root / "cassettes" / "test_agent" / f"test_agent[{provider}].yaml"
        for provider in ("anthropic", "openai", "openrouter")
    }
    return live, cassettes


def live_transcripts(live: Path, provider: str) -> list[Any]:
    files = sorted((live / provider).glob("run-*.jsonl"))
    assert len(files) == 2, "the agent ran twice"
    return [from_jsonl(path.read_text().splitlines()) for path in files]


@pytest.mark.parametrize("provider", ["anthropic", "openai", "openrouter"])
def test_audit_of_the_cassette_matches_the_live_audit(
    recorded: tuple[Path, dict[str, Path]], provider: str
) -> None:
    live, cassettes = recorded
    expected = [
        (v.where, v.url, v.rule, v.message_index)
        for transcript in live_transcripts(live, provider)
        for v in AUDITED.audit(transcript)
    ]
    # Every client-side kind is there, so the comparison cannot pass vacuously.
    assert {where for where, *_ in expected} >= {"tool-call", "tool-result", "redirect", "text"}
    assert ("tool-result", "https://medium.com/@someone/repl", None, 2) in expected
    assert ("redirect", "https://mirror.example/moved", None, 2) in expected
    assert ("tool-result", "https://evil.example/python", None, 2) in expected

    result = run("audit", cassettes[provider], "--allow", "python.org", "--format", "json")
    assert result.returncode == 1, result.stdout + result.stderr
    [audited] = json.loads(result.stdout)["files"]
    assert audited["problems"] == [], "search and page traffic is not a problem"
    found = [(v["where"], v["url"], v["rule"], v["message_index"]) for v in audited["violations"]]
    assert found == expected
    assert audited["transcripts"] == 2, "one per agent.run"
    tool_results = [v for v in audited["violations"] if v["where"] == "tool-result"]
    assert all(v["interaction"] is not None for v in tool_results), "named by the request"


@pytest.mark.parametrize("provider", ["anthropic", "openai", "openrouter"])
def test_evidence_of_the_cassette_lists_the_live_sources_per_turn(
    recorded: tuple[Path, dict[str, Path]], provider: str
) -> None:
    live, cassettes = recorded
    transcripts = live_transcripts(live, provider)
    expected = [[source.url for source in sources(transcript)] for transcript in transcripts]
    assert expected[0][:2] == [
        "https://docs.python.org/3/whatsnew/3.13.html",
        "https://realpython.com/python313-repl/",
    ]
    assert expected[1] == ["https://docs.python.org/3/tutorial/", "https://evil.example/python"]

    result = run("evidence", cassettes[provider], "--format", "json")
    assert result.returncode == 0, result.stdout + result.stderr
    [file] = json.loads(result.stdout)["files"]
    assert [[s["url"] for s in turn["sources"]] for turn in file["turns"]] == expected
    assert [turn["asked"] for turn in file["turns"]] == [
        "What changed in the Python 3.13 REPL?",
        "Where is the tutorial?",
    ]
    assert all(len(turn["interactions"]) == 2 for turn in file["turns"]), "call, then answer"


@pytest.mark.parametrize("provider", ["anthropic", "openai", "openrouter"])
def test_evidence_of_a_saved_transcript_includes_the_tool_results(
    recorded: tuple[Path, dict[str, Path]], provider: str
) -> None:
    live, _ = recorded
    path = live / provider / "run-0.jsonl"
    [transcript] = live_transcripts(live, provider)[:1]
    result = run("evidence", path, "--format", "json")
    assert result.returncode == 0, result.stdout + result.stderr
    [file] = json.loads(result.stdout)["files"]
    [turn] = file["turns"]
    assert [s["url"] for s in turn["sources"]] == [s.url for s in sources(transcript)]
    assert turn["message_index"] == 0
    assert turn["last_message_index"] == len(transcript.messages) - 1
    assert turn["interaction"] is None


def test_evidence_turns_run_from_prompt_to_prompt_in_a_saved_transcript(tmp_path: Path) -> None:
    from agentloop.transcript import (
        Message,
        TextPart,
        ToolCallPart,
        ToolResultPart,
        to_jsonl,
    )

    from agentloop_tools.web import SearchHit
    from agentloop_tools.web._search._render import render_results
    from agentloop_tools.web._transcript._fetch_format import header

    results = render_results(
        [SearchHit(title="Whatsnew", url="https://docs.python.org/3/whatsnew/", snippet="")]
    )
    page = header("https://docs.python.org/3/tutorial/", [], "Tutorial", []) + "\n\nText."

    def say(role: Literal["user", "assistant"], *parts: Any) -> Message:
        return Message(role=role, content=parts)

    messages = [
        say("user", TextPart(text="First?")),
        say("assistant", ToolCallPart(id="c1", tool_name="web_search", arguments={})),
        say("user", ToolResultPart(call_id="c1", tool_name="web_search", content=results)),
        say("assistant", TextPart(text="One.")),
        say("user", TextPart(text="Second?")),
        say("assistant", ToolCallPart(id="c2", tool_name="web_fetch", arguments={})),
        say("user", ToolResultPart(call_id="c2", tool_name="web_fetch", content=page)),
        say("assistant", TextPart(text="Two.")),
    ]
    path = tmp_path / "run.jsonl"
    path.write_text(to_jsonl(messages))
    result = run("evidence", path, "--format", "json")
    assert result.returncode == 0, result.stderr
    [file] = json.loads(result.stdout)["files"]
    whatsnew, tutorial = (
        "https://docs.python.org/3/whatsnew/",
        "https://docs.python.org/3/tutorial/",
    )
    turns = [
        (turn["asked"], turn["message_index"], turn["last_message_index"], turn["sources"])
        for turn in file["turns"]
    ]
    assert turns == [
        ("First?", 0, 3, [{"url": whatsnew, "title": "Whatsnew", "urls": [whatsnew]}]),
        ("Second?", 4, 7, [{"url": tutorial, "title": "Tutorial", "urls": [tutorial]}]),
    ]
    table = run("evidence", path).stdout.splitlines()
    assert table[1:4] == [
        "  turn at message 0: First?",
        "    sources (1):",
        "      - https://docs.python.org/3/whatsnew/",
    ]


@pytest.mark.parametrize("provider", ["anthropic", "openai", "openrouter"])
def test_evidence_shows_the_links_assert_cited_and_the_report_count(
    recorded: tuple[Path, dict[str, Path]], provider: str, tmp_path: Path
) -> None:
    from agentloop_tools.testing import assert_cited
    from agentloop_tools.web import links

    live, cassettes = recorded
    transcripts = live_transcripts(live, provider)
    expected = [[(link.url, link.consulted) for link in links(t)] for t in transcripts]
    assert expected == [
        [("https://docs.python.org/3/whatsnew/3.13.html", True)],
        [("https://docs.python.org/3/tutorial/", True), ("https://stackoverflow.com/q/1", False)],
    ]
    assert_cited(transcripts[0], "https://docs.python.org/3/whatsnew/3.13.html")

    result = run("evidence", cassettes[provider], "--format", "json")
    assert result.returncode == 0, result.stdout + result.stderr
    [file] = json.loads(result.stdout)["files"]
    shown = [[(link["url"], link["consulted"]) for link in turn["links"]] for turn in file["turns"]]
    assert shown == expected
    assert all(turn["citations"] == [] for turn in file["turns"]), "no provider citations"

    table = run("evidence", cassettes[provider]).stdout
    assert "      - https://docs.python.org/3/whatsnew/3.13.html [consulted]" in table
    assert "      - https://stackoverflow.com/q/1 [not consulted]" in table
    assert "    links (2, 1 to a page a tool returned):" in table

    page = tmp_path / "evidence.html"
    assert run("evidence", cassettes[provider], "--format", "html", "-o", page).returncode == 0
    assert page.read_text().count("[consulted]") == table.count("[consulted]")
