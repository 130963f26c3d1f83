"""What a test's agents did: the conversations, captured by an observer."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from agentloop import Citation, NullObserver, Source, Transcript
from agentloop.provider import ModelRequest, ModelResponse, StopReason
from agentloop.transcript import ToolCallPart, ToolResultPart

from agentloop_tools.web import DomainPolicy, ToolCall, Violation, citations, sources, tool_calls

if TYPE_CHECKING:
    from agentloop import ConversationContext, ConversationSummary

    from agentloop_tools.testing._summary import EvidenceSummary

# A raw exchange as the plugin saw it: the request's URI and method, the response
# (vcrpy's dict form). Read only when a summary is asked for.
type Exchange = tuple[str, str, object]

_CONNECT = (
    "Give the observer to the agent itself (observer=agentloop_evidence.observer, alone or "
    "inside agentloop.MultiObserver), so agentloop calls it from the thread or task that "
    "runs each conversation; do not forward its events to another thread."
)


@dataclass(eq=False)
class _Conversation:
    """One conversation in progress, as far as the observer has seen it."""

    conversation_id: str
    transcript: Transcript | None = None
    continuing: bool = False  # the last assistant message is a paused, open turn
    tools_running: int = 0  # a conversation started meanwhile may be a tool's, nested
    requests: int = 0  # model requests the loop made (on_request)
    # The raw provider exchanges the plugin saw in this conversation's thread or task.
    exchanges: list[Exchange] = field(default_factory=list, repr=False)
    # What the caller's context held before: restored at the end (a nested conversation).
    token: Token[_Conversation | None] | None = field(default=None, repr=False)


class EvidenceObserver(NullObserver):
    """An agentloop observer that keeps a copy of every conversation it sees.

    Pass it to an agent you build yourself, ``Agent(..., observer=evidence.observer)``
    or ``Agent.from_env(env, tools, observer=evidence.observer)``; combine it with
    your own through ``agentloop.MultiObserver``. It rebuilds each transcript from
    the requests and responses exactly as the loop does (a paused turn is continued
    in the same message), and never raises into the loop.

    One observer serves any number of agents and conversations at once (threads,
    ``asyncio.to_thread`` tasks, an agent run inside another agent's tool): each
    transcript is added to the sink whole when its conversation ends. What it cannot
    place is kept in :meth:`problems`, never silently dropped.
    """

    def __init__(self, sink: list[Transcript]) -> None:
        self._sink = sink
        # agentloop's loop is synchronous and calls every hook from the thread running
        # the conversation, and a hook carries no conversation id: the conversation a
        # request or response belongs to is the one open in the caller's context.
        self._open: ContextVar[_Conversation | None] = ContextVar(
            f"agentloop_tools_evidence_{id(self):x}", default=None
        )
        self._lock = threading.Lock()  # the sink and the bookkeeping are shared by threads
        self._running: set[_Conversation] = set()
        self._problems: list[str] = []
        self._answers = 0
        # Per ended transcript (by id): the requests seen and the raw exchanges.
        self._traces: dict[int, tuple[int, list[Exchange]]] = {}
        self._unplaced: list[Exchange] = []
        self.exchanges_seen = False  # the plugin reports raw exchanges to this observer

    @property
    def answers(self) -> int:
        """How many model responses reached this observer (a paused turn's parts each count)."""
        return self._answers

    def problems(self) -> list[str]:
        """Why the captured evidence may lack part of what the agents did; empty if nothing.

        A conversation that has not ended yet, and a request or response that
        arrived outside any conversation this observer saw start, both show here.
        """
        with self._lock:
            problems = list(self._problems)
            running = len(self._running)
        if running:
            problems.append(
                f"agentloop-tools: {running} agent conversation(s) had not ended when the "
                "evidence was read (a thread not joined, a task not awaited?), so what they "
                "did is missing from the audit. Wait for every agent run to finish before "
                "the test returns."
            )
        return problems

    def on_conversation_start(self, context: ConversationContext) -> None:
        with self._failures_noted("conversation start"):
            outer = self._open.get()
            if outer is not None and not outer.tools_running:
                self._note(
                    f"agentloop-tools: conversation {context.conversation_id} started while "
                    f"conversation {outer.conversation_id} was open in the same thread or task "
                    "and not inside one of its tools: their events are interleaved, so the "
                    "evidence observer cannot tell which request or response belongs to "
                    f"which. {_CONNECT}"
                )
            conversation = _Conversation(context.conversation_id)
            conversation.token = self._open.set(conversation)
            with self._lock:
                self._running.add(conversation)

    def on_request(self, request: ModelRequest) -> None:
        with self._failures_noted("model request"):
            conversation = self._placed("model request")
            if conversation is not None:
                # The loop sends its whole transcript: the copy starts again from it.
                conversation.transcript = Transcript(messages=list(request.messages))
                conversation.requests += 1

    def on_response(self, response: ModelResponse) -> None:
        with self._failures_noted("model response"):
            with self._lock:
                self._answers += 1
            conversation = self._placed("model response")
            if conversation is None or conversation.transcript is None or not response.content:
                return
            if conversation.continuing:
                conversation.transcript.extend_last_assistant(response.content, response.origin)
            else:
                conversation.transcript.add_assistant_message(response.content, response.origin)
            conversation.continuing = response.stop_reason is StopReason.PAUSED

    def on_tool_start(self, call: ToolCallPart) -> None:
        conversation = self._open.get()  # None in a pool thread: no conversation nests there
        if conversation is not None:
            with self._lock:  # parallel tools may share it (threads that inherit a context)
                conversation.tools_running += 1

    def on_tool_end(self, call: ToolCallPart, result: ToolResultPart) -> None:
        conversation = self._open.get()
        if conversation is not None:
            with self._lock:
                conversation.tools_running = max(0, conversation.tools_running - 1)

    def on_conversation_end(self, summary: ConversationSummary) -> None:
        with self._failures_noted("conversation end"):
            conversation = self._placed("conversation end")
            if conversation is not None and conversation.conversation_id == summary.conversation_id:
                self._close(conversation)
                return
            if conversation is not None:
                self._note(
                    f"agentloop-tools: conversation {summary.conversation_id} ended while "
                    f"conversation {conversation.conversation_id} was the one open in the same "
                    "thread or task: their events were interleaved, so the evidence observer "
                    f"cannot tell which request or response belongs to which. {_CONNECT}"
                )
            self._forget(summary.conversation_id)

    def on_exchange(self, uri: str, method: str, response: object) -> None:
        """A raw HTTP exchange, as the pytest plugin recorded or replayed it.

        Placed in the conversation open in the caller's thread or task (the one whose
        request it answers); kept aside when none is. Only kept here: read when a
        summary is asked for.
        """
        self.exchanges_seen = True
        conversation = self._open.get()
        exchange = (uri, method, response)
        if conversation is None:
            with self._lock:
                self._unplaced.append(exchange)
            return
        conversation.exchanges.append(exchange)

    def trace(self, transcript: Transcript) -> tuple[int, list[Exchange]] | None:
        """The requests and raw exchanges seen in ``transcript``'s conversation (None:
        not a conversation this observer saw end)."""
        with self._lock:
            return self._traces.get(id(transcript))

    def unplaced(self) -> list[Exchange]:
        """Raw exchanges seen outside every conversation this observer saw start."""
        with self._lock:
            return list(self._unplaced)

    def _placed(self, event: str) -> _Conversation | None:
        """The conversation open in the caller's context; a problem noted if there is none."""
        conversation = self._open.get()
        if conversation is None:
            self._note(
                f"agentloop-tools: the evidence observer received a {event} in a thread or "
                "task where no conversation it saw start is open, so it cannot tell which "
                f"conversation that belongs to and the evidence is incomplete. {_CONNECT}"
            )
        return conversation

    def _close(self, conversation: _Conversation) -> None:
        token, conversation.token = conversation.token, None
        if token is not None:
            try:
                self._open.reset(token)
            except ValueError:  # ended in a copy of the context it started in
                previous = token.old_value
                self._open.set(None if previous is Token.MISSING else previous)
        with self._lock:
            self._running.discard(conversation)
            if conversation.transcript is not None:
                self._sink.append(conversation.transcript)
                trace = (conversation.requests, conversation.exchanges)
                self._traces[id(conversation.transcript)] = trace

    def _forget(self, conversation_id: str) -> None:
        """An ended conversation found in no context: not reported as still running too."""
        with self._lock:
            ended = [c for c in self._running if c.conversation_id == conversation_id]
            self._running.difference_update(ended[:1])

    def _note(self, problem: str) -> None:
        with self._lock:
            if problem not in self._problems:  # once, however many events it concerns
                self._problems.append(problem)

    @contextmanager
    def _failures_noted(self, event: str) -> Iterator[None]:
        # Never raise into the loop, and never lose a failure either: the audit hears of it.
        try:
            yield
        except Exception as error:  # reported through problems()
            self._note(
                f"agentloop-tools: the evidence observer failed on a {event} ({error!r}), so "
                "that conversation's evidence may be incomplete. This is a bug in "
                "agentloop-tools; please report it with the test that shows it."
            )


class AgentloopEvidence:
    """Everything the agents of one test did; the value of the ``agentloop_evidence`` fixture.

    Read it with ``sources()``, ``citations()``, ``tool_calls()`` and ``audit(policy)``,
    or pass it to the ``assert_*`` helpers in place of a transcript. Build one yourself with
    ``AgentloopEvidence()`` outside pytest; the fixture builds it for you.
    """

    def __init__(self) -> None:
        self.transcripts: list[Transcript] = []
        self.observer = EvidenceObserver(self.transcripts)
        # Filled in by the pytest plugin: the test's id and the policy it runs under.
        self.test: str | None = None
        self.policy: DomainPolicy | None = None
        self.policy_origin: str | None = None

    def __repr__(self) -> str:
        return f"<AgentloopEvidence: {len(self.transcripts)} conversation(s)>"

    def add(self, transcript: Transcript) -> None:
        """Add a transcript you obtained some other way (a saved JSONL, say)."""
        self.transcripts.append(transcript)

    def problems(self) -> list[str]:
        """Why :attr:`transcripts` may lack part of what the agents did; empty if nothing.

        Each is a sentence saying what happened and how to fix it: a conversation
        still running when this is read, or an event the observer could not place in
        a conversation. An audit of evidence with problems is incomplete.
        """
        return self.observer.problems()

    def sources(self) -> list[Source]:
        """Pages consulted across every conversation, de-duplicated by URL."""
        seen: set[str] = set()
        found = []
        for transcript in self.transcripts:
            for source in sources(transcript):
                if source.url not in seen:
                    seen.add(source.url)
                    found.append(source)
        return found

    def citations(self) -> list[Citation]:
        """Citations across every conversation, in order, duplicates kept."""
        return [citation for transcript in self.transcripts for citation in citations(transcript)]

    def tool_calls(self) -> list[ToolCall]:
        """Every tool call of every conversation, in order (``web.tool_calls`` of each).

        Each call's ``conversation`` is the index of its conversation in
        :attr:`transcripts`; hosted and client-side calls alike.
        """
        return [
            replace(call, conversation=index)
            for index, transcript in enumerate(self.transcripts)
            for call in tool_calls(transcript)
        ]

    def audit(self, policy: DomainPolicy) -> list[Violation]:
        """Every violation in every conversation, as ``policy.audit(transcript)`` gives them.

        Each violation's ``conversation`` is the index of its conversation in
        :attr:`transcripts` (``policy.audit`` of one transcript leaves it 0).
        """
        return [
            replace(violation, conversation=index)
            for index, transcript in enumerate(self.transcripts)
            for violation in policy.audit(transcript)
        ]

    def summary(self, policy: DomainPolicy | None = None) -> EvidenceSummary:
        """The test's evidence record (an ``EvidenceSummary``), computed now.

        Per conversation and in total: model requests, token usage and hosted
        searches and fetches as the provider reported them (read from its raw
        responses, which the pytest plugin sees for every request it records or
        replays; unknown, ``None``, outside it), hosted queries and URLs, client tool
        calls, sources, citations, links and the verdict under ``policy`` (by default
        the test's, in the plugin; none outside it).
        """
        from agentloop_tools.cassettes._reading._usage import model_api, read_exchange
        from agentloop_tools.testing._summary import unplaced_note
        from agentloop_tools.testing._summary_build import summarize

        judge = policy if policy is not None else self.policy
        exchanges: list[list[Any] | None] = []
        requests: list[int | None] = []
        for transcript in self.transcripts:
            trace = self.observer.trace(transcript)
            requests.append(trace[0] if trace is not None else None)
            if trace is None or not self.observer.exchanges_seen:
                exchanges.append(None)  # no raw answer seen: usage unknown
                continue
            exchanges.append(
                [
                    read_exchange(api, response)
                    for uri, method, response in trace[1]
                    if (api := model_api(uri, method)) is not None
                ]
            )
        notes = list(self.problems())
        unplaced = sum(1 for uri, method, _ in self.observer.unplaced() if model_api(uri, method))
        if unplaced:
            notes.append(unplaced_note(unplaced))
        return summarize(
            self.transcripts,
            exchanges,
            judge,
            requests=requests,
            test=self.test,
            policy_origin=self.policy_origin if policy is None else "given to summary()",
            notes=notes,
            attribution="plugin" if self.observer.exchanges_seen else "observer",
        )
