"""The evidence record of one test: what its agents asked, spent, consulted and cited.

``EvidenceSummary`` is plain data, JSON-stable under a schema version, so a cassette can
keep it (its ``evidence:`` block) and a later reading can compare two of them. Every
counter is an ``int`` when known and ``None`` when the provider did not report it:
never a 0 standing in for "not reported".
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Literal

SCHEMA = 1
# The counters of a conversation and of a test (their sum), in the order shown.
COUNTERS = (
    "model_requests",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "searches",
    "fetches",
    "tool_calls",
    "refused_attempts",
)
type Verdict = Literal["pass", "fail", "not-audited"]
_VERDICTS = ("pass", "fail", "not-audited")
_MAX_ITEMS = 10_000  # a hostile stored record is read up to this many items per list


@dataclass(frozen=True, slots=True)
class HostedCall:
    """A call the provider ran (hosted search or fetch), as its blocks show it.

    Attributes:
        kind: ``search``; ``fetch`` (Anthropic web_fetch); or an OpenAI
            ``web_search_call`` action other than search, by its name
            (``open_page``, ``find_in_page``).
        target: the query of a search, the URL of a fetch-like call ("" if none).
    """

    kind: str
    target: str


@dataclass(frozen=True, slots=True)
class ToolCallRecord:
    """A client-side tool call: its name, arguments and outcome code.

    ``outcome`` is ``ok``, the error code of an error result (``blocked-by-policy``,
    ``http-error``...), ``error`` for an error result without a code, or
    ``no-result``. ``refused`` marks a call our tool refused before any request.
    ``tool`` is which of our tools it is (``web_search``, ``web_fetch``), whatever
    name the model called it by; None for any other tool.
    """

    name: str
    arguments: Mapping[str, Any]
    outcome: str
    refused: bool = False
    tool: str | None = None


@dataclass(frozen=True, slots=True)
class CitationRecord:
    """A citation in an answer: the page and the text it quotes."""

    url: str
    cited_text: str | None = None
    title: str | None = None


@dataclass(frozen=True, slots=True)
class LinkRecord:
    """A link written in an answer, and whether a tool returned its page."""

    url: str
    consulted: bool


@dataclass(frozen=True, slots=True)
class ConversationEvidence:
    """One conversation's record; counters are ``None`` when unknown.

    Attributes:
        index: the conversation's place among the test's (``evidence.transcripts``).
        model_requests: model-API requests made (each HTTP request, retries included).
        input_tokens, output_tokens, cache_read_tokens, cache_write_tokens: usage as
            the provider reported it, summed over the requests.
        searches, fetches: hosted searches and fetches: what the provider billed
            (Anthropic ``usage.server_tool_use``), else what its blocks show.
        hosted: each hosted call the blocks show (the queries and URLs).
        tool_calls: the client-side tool calls, in order.
        sources, citations, links, domains: what was consulted, cited, linked and
            reached (the hosts of sources and pages read).
        verdict: ``pass``/``fail`` under the test's policy, ``not-audited`` without one.
        violations: how many violations the policy found.
    """

    index: int = 0
    model_requests: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    searches: int | None = None
    fetches: int | None = None
    hosted: tuple[HostedCall, ...] = ()
    tool_calls: tuple[ToolCallRecord, ...] = ()
    sources: tuple[str, ...] = ()
    citations: tuple[CitationRecord, ...] = ()
    links: tuple[LinkRecord, ...] = ()
    domains: tuple[str, ...] = ()
    verdict: Verdict = "not-audited"
    violations: int = 0

    @property
    def queries(self) -> tuple[str, ...]:
        """The hosted searches' queries, in order."""
        return tuple(call.target for call in self.hosted if call.kind == "search")

    @property
    def fetched(self) -> tuple[str, ...]:
        """The URLs of hosted fetch-like calls, in order."""
        return tuple(call.target for call in self.hosted if call.kind != "search")

    @property
    def refused(self) -> tuple[ToolCallRecord, ...]:
        """The client-side calls refused before any request."""
        return tuple(call for call in self.tool_calls if call.refused)

    def counter(self, name: str) -> int | None:
        """A counter by name (one of ``COUNTERS``); None when unknown."""
        if name == "tool_calls":
            return len(self.tool_calls)
        if name == "refused_attempts":
            return len(self.refused)
        if name not in COUNTERS:
            raise ValueError(f"no counter {name!r}: use one of {', '.join(COUNTERS)}")
        value: int | None = getattr(self, name)
        return value


