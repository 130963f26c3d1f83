"""What a test's agents did: the conversations, captured by an observer."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from agentloop import Citation, NullObserver, Source, Transcript
from agentloop.provider import ModelRequest, ModelResponse, StopReason

from agentloop_tools.web import DomainPolicy, Violation, citations, sources

if TYPE_CHECKING:
    from agentloop import ConversationContext, ConversationSummary


class EvidenceObserver(NullObserver):
    """An agentloop observer that keeps a copy of every conversation it sees.

    Pass it to an agent you build yourself, ``Agent(..., observer=evidence.observer)``
    or ``Agent.from_env(env, tools, observer=evidence.observer)``; combine it with
    your own through ``agentloop.MultiObserver``. It rebuilds each transcript from
    the requests and responses exactly as the loop does (a paused turn is continued
    in the same message), and never raises into the loop.
    """

    def __init__(self, sink: list[Transcript]) -> None:
        self._sink = sink
        self._current: Transcript | None = None
        self._continuing = False

    def on_conversation_start(self, context: ConversationContext) -> None:
        self._current, self._continuing = None, False

    def on_request(self, request: ModelRequest) -> None:
        self._current = Transcript(messages=list(request.messages))

    def on_response(self, response: ModelResponse) -> None:
        if self._current is None or not response.content:
            return
        if self._continuing:
            self._current.extend_last_assistant(response.content, response.origin)
        else:
            self._current.add_assistant_message(response.content, response.origin)
        self._continuing = response.stop_reason is StopReason.PAUSED

    def on_conversation_end(self, summary: ConversationSummary) -> None:
        self._finish()

    def _finish(self) -> None:
        if self._current is not None:
            self._sink.append(self._current)
            self._current = None


class AgentloopEvidence:
    """Everything the agents of one test did; the value of the ``agentloop_evidence`` fixture.

    Read it with ``sources()``, ``citations()`` and ``audit(policy)``, or pass it to
    the ``assert_*`` helpers in place of a transcript. Build one yourself with
    ``AgentloopEvidence()`` outside pytest; the fixture builds it for you.
    """

    def __init__(self) -> None:
        self.transcripts: list[Transcript] = []
        self.observer = EvidenceObserver(self.transcripts)

    def __repr__(self) -> str:
        return f"<AgentloopEvidence: {len(self.transcripts)} conversation(s)>"

    def add(self, transcript: Transcript) -> None:
        """Add a transcript you obtained some other way (a saved JSONL, say)."""
        self.transcripts.append(transcript)

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
