"""One evidence observer, several conversations at once: each is captured whole.

The plugin gives one observer to every agent of a test. Conversations that overlap
(threads, ``asyncio.to_thread`` tasks) must not overwrite each other's copy: a dropped
conversation is one the domain policy never audits.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from agentloop import Agent, NullObserver, Transcript, tool
from agentloop.transcript import Message, TextPart

from agentloop_tools.testing import (
    AgentloopEvidence,
    ScriptedProvider,
    anthropic_message,
    anthropic_search,
    anthropic_text,
)
from agentloop_tools.web import DomainPolicy, native_web_search
from tests.agents import ENV

WIKIPEDIA = "https://en.wikipedia.org/wiki/Python"
DOCS = "https://docs.python.org/3/"

type Run = Callable[[], Transcript]


def leaky() -> list[dict[str, Any]]:
    return [
        anthropic_message([
            anthropic_search("python", [DOCS, WIKIPEDIA]),
            anthropic_text(f"See {WIKIPEDIA} for history.", cite=[DOCS]),
        ])
    ]  # fmt: skip


def clean() -> list[dict[str, Any]]:
    return [anthropic_message([anthropic_search("docs", [DOCS]), anthropic_text("See the docs.")])]


def paused_leaky() -> list[dict[str, Any]]:
    return [
        anthropic_message([anthropic_search("first", [WIKIPEDIA])], stop_reason="pause_turn"),
        anthropic_message([anthropic_search("second", ["https://a.example/2"]),
                           anthropic_text("Done.", cite=["https://a.example/2"])]),
    ]  # fmt: skip


def paused_clean() -> list[dict[str, Any]]:
    return [
        anthropic_message([anthropic_search("third", [DOCS])], stop_reason="pause_turn"),
        anthropic_message([anthropic_text("Also done.", cite=[DOCS])]),
    ]


def meeting(script: list[dict[str, Any]], barrier: threading.Barrier) -> Any:
    """A scripted client whose every request waits until the other conversation's is sent too.

    The loop reports a request to its observer before sending it, so both conversations
    have started, and have each reported a request, before either gets an answer.
    """
    client = ScriptedProvider("anthropic", script).http_client()

    def wait(request: object) -> None:
        barrier.wait(timeout=10)

    client.event_hooks = {"request": [wait], "response": []}
    return client


def agent(observer: Any, client: Any, tools: Sequence[Any] = ()) -> Agent:
    return Agent.from_env(
        ENV["anthropic"], [native_web_search(), *tools], observer=observer, http_client=client
    )


def conversation(an_agent: Agent, prompt: str) -> Run:
    """Run ``prompt`` on ``an_agent``; the transcript the loop itself built."""

    def run() -> Transcript:
        transcript = Transcript()
        transcript.add_user_message(prompt)
        return an_agent.converse(transcript)

    return run


def in_threads(runs: Sequence[Run]) -> list[Transcript]:
    with ThreadPoolExecutor(len(runs)) as pool:
        futures = [pool.submit(run) for run in runs]
        return [future.result() for future in futures]


def in_asyncio_tasks(runs: Sequence[Run]) -> list[Transcript]:
    # agentloop has no async agent: an async test runs its agents with asyncio.to_thread.
    async def gathered() -> list[Transcript]:
        return list(await asyncio.gather(*(asyncio.to_thread(run) for run in runs)))

    return asyncio.run(gathered())


def by_prompt(transcripts: Sequence[Transcript]) -> dict[str, list[Message]]:
    found = {}
    for transcript in transcripts:
        [prompt] = transcript.messages[0].content
        assert isinstance(prompt, TextPart)
        found[prompt.text] = transcript.messages
    return found


def overlapping(
    observer: Any,
    scripts: Sequence[list[dict[str, Any]]],
    runner: Callable[[Sequence[Run]], list[Transcript]] = in_threads,
) -> list[Transcript]:
    """Run one conversation per script, all at once, each agent reporting to ``observer``."""
    barrier = threading.Barrier(len(scripts))
    runs = [
        conversation(agent(observer, meeting(script, barrier)), f"question {index}")
        for index, script in enumerate(scripts)
    ]
    return runner(runs)


@pytest.mark.parametrize("runner", [in_threads, in_asyncio_tasks])
def test_overlapping_conversations_are_each_captured_whole(
    runner: Callable[[Sequence[Run]], list[Transcript]],
) -> None:
    evidence = AgentloopEvidence()
    own = overlapping(evidence.observer, [leaky(), clean()], runner)
    assert len(evidence.transcripts) == 2
    assert by_prompt(evidence.transcripts) == by_prompt(own)
    prompts = list(by_prompt(evidence.transcripts))
    leaked = evidence.audit(DomainPolicy.block(["wikipedia.org"]))
    assert sorted((v.where, prompts[v.conversation]) for v in leaked) == [
        ("source", "question 0"),
        ("text", "question 0"),
    ]
    assert evidence.problems() == []


def test_overlapping_paused_turns_are_each_continued_in_their_own_message() -> None:
    evidence = AgentloopEvidence()
    own = overlapping(evidence.observer, [paused_leaky(), paused_clean()])
    captured = by_prompt(evidence.transcripts)
    assert captured == by_prompt(own)
    assert [[m.role for m in messages] for messages in captured.values()] == [
        ["user", "assistant"],
        ["user", "assistant"],
    ]
    assert evidence.problems() == []


def test_a_conversation_run_inside_another_ones_tool_is_captured_with_it() -> None:
    evidence = AgentloopEvidence()
    expert = agent(evidence.observer, ScriptedProvider("anthropic", leaky()).http_client())
    asked: list[Transcript] = []

    @tool(parameters={"type": "object", "properties": {"question": {"type": "string"}}})
    def ask_expert(question: str) -> str:
        """Ask the expert agent."""
        asked.append(conversation(expert, question)())
        return "The expert answered."

    calls_the_expert = {"type": "tool_use", "id": "toolu_expert", "name": "ask_expert",
                        "input": {"question": "history?"}}  # fmt: skip
    script = [
        anthropic_message([calls_the_expert], stop_reason="tool_use"),
        anthropic_message([anthropic_text("The expert says: see the history.")]),
    ]
    client = ScriptedProvider("anthropic", script).http_client()
    outer = conversation(agent(evidence.observer, client, [ask_expert]), "python?")()
    assert by_prompt(evidence.transcripts) == by_prompt([*asked, outer])
    assert evidence.problems() == []


def test_a_conversation_still_running_when_the_evidence_is_read_is_a_problem() -> None:
    evidence = AgentloopEvidence()
    sent, release = threading.Event(), threading.Event()
    client = ScriptedProvider("anthropic", leaky()).http_client()

    def hold(request: object) -> None:
        sent.set()
        release.wait(timeout=10)

    client.event_hooks = {"request": [hold], "response": []}
    worker = threading.Thread(target=conversation(agent(evidence.observer, client), "q"))
    worker.start()
    assert sent.wait(timeout=10)
    [problem] = evidence.problems()
    assert problem.startswith("agentloop-tools: 1 agent conversation(s) had not ended when")
    assert "Wait for every agent run to finish before the test returns." in problem
    release.set()
    worker.join(timeout=10)
    assert evidence.problems() == []
    assert len(evidence.transcripts) == 1


class Forwarding(NullObserver):
    """A user's observer that hands every event to other threads (an async log shipper, say).

    ``one_thread``: every event to the same worker thread, in order; otherwise each
    event to a thread of its own.
    """

    def __init__(self, inner: Any, *, one_thread: bool) -> None:
        self._inner = inner
        self._one_thread = one_thread
        self._events: queue.Queue[tuple[str, tuple[object, ...], threading.Event]] = queue.Queue()
        if one_thread:
            threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            name, args, done = self._events.get()
            getattr(self._inner, name)(*args)
            done.set()

    def _forward(self, name: str, *args: object) -> None:
        if self._one_thread:
            done = threading.Event()
            self._events.put((name, args, done))
            done.wait(timeout=10)
        else:
            thread = threading.Thread(target=getattr(self._inner, name), args=args)
            thread.start()
            thread.join(timeout=10)

    def on_conversation_start(self, context: Any) -> None:
        self._forward("on_conversation_start", context)

    def on_request(self, request: Any) -> None:
        self._forward("on_request", request)

    def on_response(self, response: Any) -> None:
        self._forward("on_response", response)

    def on_conversation_end(self, summary: Any) -> None:
        self._forward("on_conversation_end", summary)


def test_events_forwarded_to_another_thread_are_a_problem_not_a_gap() -> None:
    evidence = AgentloopEvidence()
    observer = Forwarding(evidence.observer, one_thread=False)
    conversation(agent(observer, ScriptedProvider("anthropic", leaky()).http_client()), "q")()
    problems = evidence.problems()
    assert problems[0] == (
        "agentloop-tools: the evidence observer received a model request in a thread or task "
        "where no conversation it saw start is open, so it cannot tell which conversation that "
        "belongs to and the evidence is incomplete. Give the observer to the agent itself "
        "(observer=agentloop_evidence.observer, alone or inside agentloop.MultiObserver), so "
        "agentloop calls it from the thread or task that runs each conversation; do not forward "
        "its events to another thread."
    )


def test_overlapping_events_forwarded_to_one_thread_are_a_problem_not_a_gap() -> None:
    evidence = AgentloopEvidence()
    overlapping(Forwarding(evidence.observer, one_thread=True), [leaky(), clean()])
    problems = evidence.problems()
    assert any("are interleaved" in problem for problem in problems), problems


OVERLAPPING_TEST = """
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from agentloop_tools.testing import (
    ScriptedProvider, anthropic_message, anthropic_search, anthropic_text,
)
from agentloop_tools.web import native_web_search