@dataclass(frozen=True, slots=True)
class EvidenceSummary:
    """The evidence record of one test; ``agentloop_evidence.summary()`` returns it.

    Per conversation (``conversations``) and per test (the sums: ``total(name)``, or
    the properties of the same names). A test's counter is unknown (``None``) when
    any of its conversations' is. ``notes`` say what the record may lack (a request
    that could not be placed in a conversation, a conversation still running).
    JSON-stable: ``to_json()`` / ``EvidenceSummary.from_json(text)``, with ``schema``.
    """

    conversations: tuple[ConversationEvidence, ...] = ()
    test: str | None = None
    policy: str | None = None
    notes: tuple[str, ...] = ()
    schema: int = SCHEMA
    attribution: str = field(default="observer")

    def total(self, name: str) -> int | None:
        """The test's total of one counter; None when any conversation's is unknown."""
        values = [conversation.counter(name) for conversation in self.conversations]
        if name in _UNPLACED_SENSITIVE and any(_UNPLACED in note for note in self.notes):
            return None  # a request no conversation holds: its usage is not in any sum
        if any(value is None for value in values):
            return None
        return sum(value for value in values if value is not None)

    @property
    def model_requests(self) -> int | None:
        return self.total("model_requests")

    @property
    def input_tokens(self) -> int | None:
        return self.total("input_tokens")

    @property
    def output_tokens(self) -> int | None:
        return self.total("output_tokens")

    @property
    def searches(self) -> int | None:
        return self.total("searches")

    @property
    def fetches(self) -> int | None:
        return self.total("fetches")

    @property
    def tool_calls(self) -> int | None:
        return self.total("tool_calls")

    @property
    def queries(self) -> tuple[str, ...]:
        """Every hosted search query of the test, conversation by conversation."""
        return tuple(query for c in self.conversations for query in c.queries)

    @property
    def verdict(self) -> Verdict:
        """``fail`` when any conversation fails, ``pass`` when audited and clean."""
        verdicts = {conversation.verdict for conversation in self.conversations}
        if "fail" in verdicts:
            return "fail"
        return "pass" if "pass" in verdicts else "not-audited"

    def totals(self) -> dict[str, int | None]:
        """Every counter's total, by name."""
        return {name: self.total(name) for name in COUNTERS}

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON-ready data (what a cassette's ``evidence:`` block holds)."""
        return {
            "schema": self.schema,
            "test": self.test,
            "policy": self.policy,
            "attribution": self.attribution,
            "verdict": self.verdict,
            "totals": self.totals(),
            "conversations": [_conversation_data(c) for c in self.conversations],
            "notes": list(self.notes),
        }

    def to_json(self) -> str:
        """The record as JSON text: the same record gives the same text."""
        return json.dumps(self.to_dict(), ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_json(cls, data: str | bytes | Mapping[str, Any]) -> EvidenceSummary:
        """A record from ``to_json()`` text or ``to_dict()`` data.

        Raises ValueError naming what is wrong: not a record, a schema not read here,
        or data nested too deep to read (a hostile record never ends in RecursionError).
        """
        try:
            return cls._from_data(data)
        except RecursionError:
            raise ValueError(
                "an evidence record nested too deeply to read; re-record the cassette"
            ) from None

    @classmethod
    def _from_data(cls, data: str | bytes | Mapping[str, Any]) -> EvidenceSummary:
        if isinstance(data, str | bytes):
            data = json.loads(data)
        if not isinstance(data, Mapping):
            raise ValueError("an evidence record is a JSON object")
        schema = data.get("schema")
        if not isinstance(schema, int) or isinstance(schema, bool) or not 1 <= schema <= SCHEMA:
            raise ValueError(
                f"evidence record schema {schema!r} is not one this agentloop-tools reads "
                f"(1 to {SCHEMA}): upgrade agentloop-tools, or re-record the cassette"
            )
        conversations = data.get("conversations") or []
        if not isinstance(conversations, list):
            raise ValueError("an evidence record's conversations are a list")
        return cls(
            conversations=tuple(_conversation_of(c) for c in conversations[:_MAX_ITEMS]),
            test=_optional_text(data.get("test")),
            policy=_optional_text(data.get("policy")),
            notes=tuple(str(note) for note in _list(data.get("notes"))),
            schema=schema,
            attribution=str(data.get("attribution") or "observer"),
        )


# The counters a conversation holds as fields (the rest are counted from its lists).
_STORED_COUNTERS = tuple(
    f.name for f in fields(ConversationEvidence) if f.name in COUNTERS and f.name != "tool_calls"
)
_UNPLACED = "could not be placed in a conversation"
_UNPLACED_SENSITIVE = frozenset(COUNTERS) - {"tool_calls", "refused_attempts"}


def unplaced_note(count: int) -> str:
    """The note for model requests the plugin saw outside every conversation."""
    return (
        f"{count} model request(s) {_UNPLACED} (made outside an agent conversation the "
        "evidence observer saw start): the test's usage totals are unknown. Give every "
        "agent observer=agentloop_evidence.observer (agentloop_agent does)."
    )


def _conversation_data(c: ConversationEvidence) -> dict[str, Any]:
    return {
        "index": c.index,
        "counters": {name: c.counter(name) for name in COUNTERS},
        "hosted": [{"kind": h.kind, "target": h.target} for h in c.hosted],
        "tool_calls": [
            {
                "name": t.name,
                "arguments": _plain(t.arguments),
                "outcome": t.outcome,
                "refused": t.refused,
                **({"tool": t.tool} if t.tool is not None else {}),
            }
            for t in c.tool_calls
        ],
        "sources": list(c.sources),
        "citations": [
            {"url": x.url, "cited_text": x.cited_text, "title": x.title} for x in c.citations
        ],
        "links": [{"url": link.url, "consulted": link.consulted} for link in c.links],
        "domains": list(c.domains),
        "verdict": c.verdict,
        "violations": c.violations,
    }


def _conversation_of(data: object) -> ConversationEvidence:
    if not isinstance(data, Mapping):
        raise ValueError("each conversation of an evidence record is a JSON object")
    stored = data.get("counters")
    stored = stored if isinstance(stored, Mapping) else {}
    counters = {name: _optional_count(stored.get(name)) for name in _STORED_COUNTERS}
    verdict = data.get("verdict")
    return ConversationEvidence(
        index=_optional_count(data.get("index")) or 0,
        **counters,
        hosted=tuple(
            HostedCall(str(h.get("kind", "")), str(h.get("target", "")))
            for h in _mappings(data.get("hosted"))
        ),
        tool_calls=tuple(
            ToolCallRecord(
                str(t.get("name", "")),
                dict(t["arguments"]) if isinstance(t.get("arguments"), Mapping) else {},
                str(t.get("outcome", "")),
                bool(t.get("refused", False)),
                _optional_text(t.get("tool")),
            )
            for t in _mappings(data.get("tool_calls"))
        ),
        sources=tuple(str(url) for url in _list(data.get("sources"))),
        citations=tuple(
            CitationRecord(
                str(x.get("url", "")),
                _optional_text(x.get("cited_text")),
                _optional_text(x.get("title")),
            )
            for x in _mappings(data.get("citations"))
        ),
        links=tuple(
            LinkRecord(str(x.get("url", "")), bool(x.get("consulted", False)))
            for x in _mappings(data.get("links"))
        ),
        domains=tuple(str(domain) for domain in _list(data.get("domains"))),
        verdict=verdict if verdict in _VERDICTS else "not-audited",
        violations=_optional_count(data.get("violations")) or 0,
    )


def _list(value: object) -> list[Any]:
    return value[:_MAX_ITEMS] if isinstance(value, list) else []


def _mappings(value: object) -> list[Mapping[str, Any]]:
    return [item for item in _list(value) if isinstance(item, Mapping)]


def _optional_count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _optional_text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _plain(value: Any) -> Any:
    """Tool arguments as JSON data (anything else by its text)."""
    try:
        return json.loads(json.dumps(value, ensure_ascii=False, default=str))
    except RecursionError:  # a hostile record's arguments: named, never a crash
        return _TOO_DEEP
    except (TypeError, ValueError):
        try:
            return repr(value)
        except RecursionError:
            return _TOO_DEEP


_TOO_DEEP = "<arguments nested too deeply to show>"