LEAKY = [anthropic_message([
    anthropic_search("python", ["https://docs.python.org/3/", "https://en.wikipedia.org/wiki/Python"]),
    anthropic_text("See https://en.wikipedia.org/wiki/Python for history."),
])]
CLEAN = [anthropic_message([anthropic_text("See the docs.")])]
BOTH_SENT = threading.Barrier(2)


def meeting(script):
    client = ScriptedProvider("anthropic", script).http_client()
    client.event_hooks = {"request": [lambda request: BOTH_SENT.wait(timeout=10)], "response": []}
    return client


@pytest.mark.domain_policy(block=["wikipedia.org"])
def test_two_agents_at_once(agentloop_agent):
    agents = [agentloop_agent([native_web_search()], provider="anthropic", http_client=meeting(s))
              for s in (LEAKY, CLEAN)]
    with ThreadPoolExecutor(2) as pool:
        answers = list(pool.map(lambda agent: agent.run("Tell me about Python"), agents))
    assert "wikipedia" in answers[0]
"""


def test_the_plugin_fails_a_leak_in_a_conversation_that_overlapped_another(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("LLM_PROVIDER", raising=False)
    pytester.makepyfile(test_agents=OVERLAPPING_TEST)
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "2 domain policy violations (DomainPolicy.block(['wikipedia.org'])):",
            "  - source   conversation *, message 1: https://en.wikipedia.org/wiki/Python  *",
            "  - text     conversation *, message 1: https://en.wikipedia.org/wiki/Python  *",
        ]
    )
    result.stdout.fnmatch_lines(["1 test(s) with agent evidence, 2 conversation(s); *"])
